"""Compares two training runs: the losses of their logs (--log) and the tensors they saved
(--save, safetensors), each within a relative tolerance. Prints one line FileCheck reads:
"losses ok params ok" (or FAIL with the worst case), and whether they are bit-identical.
Usage: compare_runs.py LOG_A SAVED_A LOG_B SAVED_B TOLERANCE"""
import json
import struct
import sys

import numpy as np


def losses(path):
    return np.array([json.loads(line)["loss"] for line in open(path)], dtype=np.float64)


def tensors(path):
    data = open(path, "rb").read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = data[8 + length:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = np.frombuffer(body[begin:end], dtype={"F32": np.float32, "BF16": np.uint16,
                                                    "F16": np.float16, "I64": np.int64}[
                                                        entry["dtype"]])
        if entry["dtype"] == "BF16":
            raw = (raw.astype(np.uint32) << 16).view(np.float32)
        out[name] = raw.astype(np.float64)
    return out


# GPT-2's key bias (the middle third of c_attn.bias) has a gradient of exactly 0 in exact
# arithmetic (it shifts every score of a row alike, and softmax ignores that), so what it gets is
# rounding noise, which AdamW scales up to steps of size lr: two runs that sum the same gradients
# in another order (ranks and micro-batches) move it differently. It is left out of the
# comparison; the query and value thirds are compared.
def comparable(name, values):
    if name.endswith("attn.c_attn.bias"):
        third = len(values) // 3
        return np.concatenate([values[:third], values[2 * third:]])
    return values


def relative(a, b):
    scale = np.linalg.norm(b)
    return np.linalg.norm(a - b) / (scale if scale > 0 else 1.0)


log_a, saved_a, log_b, saved_b, tolerance = sys.argv[1:6]
tolerance = float(tolerance)
la, lb = losses(log_a), losses(log_b)
loss_error = float(np.max(np.abs(la - lb) / np.abs(lb))) if len(la) == len(lb) else np.inf
ta, tb = tensors(saved_a), tensors(saved_b)
worst, worst_name = 0.0, ""
for name in tb:
    error = (relative(comparable(name, ta[name]), comparable(name, tb[name])) if name in ta
             else np.inf)
    if error > worst:
        worst, worst_name = error, name
if set(ta) != set(tb):
    worst, worst_name = np.inf, "the saved names differ"
identical = len(la) == len(lb) and bool(np.all(la == lb)) and all(
    name in ta and np.array_equal(ta[name], tb[name]) for name in tb)
print(f"{len(la)} losses {'ok' if loss_error <= tolerance else f'FAIL {loss_error:.3g}'} "
      f"params {'ok' if worst <= tolerance else f'FAIL {worst:.3g} {worst_name}'} "
      f"({'bit-identical' if identical else f'largest loss error {loss_error:.2g}, tensor {worst:.2g}'})")
