"""Measures memc's and oneDNN's convolution kernels over a grid of shapes and writes the table the
CPU target chooses between them by (kernels/cpu/ConvChoiceTable.inc, read by ConvChoice.h).

  /usr/bin/python3 bench/kernels/conv_choice_table.py [BUILD_DIR]

The grid: input channels 3..512 (3, 8, 16, 64, 256, 512), square images 7..224, windows 1/3/7 (pads of half the window),
strides 1/2, batches 1/8/64, each forward, input gradient and weight gradient in f32 and bf16;
out channels follow the input's as networks do (16 at least, doubled at stride 2, 512 at most).
Shapes above 2^32 multiply-adds or 256 MiB per f32 tensor are left out (they take seconds per
call and would not change the answer: both sides run at their peak there). Each point is timed
by `memc-kernel-bench --conv-grid` at 1 and at 2 threads, best of at least 3 runs after a warm-up,
each side forced in turn. About 20 minutes on the 2-core build machine; run it on a quiet machine
and commit the table with the summary it prints (docs/benchmarks.md).
"""
import datetime
import itertools
import math
import os
import platform
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
TABLE = os.path.join(ROOT, "kernels", "cpu", "ConvChoiceTable.inc")

CHANNELS = [3, 8, 16, 64, 256, 512]
SIZES = [7, 14, 28, 56, 112, 224]
WINDOWS = [1, 3, 7]
STRIDES = [1, 2]
BATCHES = [1, 8, 64]
DIRECTIONS = {"conv": "kForward", "conv_grad_input": "kGradInput",
              "conv_grad_weight": "kGradWeight"}
DTYPES = {"f32": "kF32", "bf16": "kBF16"}
MAX_MULTIPLY_ADDS = 2**32
MAX_TENSOR_BYTES = 2**28


def grid():
    """(batch, channels, size, out channels, window, stride) of each measured shape."""
    for channels, size, window, stride, batch in itertools.product(
            CHANNELS, SIZES, WINDOWS, STRIDES, BATCHES):
        out_channels = min(512, max(16, channels) * stride)
        out = (size + 2 * (window // 2) - window) // stride + 1
        multiply_adds = batch * out_channels * out * out * channels * window * window
        largest = 4 * batch * max(channels * size * size, out_channels * out * out)
        if multiply_adds <= MAX_MULTIPLY_ADDS and largest <= MAX_TENSOR_BYTES:
            yield batch, channels, size, out_channels, window, stride


def measure(lines, threads):
    bench = os.path.join(BUILD, "test", "kernels", "memc-kernel-bench")
    env = dict(os.environ, MEMC_NUM_THREADS=str(threads))
    process = subprocess.Popen([bench, "--conv-grid"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env=env)
    # Fed from a thread: the shapes fill more than a pipe holds, and so do the results.
    def feed():
        process.stdin.write("".join(line + "\n" for line in lines))
        process.stdin.close()
    threading.Thread(target=feed, daemon=True).start()
    times = []
    for done, result in enumerate(process.stdout, 1):
        fields = result.split()
        times.append((float(fields[-2]), float(fields[-1])))
        print(f"\r{threads} thread(s): {done}/{len(lines)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if process.wait() != 0 or len(times) != len(lines):
        sys.exit(f"memc-kernel-bench --conv-grid failed at {threads} thread(s)")
    return times


def cpu_model():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    points = [(direction, dtype, shape) for direction in DIRECTIONS for dtype in DTYPES
              for shape in grid()]
    lines = [f"{d} {t} {' '.join(map(str, shape))}" for d, t, shape in points]
    one, two = measure(lines, 1), measure(lines, 2)
    rows, summary = [], {}
    for (direction, dtype, (b, c, s, m, k, st)), (m1, o1), (m2, o2) in zip(points, one, two):
        rows.append(f"{{{DIRECTIONS[direction]}, {DTYPES[dtype]}, {b}, {c}, {s}, {m}, {k}, {st}, "
                    f"{{{m1:.4f}, {m2:.4f}}}, {{{o1:.4f}, {o2:.4f}}}}},")
        memc = m1 + m2
        onednn = o1 + o2 if o1 >= 0 else memc
        summary.setdefault((direction, dtype), []).append((memc, onednn))
    with open(TABLE, "w") as table:
        table.write(f"// Written by bench/kernels/conv_choice_table.py on {cpu_model()}, "
                    f"{datetime.date.today()}:\n// do not edit. Each row: direction, dtype, batch, "
                    "channels, image size, out channels,\n// window, stride, memc's ms at 1 "
                    "and 2 threads, oneDNN's (-1: no optimized implementation).\n")
        table.write("// clang-format off\n" + "\n".join(rows) + "\n// clang-format on\n")
    count = len(points) // len(summary)
    print(f"{count} shapes per direction and dtype. Times are the sums of the 1- and 2-thread "
          "best times; slower: the geometric mean over the shapes of a fixed side's time over "
          "the table's choice.")
    print("| kernel | dtype | oneDNN faster | always memc: sum, slower | always oneDNN: sum, slower"
          " | the table's choice: sum |")
    print("|---|---|---|---|---|---|")
    for (direction, dtype), times in summary.items():
        wins = sum(onednn < memc for memc, onednn in times)
        chosen = [min(pair) for pair in times]
        sums = [sum(column) for column in zip(*times)]
        slower = [math.exp(sum(math.log(t[i] / best) for t, best in zip(times, chosen)) / count)
                  for i in range(2)]
        print(f"| {direction} | {dtype} | {wins}/{count} | {sums[0]:.0f} ms, {slower[0]:.2f}x | "
              f"{sums[1]:.0f} ms, {slower[1]:.2f}x | {sum(chosen):.0f} ms |")


if __name__ == "__main__":
    main()
