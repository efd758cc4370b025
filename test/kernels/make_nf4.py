"""The Python reference of kernels/NormalFloat4.h: QLoRA's 4-bit NormalFloat quantization of a
weight in blocks of 64 (one absmax each, two code indices per byte, the first in the high
nibble) and the double quantization of the absmax (less their mean, blocks of 256 on the signed
8-bit dynamic code), written independently of the C++ from the published algorithm. Writes
data/nf4.json, which NormalFloat4Test compares with the C++ bit for bit; the QLoRA reference
(test/training/make_qlora_reference.py) dequantizes with the same functions.

Run: /usr/bin/python3 test/kernels/make_nf4.py (numpy only)"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_dynamic_code import dynamic_code, quantize_block  # noqa: E402

# The QLoRA paper's NF4 values (Appendix E), as bitsandbytes' table.
NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
                0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0], dtype=np.float32)
BLOCK = 64
ABSMAX_BLOCK = 256


def nearest(normalized):
    """The nearest NF4 value's index (ties to the lower), in f32 as the kernel computes it."""
    index = 0
    while index < 15 and np.float32(normalized - NF4[index]) > np.float32(NF4[index + 1] - normalized):
        index += 1
    return index


def quantize(values):
    """(packed bytes, absmax per block) of a flat f32 array."""
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    indices = np.zeros(values.size + values.size % 2, dtype=np.uint8)
    absmax = []
    for begin in range(0, values.size, BLOCK):
        block = values[begin:begin + BLOCK]
        largest = np.float32(np.max(np.abs(block)))
        inverse = np.float32(1) / largest if largest > 0 else np.float32(0)
        absmax.append(largest)
        for i, x in enumerate(block):
            indices[begin + i] = nearest(np.float32(x * inverse))
    packed = (indices[0::2] << 4) | indices[1::2]
    return packed.astype(np.uint8), np.array(absmax, dtype=np.float32)


def quantize_absmax(absmax):
    """Double quantization: (offset, codes per absmax, scale per 256 absmax)."""
    offset = np.float32(np.sum(absmax.astype(np.float64)) / absmax.size)
    centered = (absmax - offset).astype(np.float32)
    code = dynamic_code(True)
    codes, scales = [], []
    for begin in range(0, centered.size, ABSMAX_BLOCK):
        scale, indices = quantize_block(code, centered[begin:begin + ABSMAX_BLOCK])
        scales.append(scale)
        codes += indices
    return offset, np.array(codes, dtype=np.uint8), np.array(scales, dtype=np.float32)


def dequantize_absmax(offset, codes, scales):
    code = dynamic_code(True)
    block_scales = np.repeat(scales, ABSMAX_BLOCK)[:codes.size]
    return (code[codes] * block_scales + offset).astype(np.float32)


def dequantize(packed, absmax, count):
    """The f32 weight (flat, `count` elements) the packed codes and absmax stand for."""
    indices = np.stack([packed >> 4, packed & 0xF], axis=1).reshape(-1)[:count]
    scales = np.repeat(absmax.astype(np.float32), BLOCK)[:count]
    return (NF4[indices] * scales).astype(np.float32)


def main():
    rng = np.random.default_rng(25)
    weights = [
        ("normal", (rng.standard_normal(64 * 8) * 0.02).astype(np.float32)),
        ("partial", rng.standard_normal(64 * 3 + 17).astype(np.float32)),
        ("outlier", np.concatenate([rng.standard_normal(127), [50.0]]).astype(np.float32)),
        ("zeros", np.zeros(130, dtype=np.float32)),
    ]
    out = {"values": [float(v) for v in NF4], "weights": []}
    for name, values in weights:
        packed, absmax = quantize(values)
        offset, codes, scales = quantize_absmax(absmax)
        out["weights"].append({
            "name": name, "values": [float(v) for v in values],
            "packed": [int(b) for b in packed], "absmax": [float(v) for v in absmax],
            "offset": float(offset), "absmax_codes": [int(c) for c in codes],
            "absmax_scales": [float(s) for s in scales]})
    # Double quantization over more than one block of 256 absmax, on its own.
    many = np.abs(rng.standard_normal(300) * 0.05).astype(np.float32)
    offset, codes, scales = quantize_absmax(many)
    out["absmax"] = {"absmax": [float(v) for v in many], "offset": float(offset),
                     "codes": [int(c) for c in codes], "scales": [float(s) for s in scales]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "nf4.json")
    with open(path, "w") as f:
        json.dump(out, f)
    print(f"wrote {path}: {len(weights)} weights")


if __name__ == "__main__":
    main()
