"""Attention memory and time vs sequence length, fused and unfused, on the CPU (issue 13).

Usage (after tools/build.sh; Debian's python for numpy and onnx):

    /usr/bin/python3 bench/attention/attention_vs_length.py [T ...]

One causal self-attention layer as exporters write it (batch 1, d 768, 12 heads of 64: a qkv
projection, q @ k^T * 1/8 + Trilu(-inf) mask, softmax, @ v, heads merged), trained with mse for
one AdamW step by the compiled program, with `--fuse-attention auto` and `off`. For each T it
prints the planned peak (`--report-json`), its transient part (peak minus parameters and
optimizer state) and the wall time of `train --steps 1` (program start, arena, one step). The
unfused program is run only while its planned peak stays under UNFUSED_RUN_LIMIT; beyond it the
[12, T, T] scores alone outgrow this machine's memory, and only its plan is reported (or memc's
error, where it cannot write the program).
Results go in docs/benchmarks.md (issue 13 section).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("MEMC_BIN", os.path.join(ROOT, "build", "bin"))
DIM, HEADS = 768, 12
HEAD_DIM = DIM // HEADS
UNFUSED_RUN_LIMIT = 6 * 2**30
LENGTHS = [512, 1024, 2048, 4096, 8192, 16384]


def attention_model(length, path):
    rng = np.random.default_rng(0)
    weight = (0.02 * rng.standard_normal((DIM, 3 * DIM))).astype(np.float32)

    def ints(name, values):
        return numpy_helper.from_array(np.array(values, dtype=np.int64), name)

    nodes = [
        helper.make_node("MatMul", ["x", "w_qkv"], ["qkv"]),
        helper.make_node("Split", ["qkv", "split"], ["q", "k", "v"], axis=2),
    ]
    for name in ("q", "k", "v"):
        nodes.append(helper.make_node("Reshape", [name, "heads_shape"], [name + "4"]))
    nodes += [
        helper.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        helper.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        helper.make_node("MatMul", ["qh", "kt"], ["scores"]),
        helper.make_node("Constant", [], ["scale"],
                         value=numpy_helper.from_array(np.array(1 / np.sqrt(HEAD_DIM), np.float32))),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("ConstantOfShape", ["mask_shape"], ["minus_inf"],
                         value=numpy_helper.from_array(np.array([-np.inf], np.float32))),
        helper.make_node("Trilu", ["minus_inf", "one"], ["mask"], upper=1),
        helper.make_node("Add", ["scaled", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probabilities"], axis=-1),
        helper.make_node("MatMul", ["probabilities", "vh"], ["heads"]),
        helper.make_node("Transpose", ["heads"], ["merged4"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["merged4", "out_shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, length, DIM])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, length, DIM])],
        [numpy_helper.from_array(weight, "w_qkv"), ints("split", [DIM] * 3),
         ints("heads_shape", [1, length, HEADS, HEAD_DIM]), ints("mask_shape", [length, length]),
         ints("one", 1), ints("out_shape", [1, length, DIM])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def data(length, path):
    rng = np.random.default_rng(1)
    np.savez(path, x=rng.standard_normal((1, length, DIM)).astype(np.float32),
             labels=rng.standard_normal((1, length, DIM)).astype(np.float32))


def compile_program(model, fuse, out, report):
    """The planned peak and its transient part, or memc's error where it writes no program."""
    compiled = subprocess.run([os.path.join(BIN, "memc"), model, "--loss", "mse", "--remat",
                               "none", "--fuse-attention", fuse, "--report-json", report, "-o",
                               out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if compiled.returncode != 0:
        return compiled.stderr.strip().splitlines()[-1]
    with open(report) as f:
        plan = json.load(f)
    breakdown = plan["breakdown"]
    return plan["peak_bytes"], plan["peak_bytes"] - breakdown["parameters"] - breakdown[
        "optimizer_state"]


def run_seconds(program, data_path):
    start = time.monotonic()
    subprocess.run([program, "--data", data_path, "--steps", "1"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - start


def mib(value):
    return f"{value / 2**20:.0f} MiB"


def main():
    lengths = [int(t) for t in sys.argv[1:]] or LENGTHS
    print("| T | fused peak (transient) | fused time | unfused peak (transient) | unfused time |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for length in lengths:
            model = os.path.join(work, f"attention-{length}.onnx")
            data_path = os.path.join(work, f"data-{length}.npz")
            attention_model(length, model)
            data(length, data_path)
            cells = []
            for fuse in ("auto", "off"):
                program = os.path.join(work, f"train-{length}-{fuse}")
                compiled = compile_program(model, fuse, program, program + ".json")
                if isinstance(compiled, str):
                    cells += [f"no program ({compiled})", "not run"]
                    continue
                peak, transient = compiled
                cells.append(f"{mib(peak)} ({mib(transient)})")
                if fuse == "off" and peak > UNFUSED_RUN_LIMIT:
                    cells.append("not run (plan over %d GiB)" % (UNFUSED_RUN_LIMIT // 2**30))
                else:
                    cells.append(f"{run_seconds(program, data_path):.2f} s")
                os.remove(program)
            print(f"| {length} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
