"""Records PyTorch's held-out loss of the helper_cnn fixture while it trains, for the --eval-data
test (test/lit/runtime/eval-data.test): 5 AdamW steps as make_training_references.py trains it
(micro-batch i % 3 at step i + 1; the conv bias frozen), and after steps 2, 4 and 5 the loss over every sample of
helper_cnn.data.npz in eval mode (module.eval(): BatchNorm on its running statistics), the mean
over its three micro-batches as memc's evaluation takes them.

Writes test/training/data/eval.reference.json. Run with Debian's python:
/usr/bin/python3 test/training/make_eval_reference.py
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_training_references as references  # noqa: E402

EVAL_EVERY = 2
STEPS = 5


def main():
    torch.set_num_threads(1)
    model = next(m for m in references.MODELS if m.name == "helper_cnn")
    data = dict(np.load(os.path.join(references.DATA_DIR, "helper_cnn.data.npz")))
    module = references.fresh_module(model)
    # The conv's bias before BatchNorm has a gradient of rounding noise (the norm cancels it),
    # which AdamW turns into steps of about lr in each implementation's own direction; in eval
    # mode it no longer cancels. Frozen (memc: --freeze 0.bias), the comparison is exact.
    module[0].bias.requires_grad_(False)
    optimizer = references.make_optimizer(
        "adamw", [p for p in module.parameters() if p.requires_grad], module)
    micro_batches = len(data["labels"]) // model.input_shape[0]
    evaluations = {}
    for step in range(1, STEPS + 1):
        module.train()
        inputs, labels = references.micro_batch(data, model, step - 1)
        optimizer.zero_grad()
        references.loss_of(module, inputs, labels).backward()
        optimizer.step()
        if step % EVAL_EVERY == 0 or step == STEPS:
            module.eval()
            with torch.no_grad():
                losses = [references.loss_of(module, *references.micro_batch(data, model, i)).item()
                          for i in range(micro_batches)]
            evaluations[str(step)] = sum(losses) / len(losses)
    with open(os.path.join(references.DATA_DIR, "eval.reference.json"), "w") as f:
        json.dump({"steps": STEPS, "eval_every": EVAL_EVERY, "freeze": ["0.bias"],
                   "eval_loss": evaluations}, f, indent=1)
        f.write("\n")
    print(evaluations)


if __name__ == "__main__":
    main()
