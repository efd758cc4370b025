"""Record PyTorch's 20-step AdamW loss traces of the fixtures in fp32 and under
torch.autocast('cpu', dtype=torch.bfloat16), for test/lit/memory/precision-pytorch.test.

Run from the repository root with Debian's python (torch 1.13 CPU):

    /usr/bin/python3 test/training/make_precision_references.py

It reuses make_training_references.py's models, weights (loaded from the ONNX fixtures), data
files (<model>.data.npz, read, not rewritten), micro-batch order, loss and AdamW configuration,
so the files that script writes stay as they are. It writes
test/training/data/precision.reference.npz: `fp32/<model>` and `autocast_bf16/<model>`, the loss
of each of the STEPS optimizer steps. Seeds are fixed and torch runs single-threaded, so re-running
reproduces the file.
"""

import os

import numpy as np
import torch

import make_training_references as ref

STEPS = 20
MODELS = ["mlp", "resnet_bn", "gpt2", "bert", "llama"]


def losses(model, data, autocast):
    module = ref.fresh_module(model)
    optimizer = ref.make_optimizer("adamw", module.parameters())
    trace = []
    for step in range(STEPS):
        optimizer.zero_grad()
        inputs, labels = ref.micro_batch(data, model, step)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = ref.loss_of(module, inputs, labels)
        loss.backward()
        optimizer.step()
        trace.append(loss.item())
    return np.array(trace, np.float32)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    models = {m.name: m for m in ref.MODELS}
    arrays = {}
    for name in MODELS:
        model = models[name]
        with np.load(os.path.join(ref.DATA_DIR, name + ".data.npz")) as archive:
            data = {key: archive[key] for key in archive.files}
        arrays[f"fp32/{name}"] = losses(model, data, autocast=False)
        arrays[f"autocast_bf16/{name}"] = losses(model, data, autocast=True)
        deviation = np.abs(arrays[f"autocast_bf16/{name}"] - arrays[f"fp32/{name}"]).max()
        print(f"{name}: autocast deviates from fp32 by at most {deviation:.3g}")
    ref.save_npz(os.path.join(ref.DATA_DIR, "precision.reference.npz"), arrays)


if __name__ == "__main__":
    main()
