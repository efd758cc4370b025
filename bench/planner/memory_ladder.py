"""The memory ladder (memc --explain-memory) of Llama 3.1 8B at B2 x T2048 under 24 GiB and of
GPT-2 124M at B8 x T1024, each rung beside the saving the guides claim for its technique, and
(with --world-size 8) what ZeRO's stages give per rank. Shape-only models from memc-zoo
(--weights none); nothing is written but the reports. Then, with a model whose sequence axis is
symbolic (memc-zoo --seq dynamic), the longest context QLoRA r=32 on every linear layer fits
at batch 1 in 8 ... 80 GB, beside Unsloth's published table. Prints markdown for
docs/benchmarks.md.

Run: /usr/bin/python3 bench/planner/memory_ladder.py [BUILD_DIR] (no torch needed)"""
import json
import os
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
MEMC = os.path.join(BUILD, "bin", "memc")
ZOO = os.path.join(BUILD, "bin", "memc-zoo")

# What the guides say each technique saves, and what memc's rows compare for it.
CLAIMS = {
    "+ bf16": ("mixed precision: 50% of memory", "peak"),
    "+ checkpointing (full)": ("checkpointing: 60-70% of activations", "activations"),
    "+ checkpointing (auto at the budget)": ("", "activations"),
    "+ flash attention, fused loss": ("FlashAttention: 5-20x less attention memory", "activations"),
    "+ 8-bit optimizer states": ("8-bit optimizers: 75% of optimizer memory", "optimizer_state"),
    "+ ZeRO-1": ("ZeRO-1: optimizer state / N", "optimizer_state"),
    "+ ZeRO-2": ("ZeRO-2: 8x less model state on 8 GPUs", "model_state"),
    "+ ZeRO-3": ("ZeRO-3: parameters / N too", "model_state"),
    "+ optimizer offload": ("offload: optimizer state off the GPU", "peak"),
    "+ QLoRA (r 16, all linear, NF4)": ("QLoRA: a 65B model in 48 GB", "peak"),
}

# Unsloth's table: Llama 3.1 8B, QLoRA r=32 on all linear layers, batch 1; the longest context
# in 8 / 12 / 16 / 24 / 40 / 48 / 80 GB, for Unsloth and for Hugging Face + FlashAttention 2.
UNSLOTH = [(8, 2972, "OOM"), (12, 21848, 932), (16, 40724, 2551), (24, 78475, 5789),
           (40, 153977, 12264), (48, 191728, 15502), (80, 342733, 28454)]


def run(command):
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout}")
    return done.stdout


def gib(n):
    return f"{n / 2**30:.2f}"


def amount(row, what):
    """The peak, the model state a rank keeps, or a category's most bytes at any step (the
    breakdown at the peak misses a category whose high-water mark is elsewhere)."""
    if what == "peak":
        return row["peak_bytes"]
    if what == "model_state":
        return row["model_state_bytes"]
    return row["most_live_bytes"][what]


def ladder(work, model, flags):
    report = os.path.join(work, "ladder.json")
    started = time.time()
    run([MEMC, model, "--loss", "cross_entropy", "--explain-memory", "--report-json", report]
        + flags)
    seconds = time.time() - started
    with open(report) as f:
        return json.load(f)["ladder"], seconds


def print_ladder(title, rows, seconds):
    print(f"#### {title}\n")
    print(f"(the whole ladder planned in {seconds:.1f} s)\n")
    print("| rung | peak GiB | fits | recompute | at the peak: params | grads | optimizer | "
          "activations | weight copies | quantized base | memc's saving | the guides' claim |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    previous = before_checkpointing = None
    for row in rows:
        if row["name"] == "+ checkpointing (full)":
            before_checkpointing = previous
        elif row["name"].startswith("+ checkpointing (auto"):
            previous = before_checkpointing  # auto is the other way to checkpoint, not a step on
        if "error" in row:
            print(f"| {row['name']} | error: {row['error']} |||||||||||")
            continue
        b = row["breakdown"]
        claim, what = CLAIMS.get(row["name"], ("", "peak"))
        saving = ""
        if previous is not None and amount(previous, what) > 0:
            before, after = amount(previous, what), amount(row, what)
            saving = (f"{what}: {100 * (1 - after / before):.0f}% less" if after <= before
                      else f"{what}: {100 * (after / before - 1):.0f}% more")
            if after > 0 and before / after >= 2:
                saving += f" ({before / after:.1f}x)"
        print(f"| {row['name']} | {gib(row['peak_bytes'])} | {'yes' if row['fits'] else 'no'} | "
              f"{row['recompute_flops_pct']:.1f}% | {gib(b['parameters'])} | "
              f"{gib(b['gradients'])} | {gib(b['optimizer_state'])} | {gib(b['activations'])} | "
              f"{gib(b['weight_copies'])} | {gib(b['quantized_base'])} | {saving} | {claim} |")
        previous = row
    print()


def fits(work, model, flags, seq):
    report = os.path.join(work, "seq.json")
    done = subprocess.run([MEMC, model, "--loss", "cross_entropy", "--seq-len", str(seq),
                           "--report-json", report] + flags,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode not in (0, 1) or not os.path.exists(report):
        sys.exit(f"failed: {done.stdout}")
    with open(report) as f:
        return json.load(f)["fits"]


def longest(work, model, flags):
    """The longest --seq-len whose plan fits, to 1/256 of it, by doubling then bisection
    (memc's --max-seq does the same per ladder rung)."""
    low, high = 0, 1024
    while fits(work, model, flags, high):
        low, high = high, high * 2
    while high - low > max(1, low // 256):
        middle = (low + high) // 2
        low, high = (middle, high) if fits(work, model, flags, middle) else (low, middle)
    return low


def main():
    with tempfile.TemporaryDirectory() as work:
        llama = os.path.join(work, "llama3.onnx")
        run([ZOO, "--model", "llama3-8b", "--batch", "2", "--seq", "2048", "--weights", "none",
             "-o", llama])
        gpt2 = os.path.join(work, "gpt2.onnx")
        run([ZOO, "--model", "gpt2-124m", "--batch", "8", "--seq", "1024", "--weights", "none",
             "-o", gpt2])
        rows, seconds = ladder(work, llama, ["--vram-budget", "24GiB"])
        print_ladder("Llama 3.1 8B, B2 x T2048, 24 GiB, 1 GPU", rows, seconds)
        rows, seconds = ladder(work, llama, ["--vram-budget", "24GiB", "--world-size", "8"])
        print_ladder("Llama 3.1 8B, B2 x T2048, 24 GiB, per rank of 8", rows, seconds)
        rows, seconds = ladder(work, gpt2, ["--vram-budget", "24GiB"])
        print_ladder("GPT-2 124M, B8 x T1024, 24 GiB, 1 GPU", rows, seconds)
        rows, seconds = ladder(work, gpt2, ["--vram-budget", "24GiB", "--world-size", "8"])
        print_ladder("GPT-2 124M, B8 x T1024, 24 GiB, per rank of 8", rows, seconds)

        dynamic = os.path.join(work, "llama3-dynamic.onnx")
        run([ZOO, "--model", "llama3-8b", "--batch", "1", "--seq", "dynamic", "--weights", "none",
             "-o", dynamic])
        qlora = ["--precision", "bf16", "--lora-rank", "32", "--lora-alpha", "32",
                 "--lora-targets", "all-linear", "--quantize-base", "nf4"]
        variants = [("QLoRA r32, remat auto", qlora),
                    ("+ activations offloaded", qlora + ["--offload-activations", "cpu"])]
        print("#### Llama 3.1 8B, QLoRA r=32 on all linear layers, batch 1: the longest context\n")
        print("| GPU memory | Unsloth | HF + FA2 | " +
              " | ".join(f"memc: {name}" for name, _ in variants) + " |")
        print("|---|---|---|" + "---|" * len(variants))
        for gb, unsloth, hf in UNSLOTH:
            budget = ["--vram-budget", f"{gb}GiB"]
            found = [longest(work, dynamic, flags + budget) for _, flags in variants]
            print(f"| {gb} GB | {unsloth:,} | {hf if isinstance(hf, str) else f'{hf:,}'} | " +
                  " | ".join(f"{n:,}" for n in found) + " |")
        print()


if __name__ == "__main__":
    main()
