"""precision-accumulation.test's check.

    check_low_precision_accumulation.py REFERENCE.npz MODEL FP32.jsonl LOW.jsonl...

Each low-precision log's largest step-by-step distance from the fp32 log must be at most twice
autocast-bf16's own largest deviation from fp32 on MODEL (over the reference's steps). Twice:
which library computes a 16-bit product moves the deviation by that much between correct
kernels (llama, bf16: 0.00053 with the fused head's products widened to sgemm, 0.00081 with them
on oneDNN, autocast's 0.00055); a stale or unmade weight copy is far beyond it."""

import json
import sys

import numpy as np


def losses(path):
    with open(path) as f:
        return np.array([json.loads(line)["loss"] for line in f], np.float64)


reference = np.load(sys.argv[1])
model = sys.argv[2]
autocast = np.abs(reference[f"autocast_bf16/{model}"].astype(np.float64) -
                  reference[f"fp32/{model}"].astype(np.float64)).max()
bound = 2 * autocast
fp32 = losses(sys.argv[3])
failed = False
for path in sys.argv[4:]:
    low = losses(path)
    name = path.rsplit("/", 1)[-1].split(".")[0]
    deviation = np.abs(low - fp32).max() if len(low) == len(fp32) else float("inf")
    within = deviation <= bound
    failed |= not within
    print(f"{name} deviates {deviation:.3g} from fp32, {'within' if within else 'FAIL over'} "
          f"twice autocast-bf16's {autocast:.3g}")
sys.exit(1 if failed else 0)
