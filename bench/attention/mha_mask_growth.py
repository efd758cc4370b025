"""nn.MultiheadAttention with an additive float causal mask buffer (torch.full((N, N), -inf)
.triu(1), sliced [:T, :T]): the planned activations of one AdamW training step (mse on the
layer's output) as T doubles, with the buffer recognised as causal (issue 27) and, for
comparison, with the attention left unfused (--fuse-attention off). Exported by Debian's torch
1.13 here; compile-only plans (--report-json). Prints markdown for docs/benchmarks.md.

Run: /usr/bin/python3 bench/attention/mha_mask_growth.py [BUILD_DIR]"""
import json
import os
import subprocess
import sys
import tempfile
import warnings

import torch
import torch.nn as nn

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
MEMC = os.path.join(BUILD, "bin", "memc")
DIM, HEADS, LENGTHS = 256, 4, [512, 1024, 2048, 4096]


class MaskedAttention(nn.Module):
    def __init__(self, block):
        super().__init__()
        self.attention = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.register_buffer("mask", torch.full((block, block), float("-inf")).triu(1))

    def forward(self, x):
        T = x.shape[1]
        return self.attention(x, x, x, attn_mask=self.mask[:T, :T], need_weights=False)[0]


def planned(path, fuse):
    with tempfile.TemporaryDirectory() as work:
        report = os.path.join(work, "report.json")
        subprocess.run([MEMC, path, "--loss", "mse", "--optimizer", "adamw", "--fuse-attention",
                        fuse, "--report-json", report], check=True, capture_output=True)
        plan = json.load(open(report))
        return plan["most_live_bytes"]["activations"], plan["peak_bytes"]


warnings.filterwarnings("ignore")
print("| T | activations, fused (MiB) | growth | peak (MiB) | activations, unfused (MiB) | growth |")
print("|---|---|---|---|---|---|")
previous = {}
with tempfile.TemporaryDirectory() as work:
    for length in LENGTHS:
        path = os.path.join(work, f"mha{length}.onnx")
        torch.onnx.export(MaskedAttention(length).eval(), (torch.randn(1, length, DIM),), path,
                          opset_version=17, do_constant_folding=False, input_names=["x"],
                          output_names=["y"])
        fused, peak = planned(path, "auto")
        unfused, _ = planned(path, "off")
        growth = {k: (v / previous[k] if k in previous else None)
                  for k, v in (("fused", fused), ("unfused", unfused))}
        show = lambda g: f"{g:.2f}x" if g else "-"
        print(f"| {length} | {fused / 2**20:.1f} | {show(growth['fused'])} | {peak / 2**20:.1f} | "
              f"{unfused / 2**20:.1f} | {show(growth['unfused'])} |")
        previous = {"fused": fused, "unfused": unfused}
