"""Writes the README demo's model and data: a character-level GPT (the GPT-2 fixture's
architecture at a demo size) exported to ONNX, and training windows of corpus.txt.

Run with Debian's torch: /usr/bin/python3 tools/demo/make_chargpt.py
Outputs (committed): chargpt.onnx, chargpt.data.npz (input_ids and labels [N, T], the labels
the inputs shifted by one character).
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "test", "fixtures"))
import export_fixtures as fixtures  # noqa: E402

SEQ, BATCH, DIM, HEADS, SAMPLES = 64, 16, 96, 4, 512


def main():
    text = open(os.path.join(HERE, "corpus.txt"), encoding="utf-8").read()
    vocab = sorted(set(text))
    index = {c: i for i, c in enumerate(vocab)}
    ids = np.array([index[c] for c in text], dtype=np.int64)
    fixtures.DIM, fixtures.SEQ, fixtures.HEADS, fixtures.VOCAB = DIM, SEQ, HEADS, len(vocab)
    torch.manual_seed(0)
    model = fixtures.GPT2().eval()
    with torch.no_grad():  # GPT-2's initialization scale, so the untrained loss is ~log(vocab)
        for name, parameter in model.named_parameters():
            if parameter.dim() > 1:
                parameter.normal_(0.0, 0.02)
    example = torch.zeros(BATCH, SEQ, dtype=torch.long)
    torch.onnx.export(model, example, os.path.join(HERE, "chargpt.onnx"),
                      input_names=["input_ids"], output_names=["logits"], opset_version=17,
                      do_constant_folding=False)
    rng = np.random.RandomState(0)
    starts = rng.randint(0, len(ids) - SEQ - 1, size=SAMPLES)
    inputs = np.stack([ids[s:s + SEQ] for s in starts])
    labels = np.stack([ids[s + 1:s + SEQ + 1] for s in starts])
    np.savez(os.path.join(HERE, "chargpt.data.npz"), input_ids=inputs, labels=labels)
    print(f"vocabulary {len(vocab)} characters, {SAMPLES} windows of {SEQ}")


if __name__ == "__main__":
    main()
