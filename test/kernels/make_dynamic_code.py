"""The Python reference of kernels/DynamicQuantization.h: the signed and unsigned 8-bit dynamic
codes (Dettmers et al. 2022, bitsandbytes' dynamic map) and block-wise quantization of a few
seeded blocks, written independently of the C++ from the same algorithm. Writes
data/dynamic_code.json, which DynamicQuantizationTest compares with the C++ bit for bit.

Run: /usr/bin/python3 test/kernels/make_dynamic_code.py (numpy only)"""
import json
import os

import numpy as np


def dynamic_code(signed):
    """Level i of 7: 10^(i-6) times the midpoints of linspace(0.1, 1, parts + 1), parts = 2^i
    (signed, with negatives) or 2^(i+1); then 0 and 1; ascending, rounded once to f32."""
    values = []
    for level in range(7):
        parts = 2 ** level if signed else 2 ** (level + 1)
        scale = 1.0
        for _ in range(level, 6):
            scale /= 10.0
        for part in range(parts):
            low = 0.1 + 0.9 * part / parts
            high = 0.1 + 0.9 * (part + 1) / parts
            value = scale * (low + high) / 2.0
            values.append(value)
            if signed:
                values.append(-value)
    values += [0.0, 1.0]
    assert len(values) == 256
    return np.array(sorted(values), dtype=np.float64).astype(np.float32)


def quantize_block(code, block):
    """absmax (f32) and, per element, the nearest code value's index (ties to the lower) of
    element * (1 / absmax) in f32."""
    block = block.astype(np.float32)
    absmax = np.float32(np.max(np.abs(block))) if block.size else np.float32(0)
    inverse = np.float32(1) / absmax if absmax > 0 else np.float32(0)
    indices = []
    for x in block:
        normalized = np.float32(x * inverse)
        high = int(np.searchsorted(code, normalized, side="right"))  # first value > normalized
        high = min(max(high, 1), 255)
        low = high - 1
        indices.append(low if normalized - code[low] <= code[high] - normalized else high)
    return float(absmax), indices


def main():
    rng = np.random.default_rng(24)
    signed, unsigned = dynamic_code(True), dynamic_code(False)
    outlier = rng.standard_normal(256).astype(np.float32)
    outlier[17] = 1000.0
    blocks = [
        ("normal", True, rng.standard_normal(256).astype(np.float32)),
        ("outlier", True, outlier),
        ("zeros", True, np.zeros(256, dtype=np.float32)),
        ("tiny", True, (rng.standard_normal(256) * 1e-8).astype(np.float32)),
        ("partial", True, rng.standard_normal(100).astype(np.float32)),
        ("squares", False, (rng.standard_normal(256) ** 2 * 1e-3).astype(np.float32)),
    ]
    out = {"signed": [float(v) for v in signed], "unsigned": [float(v) for v in unsigned],
           "blocks": []}
    for name, is_signed, block in blocks:
        absmax, indices = quantize_block(signed if is_signed else unsigned, block)
        out["blocks"].append({"name": name, "signed": is_signed,
                              "values": [float(v) for v in block], "absmax": absmax,
                              "indices": indices})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "dynamic_code.json")
    with open(path, "w") as f:
        json.dump(out, f)
    print(f"wrote {path}: codes {signed[:3]} ... {unsigned[-3:]}")


if __name__ == "__main__":
    main()
