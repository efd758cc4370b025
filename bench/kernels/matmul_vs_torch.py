"""16-bit matmuls against torch.matmul on the linear layers of the GPT-2 and Llama bench models
and gpt2-124m (memc-kernel-bench's `linear` group, test/kernels/KernelBench.cpp: the same
shapes and labels), same thread count, in one run.

Run with Debian's torch:
  MEMC_NUM_THREADS=N /usr/bin/python3 bench/kernels/matmul_vs_torch.py [BUILD_DIR [BEFORE_BENCH]]
BEFORE_BENCH, a memc-kernel-bench built from an earlier commit, adds its times as a column.
Each label is `linear {fwd|dx|dw} LAYER MxKxN DTYPE`: fwd is x @ W^T, dx is dY @ W and dw is
dY^T @ X, with M tokens, K inputs and N outputs. Both sides report the best of several runs
after warm-up, in milliseconds.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conv_vs_torch import BUILD, BEFORE, THREADS, best_ms, memc_times  # noqa: E402 (threads)

import torch  # noqa: E402

DTYPES = {"bf16": torch.bfloat16}  # torch 1.13 has no f16 matmul on the CPU


def torch_ms(label):
    kind, *_, size, dtype_name = label.split()
    m, k, n = (int(d) for d in size.split("x"))
    dtype = DTYPES[dtype_name]
    x, w, dy = (torch.randn(shape).to(dtype) for shape in ((m, k), (n, k), (m, n)))
    product = {"fwd": lambda: x @ w.t(), "dx": lambda: dy @ w, "dw": lambda: dy.t() @ x}[kind]
    return best_ms(product, reps=10)


def main():
    torch.set_num_threads(THREADS)
    memc = memc_times(os.path.join(BUILD, "test", "kernels", "memc-kernel-bench"), "linear")
    before = memc_times(BEFORE, "linear") if BEFORE else {}
    print(f"threads: {THREADS}\n")
    print("| matmul | PyTorch ms |" + (" memc before ms |" if BEFORE else "") +
          " memc ms | memc / PyTorch |")
    print("|---|---|" + ("---|" if BEFORE else "") + "---|---|")
    for label, ours in memc.items():
        if label.split()[-1] not in DTYPES:
            continue
        theirs = torch_ms(label)
        earlier = f" {before[label]:.3f} |" if label in before else ""
        print(f"| {label} | {theirs:.3f} |{earlier} {ours:.3f} "
              f"| {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
