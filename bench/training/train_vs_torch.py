"""CPU training-step time: memc's training executable against PyTorch (forward, cross-entropy,
backward, AdamW step) on the same model, same batch, same thread count, in one run. Prints a
markdown table for docs/benchmarks.md, then a second one for mixed precision: memc fp32 and
--precision bf16 against PyTorch fp32 and torch.autocast('cpu', dtype=torch.bfloat16), with
memc's planned and measured peaks.

Run with Debian's torch: /usr/bin/python3 bench/training/train_vs_torch.py [BUILD_DIR] [STEPS]

The models are the test fixtures' architectures (test/fixtures/export_fixtures.py) at a larger
size. Each side runs STEPS steps; the table reports the median step time after 3 warm-up steps.
"""
import json
import os
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
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "fixtures"))
import export_fixtures as fixtures  # noqa: E402

WARMUP = 3


def torch_step_ms(model, inputs, labels, steps, autocast=False):
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            logits = model(inputs)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        loss.backward()
        optimizer.step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times[WARMUP:])


def memc_step(build, onnx_path, input_name, inputs, labels, freeze, steps, work,
              precision="fp32"):
    """The median step time (ms), the planned peak and the runtime's measured peak (bytes)."""
    program = os.path.join(work, "train")
    report = os.path.join(work, "report.json")
    command = [os.path.join(build, "bin", "memc"), onnx_path, "--loss", "cross_entropy",
               "--optimizer", "adamw", "--lr", "1e-3", "--precision", precision,
               "--report-json", report, "-o", program]
    for glob in freeze:
        command += ["--freeze", glob]
    subprocess.run(command, check=True, capture_output=True)
    data = os.path.join(work, "data.npz")
    np.savez(data, **{input_name: inputs.numpy(), "labels": labels.numpy()})
    log = os.path.join(work, "log.jsonl")
    env = dict(os.environ, MEMC_NUM_THREADS=str(THREADS))
    subprocess.run([program, "--data", data, "--steps", str(steps), "--log", log], check=True,
                   capture_output=True, env=env)
    records = [json.loads(line) for line in open(log)]
    with open(report) as f:
        planned = json.load(f)["peak_bytes"]
    return (statistics.median(r["ms"] for r in records[WARMUP:]), planned,
            max(r["peak_bytes"] for r in records))


def configure(dim, seq, heads, vocab):
    fixtures.DIM, fixtures.SEQ, fixtures.HEADS, fixtures.VOCAB = dim, seq, heads, vocab


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    configure(dim=256, seq=128, heads=8, vocab=512)
    tokens = torch.randint(0, 512, (8, 128))
    targets = torch.randint(0, 512, (8, 128))
    cases = [
        ("GPT-2 style, 2 layers, d256, B8×T128", fixtures.GPT2(), tokens, targets, "input_ids",
         ["h.*.attn.bias"]),
        ("Llama style, 2 layers, d256, B8×T128", fixtures.Llama(), tokens, targets, "input_ids",
         ["rope_*"]),
        ("ResNet style, B32×3×32×32", fixtures.ResNet(), torch.randn(32, 3, 32, 32),
         torch.randint(0, 10, (32,)), "input", []),
        ("MLP 16-32-32-10, B4", fixtures.MLP(), torch.randn(4, 16), torch.randint(0, 10, (4,)),
         "input", []),
    ]
    print(f"Threads: {THREADS}; {steps} steps each, median after {WARMUP} warm-up steps.\n")
    print("| model | PyTorch ms/step | memc ms/step | memc / PyTorch |")
    print("|---|---|---|---|")
    precision_rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, model, inputs, labels, input_name, freeze in cases:
            path = os.path.join(work, "model.onnx")
            model.eval()
            torch.onnx.export(model, inputs, path, input_names=[input_name],
                              output_names=["logits"], opset_version=17,
                              do_constant_folding=False,
                              training=torch.onnx.TrainingMode.PRESERVE)
            memc = {p: memc_step(build, path, input_name, inputs, labels, freeze, steps, work, p)
                    for p in ("fp32", "bf16")}
            ours = memc["fp32"][0]
            reference = torch_step_ms(model, inputs, labels, steps)
            autocast = torch_step_ms(model, inputs, labels, steps, autocast=True)
            print(f"| {name} | {reference:.3f} | {ours:.3f} | {ours / reference:.2f} |")
            precision_rows.append((name, reference, autocast, memc))
    print("\nMixed precision: ms/step; memc's planned / measured peak in MiB.\n")
    print("| model | PyTorch fp32 | PyTorch autocast bf16 | memc fp32 | memc bf16 "
          "| memc bf16 / autocast | memc fp32 peak | memc bf16 peak |")
    print("|---|---|---|---|---|---|---|---|")
    mib = 2.0 ** 20
    for name, reference, autocast, memc in precision_rows:
        (fp32_ms, fp32_planned, fp32_measured), (bf16_ms, bf16_planned, bf16_measured) = (
            memc["fp32"], memc["bf16"])
        print(f"| {name} | {reference:.3f} | {autocast:.3f} | {fp32_ms:.3f} | {bf16_ms:.3f} "
              f"| {bf16_ms / autocast:.2f} | {fp32_planned / mib:.2f} / {fp32_measured / mib:.2f} "
              f"| {bf16_planned / mib:.2f} / {bf16_measured / mib:.2f} |")


if __name__ == "__main__":
    main()
