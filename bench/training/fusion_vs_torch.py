"""Elementwise-chain fusion before/after: the GPT-2 and BERT benchmark models' training step with
two memc builds (before and after a fusion change) against PyTorch, same threads, in one run, and
each build's planned peak and activation bytes (the report's most_live_bytes.activations).

Run with Debian's torch:
    MEMC_NUM_THREADS=1 /usr/bin/python3 bench/training/fusion_vs_torch.py BEFORE_BIN AFTER_BIN [STEPS]
where BEFORE_BIN and AFTER_BIN are the bin/ folders of the two builds (memc and memc-runner).
The models are train_vs_torch.py's: the test fixtures' architectures at d256, T128, B8.
"""
import json
import os
import sys
import tempfile

import train_vs_torch as bench  # noqa: E402  (sets the BLAS thread count before torch loads)
import torch  # noqa: E402

fixtures = bench.fixtures


def memc_run(bin_dir, path, input_name, inputs, labels, freeze, steps, work, precision):
    """(ms/step, planned peak, activation bytes) of one build."""
    build = os.path.dirname(bin_dir)
    ms, planned, _, _ = bench.memc_step(build, path, input_name, inputs, labels, freeze, steps, work,
                                     precision)
    with open(os.path.join(work, "report.json")) as f:
        activations = json.load(f)["most_live_bytes"]["activations"]
    return ms, planned, activations


def main():
    before, after = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    torch.set_num_threads(bench.THREADS)
    torch.manual_seed(0)
    bench.configure(dim=256, seq=128, heads=8, vocab=512)
    tokens = torch.randint(0, 512, (8, 128))
    targets = torch.randint(0, 512, (8, 128))
    cases = [("GPT-2 style, 2 layers, d256, B8×T128", fixtures.GPT2(), ["h.*.attn.bias"]),
             ("BERT style, 2 layers, d256, B8×T128", fixtures.Bert(), [])]
    mib = 2.0 ** 20
    print(f"Threads: {bench.THREADS}; {steps} steps each, median after {bench.WARMUP} warm-up "
          "steps.\n")
    print("| model | precision | PyTorch ms/step | before ms | after ms | before / PyTorch "
          "| after / PyTorch | activations MiB before -> after | planned peak MiB before -> after |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for name, model, freeze in cases:
            path = os.path.join(work, "model.onnx")
            model.eval()
            torch.onnx.export(model, tokens, path, input_names=["input_ids"],
                              output_names=["logits"], opset_version=17,
                              do_constant_folding=False,
                              training=torch.onnx.TrainingMode.PRESERVE)
            for precision in ("fp32", "bf16"):
                runs = {side: memc_run(bin_dir, path, "input_ids", tokens, targets, freeze, steps,
                                       work, precision)
                        for side, bin_dir in (("before", before), ("after", after))}
                reference = bench.torch_step_ms(model, tokens, targets, steps,
                                                autocast=precision == "bf16")
                (b_ms, b_peak, b_act), (a_ms, a_peak, a_act) = runs["before"], runs["after"]
                print(f"| {name} | {precision} | {reference:.1f} | {b_ms:.1f} | {a_ms:.1f} "
                      f"| {b_ms / reference:.2f} | {a_ms / reference:.2f} "
                      f"| {b_act / mib:.2f} -> {a_act / mib:.2f} "
                      f"| {b_peak / mib:.2f} -> {a_peak / mib:.2f} |", flush=True)


if __name__ == "__main__":
    main()
