"""Build the model, data and reference of loss-scale-gradscaler.test: memc's --precision fp16
loss scaling against torch.cuda.amp.GradScaler's algorithm.

Run from the repository root with Debian's python (torch 1.13 CPU, onnx 1.12):

    /usr/bin/python3 test/training/make_loss_scale_reference.py

The model is one product, logits = x @ w, trained with cross_entropy and AdamW on one batch of
large inputs, so that its fp16 gradients overflow while the scale is high: the weight's gradient
times the scale passes fp16's largest finite value at 2^15 and above and fits at 2^14. torch
1.13 has no fp16 autocast on the CPU, so the reference trains in f32 and decides each step's
found_inf as an fp16 backward does: a gradient tensor the fp16 backward holds (the logits' and
the weight's) overflows when its largest magnitude times the scale rounds past 65504. Every step
is checked to be far from that boundary (MARGIN), so fp16 rounding cannot flip a decision.
The scale then follows GradScaler.update (written out below: torch's CPU GradScaler is disabled
without CUDA) and a skipped step leaves the weight, AdamW's moments and its step count as they
are (optimizer.step is not called).

It writes test/fixtures/loss_scale_overflow.onnx and, in test/training/data/,
loss_scale.data.npz (the batch) and loss_scale.reference.npz: `loss_scale`, `skipped` and
`loss` for each of the STEPS steps.
"""

import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

import make_training_references as ref

STEPS = 30
WINDOW = 4  # --loss-scale-window of the test
INITIAL_SCALE = 2.0 ** 16
LR = 1e-3
FP16_OVERFLOW = 65520.0  # the smallest magnitude that rounds to inf in fp16
MARGIN = 0.1  # every step's largest scaled gradient is this far (relatively) from FP16_OVERFLOW
BATCH, FEATURES, CLASSES = 4, 8, 4
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def make_model(weight):
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["logits"])],
        "loss_scale_overflow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, FEATURES])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [BATCH, CLASSES])],
        [numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="make_loss_scale_reference.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


class GradScalerAlgorithm:
    """torch.cuda.amp.GradScaler's scale bookkeeping (_amp_update_scale_), growth factor 2,
    backoff 0.5."""

    def __init__(self, init_scale, growth_interval):
        self.scale = init_scale
        self.growth_interval = growth_interval
        self.growth_tracker = 0

    def update(self, found_inf):
        if found_inf:
            self.scale *= 0.5
            self.growth_tracker = 0
            return
        self.growth_tracker += 1
        if self.growth_tracker == self.growth_interval:
            self.scale *= 2.0
            self.growth_tracker = 0


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    weight = (torch.randn(FEATURES, CLASSES) * 0.05).numpy().astype(np.float32)
    x = (torch.randn(BATCH, FEATURES) * 4.0).numpy().astype(np.float32)
    labels = np.arange(BATCH, dtype=np.int64) % CLASSES
    w = torch.tensor(weight, requires_grad=True)
    optimizer = torch.optim.AdamW([w], lr=LR)
    scaler = GradScalerAlgorithm(INITIAL_SCALE, WINDOW)
    trace = {"loss_scale": [], "skipped": [], "loss": []}
    for step in range(STEPS):
        optimizer.zero_grad()
        logits = torch.tensor(x) @ w
        logits.retain_grad()
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor(labels))
        loss.backward()
        largest = max(logits.grad.abs().max().item(), w.grad.abs().max().item())
        ratio = largest * scaler.scale / FP16_OVERFLOW
        assert abs(ratio - 1) > MARGIN, f"step {step + 1}: scaled gradient {ratio:.3f}x the limit"
        found_inf = ratio >= 1
        trace["loss_scale"].append(scaler.scale)
        trace["skipped"].append(found_inf)
        trace["loss"].append(loss.item())
        if not found_inf:
            optimizer.step()
        scaler.update(found_inf)
        print(f"step {step + 1}: loss {loss.item():.6f} scale {trace['loss_scale'][-1]:g} "
              f"ratio {ratio:.3f}{' skipped' if found_inf else ''}")
    onnx.save(make_model(weight), os.path.join(ROOT, "test", "fixtures", "loss_scale_overflow.onnx"))
    ref.save_npz(os.path.join(ref.DATA_DIR, "loss_scale.data.npz"), {"x": x, "labels": labels})
    ref.save_npz(os.path.join(ref.DATA_DIR, "loss_scale.reference.npz"),
                 {"loss_scale": np.array(trace["loss_scale"], np.float32),
                  "skipped": np.array(trace["skipped"], np.bool_),
                  "loss": np.array(trace["loss"], np.float32)})


if __name__ == "__main__":
    main()
