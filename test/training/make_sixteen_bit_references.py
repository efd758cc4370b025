"""Record PyTorch's training of 16-bit models with fp32 master weights for memc-training-tests.

Run from the repository root with Debian's python (torch 1.13 CPU, onnx 1.12):

    /usr/bin/python3 test/training/make_sixteen_bit_references.py

It writes two fixtures, the same small MLP (Linear-ReLU-Linear-ReLU-Linear) in 16 bits:

  * ../fixtures/mlp_bf16.onnx: exported by torch.onnx.export from module.bfloat16();
  * ../fixtures/mlp_f16.onnx: torch 1.13 cannot export module.half() on the CPU (its tracing
    run fails: "addmm_impl_cpu_" not implemented for 'Half'), so this is the float export with
    its initializers and its graph's types converted to FLOAT16 with the onnx python API.

and in data/ what make_training_references.py writes for its models (same layout, so
TrainingTest reads them alike): <model>.data.npz (bf16 inputs as uint16 bits, numpy having no
bfloat16; f16 as float16), <model>.reference.npz and sixteen_bit_cases.json. It leaves the
other models' files alone.

The reference is mixed-precision training with fp32 master weights, written here: the
optimizer (torch's AdamW) holds f32 parameters; each step computes the loss on a 16-bit copy of
them, F.cross_entropy on the logits in f32, and hands the 16-bit gradients to the optimizer as
f32. bf16 runs on torch's own bf16 CPU kernels. f16 has no CPU matmul in torch 1.13, so each f16
layer computes in f32 and rounds its result to f16 (matmul, then the bias add, as ONNX's Gemm
is matmul + add in memc), which is how memc's CPU kernels define 16-bit ops.

Tolerances. 16-bit rounding moves the gradients, losses and updates; how far is measured by
training the same f32 master weights with every op in f32. Each tolerance is DEVIATION_MULTIPLE
times that deviation (at least the fp32 cases' 1e-4 for gradients and losses and 5e-4 for
updates): two 16-bit computations that each deviate from f32 by d (memc's Gemm rounds after
the matmul and after the bias add, torch's bf16 addmm once) differ by up to about sqrt(2) d.
"""

import os
import sys
import json
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_training_references as references  # noqa: E402

DTYPES = {"mlp_bf16": torch.bfloat16, "mlp_f16": torch.float16}
INPUT_SHAPE = (4, 16)  # one micro-batch
CLASSES = 10
CONFIG = "adamw"
DEVIATION_MULTIPLE = 2


def make_module():
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, CLASSES))


def to_float16_model(model):
    """The float export with FLOAT16 initializers, inputs, outputs and value types."""
    for initializer in model.graph.initializer:
        values = numpy_helper.to_array(initializer).astype(np.float16)
        initializer.CopyFrom(numpy_helper.from_array(values, initializer.name))
    for info in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        if info.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            info.type.tensor_type.elem_type = onnx.TensorProto.FLOAT16
    return model


def export(name, module, dtype):
    path = os.path.join(references.FIXTURES_DIR, name + ".onnx")
    example = torch.zeros(INPUT_SHAPE)
    export_module = module.to(dtype) if dtype == torch.bfloat16 else module
    torch.onnx.export(export_module, (example.to(dtype) if dtype == torch.bfloat16 else example,),
                      path, opset_version=17, do_constant_folding=False,
                      input_names=["input"], output_names=["logits"])
    model = onnx.load(path)
    if dtype == torch.float16:
        model = to_float16_model(model)
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def linears(master):
    return [(master[f"{i}.weight"], master[f"{i}.bias"]) for i in (0, 2, 4)]


def logits_of(master, inputs, dtype):
    """The MLP on `dtype` copies of the f32 master weights (differentiable back to them); dtype
    float32 computes everything in f32."""
    h = inputs
    layers = linears(master)
    for index, (weight, bias) in enumerate(layers):
        if dtype == torch.float16:
            # f32 compute, f16 storage after the matmul and after the bias add.
            product = (h.float() @ weight.half().float().t()).half()
            h = (product.float() + bias.half().float()).half()
        else:
            h = F.linear(h, weight.to(dtype), bias.to(dtype))
        if index + 1 < len(layers):
            h = torch.relu(h.float()).to(h.dtype)  # exact; torch 1.13 has no CPU half relu
    return h.float()


def micro_batch(data, index, dtype):
    inputs, labels = references.micro_batch(data, MODEL_VIEW, index)
    return inputs.to(dtype), labels


class ModelView:
    """What make_training_references.micro_batch reads of a model."""
    input_name = "input"
    input_shape = INPUT_SHAPE


MODEL_VIEW = ModelView()


def gradients(master, data, dtype):
    master = {name: p.detach().clone().requires_grad_() for name, p in master.items()}
    inputs, labels = micro_batch(data, 0, dtype)
    F.cross_entropy(logits_of(master, inputs, dtype), labels).backward()
    return {name: p.grad.numpy().copy() for name, p in master.items()}


def train(master, data, dtype):
    master = {name: p.detach().clone().requires_grad_() for name, p in master.items()}
    initial = {name: p.detach().clone() for name, p in master.items()}
    optimizer = references.make_optimizer(CONFIG, list(master.values()))
    losses = []
    for step in range(references.STEPS):
        optimizer.zero_grad()
        inputs, labels = micro_batch(data, step, dtype)
        loss = F.cross_entropy(logits_of(master, inputs, dtype), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    updates = {name: (p.detach() - initial[name]).numpy() for name, p in master.items()}
    return np.array(losses, np.float32), updates


def deviation_tolerances(sixteen_bit, float32, floor):
    def tolerance(name, value):
        deviation = references.relative_error(value, float32[name])
        return float(f"{max(floor, DEVIATION_MULTIPLE * deviation):.2g}")
    return {name: tolerance(name, value) for name, value in sixteen_bit.items()}


def stored_data(data, dtype):
    """The data set as the program's inputs take it: bf16 as its uint16 bits."""
    inputs = torch.from_numpy(data["input"]).to(dtype)
    bits = inputs.view(torch.int16).numpy().view(np.uint16) if dtype == torch.bfloat16 \
        else inputs.numpy()
    return {"input": bits, "labels": data["labels"]}


def main():
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    cases = []
    for seed, (name, dtype) in enumerate(DTYPES.items()):
        torch.manual_seed(100 + seed)
        module = make_module()
        export(name, module, dtype)
        # The master weights start from the 16-bit initializers, widened exactly.
        master = {key: torch.from_numpy(value.astype(np.float32))
                  for key, value in references.onnx_values(
                      os.path.join(references.FIXTURES_DIR, name + ".onnx")).items()}
        rng = np.random.default_rng(2000 + seed)
        count = INPUT_SHAPE[0] * references.MICRO_BATCHES
        raw = {"input": rng.standard_normal((count, INPUT_SHAPE[1])).astype(np.float32),
               "labels": rng.integers(0, CLASSES, (count,), dtype=np.int64)}
        # Both runs read the inputs rounded to the model's type, as memc does.
        data = {"input": torch.from_numpy(raw["input"]).to(dtype).float().numpy(),
                "labels": raw["labels"]}
        references.save_npz(os.path.join(references.DATA_DIR, name + ".data.npz"),
                            stored_data(raw, dtype))
        grads = gradients(master, data, dtype)
        grads32 = gradients(master, data, torch.float32)
        losses, updates = train(master, data, dtype)
        losses32, updates32 = train(master, data, torch.float32)
        reference = {f"grad/{key}": value for key, value in grads.items()}
        reference.update({f"initial/{key}": value.numpy() for key, value in master.items()})
        reference[f"losses/{CONFIG}"] = losses
        reference.update({f"update/{CONFIG}/{key}": value for key, value in updates.items()})
        references.save_npz(os.path.join(references.DATA_DIR, name + ".reference.npz"),
                            reference)
        loss_deviation = float(np.max(np.abs(losses - losses32) / np.abs(losses32)))
        cases.append({
            "name": f"{name}_{CONFIG}", "model": name, "config": CONFIG,
            "steps": references.STEPS,
            "flags": ["--loss", "cross_entropy", "--optimizer", "adamw", "--lr", "0.001"],
            "update_tolerance": references.UPDATE_TOLERANCE,
            "update_tolerances": deviation_tolerances(updates, updates32,
                                                      references.UPDATE_TOLERANCE),
            "gradient_tolerances": deviation_tolerances(grads, grads32,
                                                        references.GRADIENT_TOLERANCE),
            "loss_tolerance": float(f"{max(1e-4, DEVIATION_MULTIPLE * loss_deviation):.2g}"),
        })
        print(f"{name}: losses {' '.join(f'{x:.6f}' for x in losses)}; "
              f"tolerances {cases[-1]}")
    with open(os.path.join(references.DATA_DIR, "sixteen_bit_cases.json"), "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
