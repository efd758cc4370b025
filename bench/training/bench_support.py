"""What the training benchmarks share: memc's programs in the build folder named on the command
line, running a command (the run stops with its output when it fails), and the median step time
of a training log after the warm-up steps."""
import json
import os
import statistics
import subprocess
import sys

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


def gib(n):
    return f"{n / 2**30:.2f}"
