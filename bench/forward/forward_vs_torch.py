"""CPU forward time: memc's compiled executable against PyTorch on the same model, same batch,
same thread count, in one run. Prints a markdown table for docs/benchmarks.md.

Run with Debian's torch: /usr/bin/python3 bench/forward/forward_vs_torch.py [BUILD_DIR] [RUNS]

The models are the test fixtures' architectures (test/fixtures/export_fixtures.py) at a larger
size, exported with the fixtures' own export settings. Each side runs the forward pass RUNS times
after warm-up; the table reports medians and their ratio.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

THREADS = int(os.environ.get("MEMC_NUM_THREADS", os.cpu_count() or 1))
# Debian's torch runs its matmuls on OpenBLAS, whose threads torch.set_num_threads does not
# limit: hold them to the same count before torch loads, so both sides use THREADS threads.
os.environ["OPENBLAS_NUM_THREADS"] = str(THREADS)

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "fixtures"))
import export_fixtures as fixtures  # noqa: E402


def torch_median_ms(model, example, runs):
    with torch.no_grad():
        for _ in range(3):
            model(example)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            model(example)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def memc_median_ms(build, onnx_path, input_name, example, runs, work):
    program = os.path.join(work, "program")
    subprocess.run([os.path.join(build, "bin", "memc"), "--mode=infer", onnx_path, "-o", program],
                   check=True, capture_output=True)
    inputs = os.path.join(work, "inputs.npz")
    np.savez(inputs, **{input_name: example.numpy()})
    env = dict(os.environ, MEMC_NUM_THREADS=str(THREADS))
    result = subprocess.run([program, "--inputs", inputs, "--repeat", str(runs)], check=True,
                            capture_output=True, text=True, env=env)
    return float(re.search(r"median run ([0-9.]+) ms", result.stderr).group(1))


def configure(dim, seq, heads, vocab, batch):
    fixtures.DIM, fixtures.SEQ, fixtures.HEADS, fixtures.VOCAB = dim, seq, heads, vocab
    fixtures.BATCH = batch


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    cases = []
    configure(dim=256, seq=128, heads=8, vocab=512, batch=8)
    tokens = torch.randint(0, 512, (8, 128))
    cases.append(("GPT-2 style, 2 layers, d256, B8×T128", fixtures.GPT2(), tokens, "input_ids", "logits"))
    cases.append(("Llama style, 2 layers, d256, B8×T128", fixtures.Llama(), tokens, "input_ids", "logits"))
    cases.append(("ResNet style, B32×3×32×32", fixtures.ResNet(), torch.randn(32, 3, 32, 32), "input", "logits"))
    cases.append(("MLP 16-32-32-10, B4", fixtures.MLP(), torch.randn(4, 16), "input", "output"))
    print(f"Threads: {THREADS}; {runs} runs each, medians.\n")
    print("| model | PyTorch ms | memc ms | memc / PyTorch |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for name, model, example, input_name, output_name in cases:
            model.eval()
            path = os.path.join(work, "model.onnx")
            torch.onnx.export(model, example, path, input_names=[input_name],
                              output_names=[output_name], opset_version=17,
                              do_constant_folding=False)
            reference = torch_median_ms(model, example, runs)
            ours = memc_median_ms(build, path, input_name, example, runs, work)
            print(f"| {name} | {reference:.3f} | {ours:.3f} | {ours / reference:.2f} |")


if __name__ == "__main__":
    main()
