"""Checks memc's --precision fp16 training log against make_loss_scale_reference.py's
GradScaler reference (loss-scale-gradscaler.test).

    check_loss_scale.py REFERENCE.npz TOLERANCE LOG.jsonl

Every step's loss_scale and skipped must be the reference's exactly, and its loss within
TOLERANCE of the reference's f32 loss (fp16's rounding; a skipped step that still updated, or an
AdamW step count that counted skipped steps, moves the losses that follow by far more). Exit 0,
or 1 with the steps that differ.
"""

import json
import sys

import numpy as np


def main(reference_path, tolerance, log_path):
    reference = np.load(reference_path)
    with open(log_path) as f:
        log = [json.loads(line) for line in f]
    failures = []
    if len(log) != len(reference["loss"]):
        failures.append(f"{len(log)} logged steps, the reference has {len(reference['loss'])}")
    worst = 0.0
    for step, (entry, scale, skipped, loss) in enumerate(
            zip(log, reference["loss_scale"], reference["skipped"], reference["loss"]), 1):
        if entry["loss_scale"] != float(scale) or entry["skipped"] != bool(skipped):
            failures.append(f"step {step}: loss_scale {entry['loss_scale']} skipped "
                            f"{entry['skipped']}, GradScaler: {float(scale)} {bool(skipped)}")
        worst = max(worst, abs(entry["loss"] - float(loss)))
    skips = int(np.sum(reference["skipped"]))
    print(f"{len(log)} steps, {skips} skipped; the largest loss difference is {worst:.3g}")
    if not worst <= tolerance:
        failures.append(f"a loss differs by {worst:.3g} from the reference, over {tolerance}")
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2]), sys.argv[3]))
