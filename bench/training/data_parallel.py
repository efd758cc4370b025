"""Data parallel (memc --world-size N --zero-stage S): per-rank planned memory at N = 1, 2, 4, 8
and stages 0-3 beside ZeRO's formulas (compile only), and the step time of 2 CPU ranks at each
stage against one process accumulating the same 2 micro-batches, in one run. Prints markdown
tables for docs/benchmarks.md.

Run: /usr/bin/python3 bench/training/data_parallel.py [BUILD_DIR] [STEPS]
(numpy only; mpirun from openmpi-bin, which tools/setup.sh installs)"""
import json
import os
import tempfile

import numpy as np

from bench_support import gib, median_ms, programs, run

memc, zoo, steps = programs(default_steps=12)
mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]


def planned(model, flags, work):
    report = os.path.join(work, "report.json")
    run([memc, model, "--loss", "cross_entropy", "--optimizer", "adamw", "--report-json", report,
         "-o", os.path.join(work, "program")] + flags)
    return json.load(open(report))



STAGES = [0, 1, 2, 3]


def formula(stage, n):
    """ZeRO paper's bytes per parameter of mixed-precision Adam at a stage and N ranks."""
    return [16, 4 + 12 / n, 2 + 14 / n, 16 / n][stage]


with tempfile.TemporaryDirectory() as work:
    print("### Per-rank planned memory, --precision bf16 AdamW, by ZeRO stage\n")
    print("| model | N | stage | peak per rank GiB | model state per rank GiB | "
          "bytes/param (memc) | bytes/param (ZeRO paper) |")
    print("|---|---|---|---|---|---|---|")
    for name, zoo_flags, flags in [
            ("gpt2-124m", ["--batch", "2", "--seq", "1024"], ["--freeze", "*.attn.bias"]),
            ("llama-1b", ["--batch", "1", "--seq", "1024"], ["--freeze", "*rotary*"])]:
        model = os.path.join(work, name + ".onnx")
        run([zoo, "--model", name, "--weights", "none", "-o", model] + zoo_flags)
        flags = flags + ["--precision", "bf16"]
        one = planned(model, flags + ["--world-size", "1"], work)
        state = sum(one["most_live_bytes"][c] for c in ["parameters", "optimizer_state"])
        print(f"| {name} | 1 | - | {gib(one['peak_bytes'])} | {gib(state)} | - | 16 |")
        for n in [2, 4, 8]:
            for stage in STAGES:
                report = planned(model, flags + ["--world-size", str(n), "--zero-stage",
                                                 str(stage)], work)
                ranks = report["data_parallel"]
                per_param = ranks["model_state_bytes"] / ranks["parameters"]
                print(f"| {name} | {n} | {stage} | {gib(report['peak_bytes'])} | "
                      f"{gib(ranks['model_state_bytes'])} | {per_param:.2f} | "
                      f"{formula(stage, n):.2f} |")

    print("\n### Step time: 2 ranks against one process with --grad-accum 2\n")
    model = os.path.join(work, "gpt2-small.onnx")
    run([zoo, "--model", "gpt2-124m", "--batch", "4", "--seq", "128", "--layers", "2", "--vocab",
         "4096", "-o", model])
    rng = np.random.default_rng(0)
    data = os.path.join(work, "data.npz")
    ids = rng.integers(0, 4096, (64, 128))
    np.savez(data, input_ids=ids, labels=np.roll(ids, -1, axis=1))
    common = ["--loss", "cross_entropy", "--optimizer", "adamw", "--freeze", "*.attn.bias"]
    for stage in STAGES:
        run([memc, model] + common + ["--world-size", "2", "--zero-stage", str(stage), "-o",
                                      os.path.join(work, f"ranks{stage}")])
    run([memc, model] + common + ["--grad-accum", "2", "-o", os.path.join(work, "accum")])

    def step_ms(command, threads):
        log = os.path.join(work, "log.jsonl")
        env = dict(os.environ, MEMC_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
        run(command + ["--data", data, "--steps", str(steps), "--log", log], env)
        return median_ms(log)

    accum1 = step_ms([os.path.join(work, "accum")], 1)
    accum2 = step_ms([os.path.join(work, "accum")], 2)
    print("| run | ms/step (median) | against half the 1-thread accumulation |")
    print("|---|---|---|")
    for stage in STAGES:
        ranks = step_ms(mpirun + ["-np", "2", os.path.join(work, f"ranks{stage}")], 1)
        print(f"| 2 ranks x 1 thread, ZeRO stage {stage} | {ranks:.1f} | "
              f"{ranks / (accum1 / 2):.2f} |")
    print(f"| 1 process x 1 thread, --grad-accum 2 | {accum1:.1f} | 2.00 |")
    print(f"| 1 process x 2 threads, --grad-accum 2 | {accum2:.1f} | {accum2 / (accum1 / 2):.2f} |")
    print("\n(a 2-rank step computing as fast as half the accumulated one, 1.00, would mean free "
          "communication)")
