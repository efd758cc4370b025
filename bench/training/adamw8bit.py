"""--optimizer adamw8bit against adamw: planned peak and optimizer state of GPT-2 124M
(B2 x T1024) and a Llama-style 1B (B1 x T2048), bf16, compile-only (a 7B compiles too, in
about 75 s each, and writes 27 GB per program); and the CPU step time of a one-layer
GPT-2 (d 768, vocab 512, B2 x T32) with each, in one run. Prints markdown for
docs/benchmarks.md.

Run: /usr/bin/python3 bench/training/adamw8bit.py [BUILD_DIR] [STEPS] (numpy only)"""
import json
import os
import tempfile
import time

from bench_support import gib, median_ms, programs, run, token_model

memc, zoo, steps = programs(default_steps=20)


with tempfile.TemporaryDirectory() as work:
    print("| model | optimizer | peak GiB | optimizer state GiB | state vs adamw | compile s |")
    print("|---|---|---|---|---|---|")
    for name, zoo_flags, freeze in [("gpt2-124m", ["--batch", "2", "--seq", "1024"], "*.attn.bias"),
                                    ("llama-1b", ["--batch", "1", "--seq", "2048"], "*rotary*")]:
        model = os.path.join(work, name + ".onnx")
        run([zoo, "--model", name, "--weights", "none", "-o", model] + zoo_flags)
        states = {}
        for optimizer in ["adamw", "adamw8bit"]:
            report = os.path.join(work, "report.json")
            start = time.time()
            run([memc, model, "--loss", "cross_entropy", "--optimizer", optimizer, "--freeze",
                 freeze, "--precision", "bf16", "--report-json", report, "-o",
                 os.path.join(work, "program")])
            seconds = time.time() - start
            plan = json.load(open(report))
            states[optimizer] = plan["most_live_bytes"]["optimizer_state"]
            print(f"| {name} | {optimizer} | {gib(plan['peak_bytes'])} | "
                  f"{gib(states[optimizer])} | {states[optimizer] / states['adamw']:.3f} | "
                  f"{seconds:.0f} |")

    model, data = token_model(zoo, work, "gpt2-124m", batch=2, seq=32, layers=1, vocab=512,
                              samples=16)
    print("\n| one-layer GPT-2, 2 threads | ms/step (median) | against adamw |")
    print("|---|---|---|")
    medians = {}
    for optimizer in ["adamw", "adamw8bit"]:
        program = os.path.join(work, optimizer)
        run([memc, model, "--loss", "cross_entropy", "--optimizer", optimizer, "--freeze",
             "*.attn.bias", "-o", program])
        log = os.path.join(work, "log.jsonl")
        run([program, "--data", data, "--steps", str(steps), "--log", log],
            dict(os.environ, MEMC_NUM_THREADS="2", OMP_NUM_THREADS="2"))
        medians[optimizer] = median_ms(log)
        print(f"| {optimizer} | {medians[optimizer]:.1f} | "
              f"{medians[optimizer] / medians['adamw']:.2f} |")
