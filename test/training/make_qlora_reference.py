"""A PyTorch reference of QLoRA on the llama fixture, for lit runtime/qlora.test.

Run from the repository root with Debian's python (torch 1.13 CPU, onnx 1.12):

    /usr/bin/python3 test/training/make_qlora_reference.py

The published algorithm, written from the papers, not from memc: every frozen nn.Linear weight
of the model except the LM head is quantized to NF4 (test/kernels/make_nf4.py: blocks of 64,
with or without double quantization of the absmax) and replaced by its dequantized values;
each targeted projection gets PEFT's LoRA path, y = x W^T + (alpha / r) x A^T B^T, with A
kaiming-uniform (bound 1/sqrt(in); drawn as memc draws it, so both start from the same
values: splitmix64 keyed by the seed and FNV-1a of the parameter's name) and B zeros, the only
trained tensors. For each configuration it records the first micro-batch's loss and the
gradients of every adapter (named as memc's --dump-grads names them) in
test/training/data/qlora.reference.npz; memc's must match within the test's tolerances.

With --check-peft DIR it instead loads DIR/adapter_model.safetensors (memc's --save-adapter)
into a model whose adapters carry PEFT's module names (base_model.model.<module>.lora_A /
lora_B), with load_state_dict(strict=True), and prints the adapted modules' count.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "kernels"))
import make_nf4 as nf4  # noqa: E402
import make_training_references as ref  # noqa: E402

RANK, ALPHA, SEED = 4, 8.0, 0
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
MASK = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
    return z ^ (z >> 31)


def kaiming_uniform(name, rank, fan_in, seed=SEED):
    h = 0xcbf29ce484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001b3) & MASK
    key = mix64(seed ^ h)
    values = np.empty(rank * fan_in, dtype=np.float32)
    for i in range(values.size):
        bits = mix64((key + (i + 1) * 0x9e3779b97f4a7c15) & MASK)
        uniform = (bits >> 11) * 2.0 ** -53
        values[i] = np.float32((2.0 * uniform - 1.0) / math.sqrt(fan_in))
    return values.reshape(rank, fan_in)


class LoraLinear(nn.Module):
    """PEFT's lora.Linear without dropout: base(x) + scaling * lora_B(lora_A(x))."""

    def __init__(self, base, module_name):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, RANK, bias=False)
        self.lora_B = nn.Linear(RANK, base.out_features, bias=False)
        with torch.no_grad():
            self.lora_A.weight.copy_(torch.from_numpy(
                kaiming_uniform(module_name + ".lora_A.weight", RANK, base.in_features)))
            self.lora_B.weight.zero_()
        self.scaling = ALPHA / RANK

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


def adapted_model(double_quantization, quantize=True):
    model = [m for m in ref.MODELS if m.name == "llama"][0]
    module = ref.fresh_module(model)
    for p in module.parameters():
        p.requires_grad_(False)
    adapters = {}
    for name, linear in list(module.named_modules()):
        if not isinstance(linear, nn.Linear):
            continue
        if name != "lm_head" and quantize:
            weight = linear.weight.detach().numpy().reshape(-1)
            packed, absmax = nf4.quantize(weight)
            if double_quantization:
                absmax = nf4.dequantize_absmax(*nf4.quantize_absmax(absmax))
            restored = nf4.dequantize(packed, absmax, weight.size)
            with torch.no_grad():
                linear.weight.copy_(torch.from_numpy(restored.reshape(linear.weight.shape)))
        if name.split(".")[-1] in TARGETS:
            parent = module.get_submodule(name.rsplit(".", 1)[0])
            adapter = LoraLinear(linear, name)
            setattr(parent, name.rsplit(".", 1)[1], adapter)
            adapters[name] = adapter
    return model, module, adapters


def reference():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    data = dict(np.load(os.path.join(HERE, "data", "llama.data.npz")))
    arrays = {}
    for config, double in (("nf4", False), ("nf4_double", True)):
        model, module, adapters = adapted_model(double)
        inputs, labels = ref.micro_batch(data, model, 0)
        loss = ref.loss_of(module, inputs, labels)
        loss.backward()
        arrays[f"loss/{config}"] = np.array(loss.item(), dtype=np.float32)
        for name, adapter in adapters.items():
            for part in ("lora_A", "lora_B"):
                grad = getattr(adapter, part).weight.grad.numpy().copy()
                arrays[f"grad/{config}/{name}.{part}.weight"] = grad
        print(f"{config}: loss {loss.item():.6f}, {len(adapters)} adapted modules")
    ref.save_npz(os.path.join(HERE, "data", "qlora.reference.npz"), arrays)


def read_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        body = f.read()
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        assert entry["dtype"] == "F32", entry
        tensors[name] = torch.from_numpy(
            np.frombuffer(body[begin:end], dtype=np.float32).reshape(entry["shape"]).copy())
    return tensors


def check_peft(folder):
    _, module, adapters = adapted_model(False, quantize=False)
    # PEFT wraps the model twice (PeftModel.base_model is a LoraModel whose .model is ours).
    names = {f"base_model.model.{name}.{part}.weight": getattr(adapter, part).weight
             for name, adapter in adapters.items() for part in ("lora_A", "lora_B")}
    holder = nn.Module()
    for key, parameter in names.items():
        holder.register_parameter(key.replace(".", "__"), parameter)
    saved = {key.replace(".", "__"): value
             for key, value in read_safetensors(
                 os.path.join(folder, "adapter_model.safetensors")).items()}
    holder.load_state_dict(saved, strict=True)
    config = json.load(open(os.path.join(folder, "adapter_config.json")))
    assert config["r"] == RANK and sorted(config["target_modules"]) == sorted(adapters), config
    print(f"loaded {len(saved)} adapter tensors strictly into {len(adapters)} PEFT-named modules")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check-peft":
        check_peft(sys.argv[2])
    else:
        reference()
