"""Records PyTorch's training of the gpt2 fixture on a flat token file, for the token-stream test
(test/lit/runtime/token-stream.test): nanoGPT's train.bin layout (little-endian uint16 ids), and
the windows memc's training program draws from it (runtime/train/TokenStream.h): row r of
micro-batch i starts at splitmix64(splitmix64(seed) ^ (i * batch + r)) mod (tokens - T), its
input is the T tokens from there and its labels the T tokens one further.

After the steps, the loss on a held-out token file (--eval-data with --tokens) in eval mode, over
its consecutive windows: window w's input is the T tokens from w * T, its labels one further.

Writes test/training/data/tokens.bin, tokens.val.bin and tokens.reference.json (the seed, the
steps, memc's flags, the losses and the eval loss). Run with Debian's python: /usr/bin/python3 test/training/make_token_reference.py
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_training_references as references  # noqa: E402

MASK = (1 << 64) - 1
SEED = 7
STEPS = 5


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def window_start(seed, index, batch, row, length, tokens):
    return splitmix64(splitmix64(seed) ^ ((index * batch + row) & MASK)) % (tokens - length)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = next(m for m in references.MODELS if m.name == "gpt2")
    batch, length = model.input_shape
    stream = np.random.default_rng(23).integers(0, model.vocab, 4000).astype(np.uint16)
    stream.tofile(os.path.join(references.DATA_DIR, "tokens.bin"))
    ids = torch.from_numpy(stream.astype(np.int64))

    module = references.fresh_module(model)
    optimizer = references.make_optimizer("adamw", module.parameters())
    losses = []
    for step in range(STEPS):
        starts = [window_start(SEED, step, batch, row, length, len(stream)) for row in range(batch)]
        inputs = torch.stack([ids[s:s + length] for s in starts])
        labels = torch.stack([ids[s + 1:s + length + 1] for s in starts])
        optimizer.zero_grad()
        loss = references.loss_of(module, inputs, labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    # Held-out windows: a whole number of micro-batches (memc wraps a partial last one).
    val = np.random.default_rng(29).integers(0, model.vocab, 3 * batch * length + 1)
    val.astype(np.uint16).tofile(os.path.join(references.DATA_DIR, "tokens.val.bin"))
    val_ids = torch.from_numpy(val.astype(np.int64))
    module.eval()
    with torch.no_grad():
        windows = len(val) // length
        eval_losses = []
        for first in range(0, windows, batch):
            starts = [w * length for w in range(first, first + batch)]
            inputs = torch.stack([val_ids[s:s + length] for s in starts])
            labels = torch.stack([val_ids[s + 1:s + length + 1] for s in starts])
            eval_losses.append(references.loss_of(module, inputs, labels).item())
    reference = {"seed": SEED, "steps": STEPS, "flags": references.memc_flags(model, "adamw"),
                 "losses": losses, "eval_loss": sum(eval_losses) / len(eval_losses)}
    with open(os.path.join(references.DATA_DIR, "tokens.reference.json"), "w") as f:
        json.dump(reference, f, indent=1)
        f.write("\n")
    print("losses", " ".join(f"{x:.6f}" for x in losses))


if __name__ == "__main__":
    main()
