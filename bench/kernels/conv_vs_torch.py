"""Convolution and pooling kernels against PyTorch's (oneDNN's) on the ResNet bench model's layer
shapes (bench/training: fixtures.ResNet at B32x3x32x32), same thread count, in one run.

Run with Debian's torch:
  MEMC_NUM_THREADS=N /usr/bin/python3 bench/kernels/conv_vs_torch.py [BUILD_DIR [BEFORE_BENCH]]
BEFORE_BENCH, a memc-kernel-bench built from an earlier commit, adds its times as a column.

memc's side is `memc-kernel-bench resnet` (test/kernels/KernelBench.cpp, the same shapes and labels);
PyTorch's is aten's convolution, convolution_backward (input or weight gradient alone) and
max_pool2d. Both sides report the best of several runs after warm-up, in milliseconds.
"""
import os
import subprocess
import sys
import time

THREADS = int(os.environ.get("MEMC_NUM_THREADS", os.cpu_count() or 1))
os.environ["OPENBLAS_NUM_THREADS"] = str(THREADS)
os.environ["OMP_NUM_THREADS"] = str(THREADS)

import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
BEFORE = sys.argv[2] if len(sys.argv) > 2 else None

# (label, input shape, weight shape, stride, pad): the convolutions of fixtures.ResNet at B32.
CONVS = [
    ("stem 32x3x32x32 k3 8", (32, 3, 32, 32), (8, 3, 3, 3), 1, 1),
    ("layer1 32x8x16x16 k3 8", (32, 8, 16, 16), (8, 8, 3, 3), 1, 1),
    ("layer2a 32x8x16x16 k3 s2 16", (32, 8, 16, 16), (16, 8, 3, 3), 2, 1),
    ("layer2b 32x16x8x8 k3 16", (32, 16, 8, 8), (16, 16, 3, 3), 1, 1),
    ("down 32x8x16x16 k1 s2 16", (32, 8, 16, 16), (16, 8, 1, 1), 2, 0),
]
POOL = ("maxpool 32x8x32x32 k3 s2 p1", (32, 8, 32, 32))


def best_ms(fn, reps=30):
    for _ in range(3):
        fn()
    best = 1e30
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def torch_times(dtype):
    times = {}
    for label, xs, ws, stride, pad in CONVS:
        x, w = torch.randn(xs, dtype=dtype), torch.randn(ws, dtype=dtype)
        y = torch.nn.functional.conv2d(x, w, None, stride, pad)
        dy = torch.randn(y.shape, dtype=dtype)

        def grad(mask):
            return lambda: torch.ops.aten.convolution_backward(
                dy, x, w, None, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1, mask)

        times[f"conv {label}"] = best_ms(lambda: torch.nn.functional.conv2d(x, w, None, stride, pad))
        times[f"conv_grad_input {label}"] = best_ms(grad([True, False, False]))
        times[f"conv_grad_weight {label}"] = best_ms(grad([False, True, False]))
    label, xs = POOL
    x = torch.randn(xs, dtype=dtype)
    y, indices = torch.ops.aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])
    dy = torch.randn(y.shape, dtype=dtype)
    times[f"max_pool {label}"] = best_ms(
        lambda: torch.ops.aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1]))
    times[f"max_pool_grad {label}"] = best_ms(
        lambda: torch.ops.aten.max_pool2d_with_indices_backward(
            dy, x, [3, 3], [2, 2], [1, 1], [1, 1], False, indices))
    # What memc runs with --max-pool-argmax on (the default): PyTorch's pair is the same ops,
    # its indices int64 where memc's taps are one byte.
    times[f"max_pool_with_argmax {label}"] = times[f"max_pool {label}"]
    times[f"max_pool_grad_argmax {label}"] = times[f"max_pool_grad {label}"]
    return times


def memc_times(bench, group="resnet"):
    """memc-kernel-bench's best times (ms) of the `group` cases, by label without the group."""
    prefix = group + " "
    out = subprocess.run([bench, prefix],
                         check=True, capture_output=True, text=True,
                         env=dict(os.environ, MEMC_NUM_THREADS=str(THREADS))).stdout
    times = {}
    for line in out.splitlines():
        if line.startswith(prefix):
            head = line[len(prefix):].split(" ms", 1)[0]
            label, ms = head.rsplit(None, 1)
            times[label.strip()] = float(ms)
    return times


def main():
    torch.set_num_threads(THREADS)
    memc = memc_times(os.path.join(BUILD, "test", "kernels", "memc-kernel-bench"))
    before = memc_times(BEFORE) if BEFORE else {}
    print(f"threads: {THREADS}\n")
    print("| kernel | dtype | PyTorch ms |" + (" memc before ms |" if BEFORE else "") +
          " memc ms | memc / PyTorch |")
    print("|---|---|---|" + ("---|" if BEFORE else "") + "---|---|")
    for dtype, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
        for key, theirs in torch_times(dtype).items():
            ours = memc.get(f"{key} {name}")
            if ours is None:
                continue
            earlier = f" {before[f'{key} {name}']:.3f} |" if BEFORE else ""
            print(f"| {key} | {name} | {theirs:.3f} |{earlier} {ours:.3f} | {ours / theirs:.2f} |")


if __name__ == "__main__":
    main()
