"""CPU training-step time: memc's training executable against PyTorch (forward, cross-entropy,
backward, AdamW step) on the same model, same batch, same thread count, in one run. Prints a
markdown table for docs/benchmarks.md, then a second one for mixed precision: memc fp32 and
--precision bf16 against PyTorch fp32 and torch.autocast('cpu', dtype=torch.bfloat16), with
memc's planned and measured peaks.

Run with Debian's torch: /usr/bin/python3 bench/training/train_vs_torch.py [BUILD_DIR] [STEPS]

The models are the test fixtures' architectures (test/fixtures/export_fixtures.py) at a larger
size, and a CIFAR-size ResNet (CifarResNet below). Models with BatchNorm are exported as users
export them, in training mode (python/memc_export.py), so both sides normalize with the batch's
statistics.
Each side runs STEPS steps; the table reports the median step time after 3 warm-up steps.
With MEMC_PROFILE_TOP=K, memc's fp32 and bf16 runs are profiled (--profile) and each model's K
slowest kernels are printed after the tables.
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
sys.path.insert(0, os.path.join(ROOT, "python"))
import export_fixtures as fixtures  # noqa: E402
from memc_export import export as export_for_training  # noqa: E402

WARMUP = 3
PROFILE_TOP = int(os.environ.get("MEMC_PROFILE_TOP", "0"))


class CifarResNet(torch.nn.Module):
    """A CIFAR-size ResNet (ResNet-8: a 16-channel stem and one basic block per stage at 16, 32
    and 64 channels) on 32x32 images: the small channels users train from tutorials."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, 1, 1, bias=False),
                                        torch.nn.BatchNorm2d(16), torch.nn.ReLU())
        self.stages = torch.nn.Sequential(fixtures.BasicBlock(16, 16, 1),
                                          fixtures.BasicBlock(16, 32, 2),
                                          fixtures.BasicBlock(32, 64, 2))
        self.fc = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


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
    done = subprocess.run([program, "--data", data, "--steps", str(steps), "--log", log]
                          + (["--profile"] if PROFILE_TOP else []), check=True,
                          capture_output=True, text=True, env=env)
    records = [json.loads(line) for line in open(log)]
    with open(report) as f:
        planned = json.load(f)["peak_bytes"]
    return (statistics.median(r["ms"] for r in records[WARMUP:]), planned,
            max(r["peak_bytes"] for r in records), slowest_kernels(done.stderr))


def slowest_kernels(profile):
    """The PROFILE_TOP kernels taking most of --profile's steps' time, as "kernel %"
    (its steps' rows summed by kernel name)."""
    shares = {}
    for line in profile.splitlines():
        fields = line.split()
        # A step row: step calls total mean % GFLOP/s GB/s phase kernel [node].
        if len(fields) >= 9 and fields[0].isdigit() and fields[1].isdigit():
            shares[fields[8]] = shares.get(fields[8], 0.0) + float(fields[4])
    top = sorted(shares.items(), key=lambda item: -item[1])[:PROFILE_TOP]
    return ", ".join(f"{kernel} {share:.0f}%" for kernel, share in top)


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
        ("CIFAR ResNet-8, BatchNorm training, B32×3×32×32", CifarResNet(),
         torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,)), "input", []),
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
            if any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules()):
                export_for_training(model, (inputs,), path, input_names=[input_name],
                                    output_names=["logits"], batch_axis=None)
            else:
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
        (fp32_ms, fp32_planned, fp32_measured, _), (bf16_ms, bf16_planned, bf16_measured, _) = (
            memc["fp32"], memc["bf16"])
        print(f"| {name} | {reference:.3f} | {autocast:.3f} | {fp32_ms:.3f} | {bf16_ms:.3f} "
              f"| {bf16_ms / autocast:.2f} | {fp32_planned / mib:.2f} / {fp32_measured / mib:.2f} "
              f"| {bf16_planned / mib:.2f} / {bf16_measured / mib:.2f} |")
    if PROFILE_TOP:
        print(f"\nmemc's {PROFILE_TOP} slowest kernels (% of the profiled steps' time).\n")
        print("| model | fp32 | bf16 |")
        print("|---|---|---|")
        for name, _, _, memc in precision_rows:
            print(f"| {name} | {memc['fp32'][3]} | {memc['bf16'][3]} |")


if __name__ == "__main__":
    main()
