"""What the training benchmarks share: memc's programs in the build folder named on the command
line, running a command (the run stops with its output when it fails), and the median step time
of a training log after the warm-up steps, and a small zoo model with token data to time."""
import json
import os
import statistics
import subprocess
import sys

import numpy as np

WARMUP = 3


def programs(default_steps):
    """(memc, memc-zoo, steps) from argv: [BUILD_DIR] [STEPS]."""
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else default_steps
    return os.path.join(build, "bin", "memc"), os.path.join(build, "bin", "memc-zoo"), steps


def run(command, env=None):
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout}")
    return done.stdout


def median_ms(log):
    """The median ms of a --log's steps after the first WARMUP."""
    records = [json.loads(line) for line in open(log)]
    return statistics.median(r["ms"] for r in records if r["step"] > WARMUP)


def token_model(zoo, work, model, batch, seq, layers, vocab, samples):
    """A small memc-zoo model (random weights) and next-token data for it, in `work`:
    (model.onnx, data.npz)."""
    onnx_path, data = os.path.join(work, "small.onnx"), os.path.join(work, "small.npz")
    run([zoo, "--model", model, "--batch", str(batch), "--seq", str(seq), "--layers", str(layers),
         "--vocab", str(vocab), "-o", onnx_path])
    ids = np.random.default_rng(0).integers(0, vocab, (samples, seq))
    np.savez(data, input_ids=ids, labels=np.roll(ids, -1, 1))
    return onnx_path, data


def gib(n):
    return f"{n / 2**30:.2f}"
