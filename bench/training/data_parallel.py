"""Data parallel (memc --world-size N, ZeRO stage 0): per-rank planned memory at N = 1, 2, 4, 8
beside ZeRO's formulas, and the step time of 2 CPU ranks against one process accumulating the
same 2 micro-batches, in one run. Prints markdown tables for docs/benchmarks.md.

Run: /usr/bin/python3 bench/training/data_parallel.py [BUILD_DIR] [STEPS]
(numpy only; mpirun from openmpi-bin, which tools/setup.sh installs)"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
memc = os.path.join(build, "bin", "memc")
zoo = os.path.join(build, "bin", "memc-zoo")
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]
WARMUP = 3


def run(command, env=None):
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout}")
    return done.stdout


def planned(model, flags, work):
    report = os.path.join(work, "report.json")
    run([memc, model, "--loss", "cross_entropy", "--optimizer", "adamw", "--report-json", report,
         "-o", os.path.join(work, "program")] + flags)
    return json.load(open(report))


def gib(n):
    return f"{n / 2**30:.2f}"


with tempfile.TemporaryDirectory() as work:
    print("### Per-rank planned memory (stage 0: every rank holds the whole model state)\n")
    print("| model | N | peak per rank GiB | model state per rank GiB | bytes/param | "
          "ZeRO formula (stage 0 / 1 / 2 / 3, bytes/param) |")
    print("|---|---|---|---|---|---|")
    for name, zoo_flags, flags in [
            ("gpt2-124m", ["--batch", "2", "--seq", "1024"], ["--freeze", "*.attn.bias"]),
            ("llama-1b", ["--batch", "1", "--seq", "1024"], ["--freeze", "*rotary*"])]:
        model = os.path.join(work, name + ".onnx")
        run([zoo, "--model", name, "--weights", "none", "-o", model] + zoo_flags)
        for n in [1, 2, 4, 8]:
            extra = ["--world-size", str(n)] if n > 1 else []
            report = planned(model, flags + extra, work)
            state = report["data_parallel"]["model_state_bytes"] if n > 1 else sum(
                report["most_live_bytes"][c] for c in
                ["parameters", "gradients", "optimizer_state", "weight_copies"])
            params = report["data_parallel"]["parameters"] if n > 1 else None
            per_param = f"{state / params:.2f}" if params else "-"
            formula = f"16 / {4 + 12 / n:.2f} / {2 + 14 / n:.2f} / {16 / n:.2f}"
            print(f"| {name} | {n} | {gib(report['peak_bytes'])} | {gib(state)} | {per_param} | "
                  f"{formula} |")

    print("\n### Step time: 2 ranks against one process with --grad-accum 2\n")
    model = os.path.join(work, "gpt2-small.onnx")
    run([zoo, "--model", "gpt2-124m", "--batch", "4", "--seq", "128", "--layers", "2", "--vocab",
         "4096", "-o", model])
    rng = np.random.default_rng(0)
    data = os.path.join(work, "data.npz")
    ids = rng.integers(0, 4096, (64, 128))
    np.savez(data, input_ids=ids, labels=np.roll(ids, -1, axis=1))
    common = ["--loss", "cross_entropy", "--optimizer", "adamw", "--freeze", "*.attn.bias"]
    run([memc, model] + common + ["--world-size", "2", "-o", os.path.join(work, "ranks")])
    run([memc, model] + common + ["--grad-accum", "2", "-o", os.path.join(work, "accum")])

    def median_ms(command, threads):
        log = os.path.join(work, "log.jsonl")
        env = dict(os.environ, MEMC_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        run(command + ["--data", data, "--steps", str(steps), "--log", log], env)
        return statistics.median(json.loads(line)["ms"] for line in open(log)
                                 if json.loads(line)["step"] > WARMUP)

    ranks = median_ms(mpirun + ["-np", "2", os.path.join(work, "ranks")], 1)
    accum1 = median_ms([os.path.join(work, "accum")], 1)
    accum2 = median_ms([os.path.join(work, "accum")], 2)
    print("| run | ms/step (median) | against 2 ranks |")
    print("|---|---|---|")
    print(f"| 2 ranks x 1 thread, one micro-batch each | {ranks:.1f} | 1.00 |")
    print(f"| 1 process x 1 thread, --grad-accum 2 | {accum1:.1f} | {accum1 / ranks:.2f} |")
    print(f"| 1 process x 2 threads, --grad-accum 2 | {accum2:.1f} | {accum2 / ranks:.2f} |")
    print(f"\ncommunication overhead: 2 ranks take {ranks / (accum1 / 2):.2f}x half the "
          f"1-thread accumulation (1.00 would be free communication)")
