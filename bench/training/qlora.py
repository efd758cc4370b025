"""QLoRA's memory and time: planned peaks of Llama-7B (memc-zoo shape-only, B1 x T2048) for a
full fine-tune (fp32 AdamW; bf16; bf16 with adamw8bit; the last two with the optimizer
offloaded to host memory) and LoRA r=16 on every linear layer
(bf16 compute, on the f32 base and on an NF4 base with and without double quantization, and
with the activations offloaded), each
beside its byte formula; then the CPU step time of QLoRA against LoRA on the f32 base on a
two-layer llama-1b (d 2048, ffn 5632, vocab 1024, B1 x T256), in one run. Report-only
compiles (no -o): nothing is written for the 7B. Prints markdown for docs/benchmarks.md.

Run: /usr/bin/python3 bench/training/qlora.py [BUILD_DIR] [STEPS] (numpy only)"""
import json
import os
import tempfile

from bench_support import gib, median_ms, programs, run, token_model

memc, zoo, steps = programs(default_steps=10)
TARGETS = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj"
LORA = ["--lora-rank", "16", "--lora-alpha", "32", "--lora-targets", TARGETS]
CONFIGS = [
    ("full fine-tune, fp32 AdamW", ["--optimizer", "adamw"],
     "16 B/param: weight 4, gradient 4, AdamW 8 (memc updates each weight as its gradient "
     "is made: gradients are never all live)"),
    ("full fine-tune, bf16", ["--optimizer", "adamw", "--precision", "bf16"],
     "f32 master 4, AdamW 8, bf16 copy 2 (kept for the backward)"),
    ("full fine-tune, bf16 + adamw8bit", ["--optimizer", "adamw8bit", "--precision", "bf16"],
     "AdamW state 8 -> 2 B/param (+ 4 B absmax per 256)"),
    ("full fine-tune, bf16 + offload", ["--optimizer", "adamw", "--precision", "bf16",
                                        "--offload-optimizer", "cpu"],
     "device: bf16 weights 2 B/param kept; f32 masters and AdamW 12 B/param on the host"),
    ("full fine-tune, bf16 + adamw8bit + offload",
     ["--optimizer", "adamw8bit", "--precision", "bf16", "--offload-optimizer", "cpu"],
     "device: bf16 weights 2 B/param; host: masters 4 + state 2"),
    ("LoRA r16, f32 base, bf16", ["--optimizer", "adamw", "--precision", "bf16"] + LORA,
     "f32 base 4 B/param and its bf16 copy 2, made once per step"),
    ("QLoRA r16, NF4 + double quant, bf16",
     ["--optimizer", "adamw", "--precision", "bf16", "--quantize-base", "nf4"] + LORA,
     "base 4 + 0.127 bits/param (QLoRA paper: 0.127)"),
    ("QLoRA r16, NF4 + double quant, bf16, activations offloaded",
     ["--optimizer", "adamw", "--precision", "bf16", "--quantize-base", "nf4",
      "--offload-activations", "cpu"] + LORA,
     "what the backward reads waits in host memory"),
    ("QLoRA r16, NF4, f32 absmax, bf16",
     ["--optimizer", "adamw", "--precision", "bf16", "--quantize-base", "nf4",
      "--no-double-quant"] + LORA,
     "base 4 + 0.5 bits/param"),
]

with tempfile.TemporaryDirectory() as work:
    model = os.path.join(work, "llama-7b.onnx")
    run([zoo, "--model", "llama-7b", "--batch", "1", "--seq", "2048", "--weights", "none", "-o",
         model])
    print("| Llama-7B, B1 x T2048 | device peak GiB | parameters | gradients | optimizer state | "
          "quantized base (bits/weight) | activations | host GiB | formula |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, flags, formula in CONFIGS:
        report = os.path.join(work, "report.json")
        # The RoPE tables are buffers; with LoRA everything but the adapters is frozen anyway.
        frozen = [] if "--lora-rank" in flags else ["--freeze", "*rotary*"]
        run([memc, model, "--loss", "cross_entropy", "--report-json", report] + flags + frozen)
        plan = json.load(open(report))
        live = plan["most_live_bytes"]
        base = plan.get("quantized_base")
        quantized = f"{gib(base['bytes'])} ({base['bits_per_parameter']:.3f})" if base else "-"
        print(f"| {name} | {gib(plan['peak_bytes'])} | {gib(live['parameters'])} | "
              f"{gib(live['gradients'])} | {gib(live['optimizer_state'])} | {quantized} | "
              f"{gib(live['activations'])} | {gib(plan['host_bytes'])} | {formula} |")

    small, data = token_model(zoo, work, "llama-1b", batch=1, seq=256, layers=2, vocab=1024,
                              samples=8)
    print("\n| two-layer llama-1b, B1 x T256, fp32 compute | ms/step (median), 1 thread | "
          "2 threads | against LoRA on the f32 base |")
    print("|---|---|---|---|")
    medians = {}
    for name, extra in [("LoRA r16, f32 base", []),
                        ("QLoRA r16, NF4 base", ["--quantize-base", "nf4"])]:
        program = os.path.join(work, "program")
        run([memc, small, "--loss", "cross_entropy", "--optimizer", "adamw", "-o", program]
            + LORA + extra)
        times = []
        for threads in ("1", "2"):
            log = os.path.join(work, "log.jsonl")
            run([program, "--data", data, "--steps", str(steps), "--log", log],
                dict(os.environ, MEMC_NUM_THREADS=threads, OMP_NUM_THREADS=threads))
            times.append(median_ms(log))
        medians[name] = times
        first = next(iter(medians.values()))
        print(f"| {name} | {times[0]:.1f} | {times[1]:.1f} | "
              f"{times[0] / first[0]:.2f} / {times[1] / first[1]:.2f} |")
