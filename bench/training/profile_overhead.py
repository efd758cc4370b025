"""What --profile costs and how much of the step it accounts for: a two-layer llama-1b (d 2048,
vocab 1024, B1 x T256) and a one-layer GPT-2 (d 768, B2 x T32), each trained with and without
--profile in one run, alternating, 2 threads; the median step time of each after warm-up, and
the profile's per-step sum against the logged step time. Prints markdown for
docs/benchmarks.md.

Run: /usr/bin/python3 bench/training/profile_overhead.py [BUILD_DIR] [STEPS] (numpy only)"""
import os
import re
import statistics
import subprocess
import tempfile

from bench_support import median_ms, programs, run, token_model

memc, zoo, steps = programs(default_steps=12)
ENV = dict(os.environ, MEMC_NUM_THREADS="2", OMP_NUM_THREADS="2")

print("| model | step ms without | step ms with --profile | overhead | profiled steps' sum / "
      "logged step |")
print("|---|---|---|---|---|")
for name, model, batch, seq, layers, vocab, freeze in [
        ("two-layer llama-1b", "llama-1b", 1, 256, 2, 1024, "*rotary*"),
        ("one-layer GPT-2", "gpt2-124m", 2, 32, 1, 512, "*.attn.bias")]:
    with tempfile.TemporaryDirectory() as work:
        onnx_path, data = token_model(zoo, work, model, batch=batch, seq=seq, layers=layers,
                                      vocab=vocab, samples=8)
        program = os.path.join(work, "train")
        run([memc, onnx_path, "--loss", "cross_entropy", "--optimizer", "adamw", "--freeze",
             freeze, "-o", program])
        plain, profiled, sums = [], [], []
        for repeat in range(3):
            log = os.path.join(work, "log.jsonl")
            run([program, "--data", data, "--steps", str(steps), "--log", log], ENV)
            plain.append(median_ms(log))
            done = subprocess.run([program, "--data", data, "--steps", str(steps), "--log", log,
                                   "--profile"], env=ENV, stderr=subprocess.PIPE, text=True,
                                  check=True)
            profiled.append(median_ms(log))
            sums.append(float(re.search(r"steps ([0-9.]+) ms per run", done.stderr).group(1)))
        without, with_profile = statistics.median(plain), statistics.median(profiled)
        print(f"| {name} | {without:.1f} | {with_profile:.1f} | "
              f"{100 * (with_profile / without - 1):+.1f}% | "
              f"{statistics.median(sums) / with_profile:.3f} |")
