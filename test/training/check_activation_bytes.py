"""Checks that --precision bf16 plans store their activations in 16 bits
(precision-pytorch.test).

    check_activation_bytes.py MAX_RATIO DIR MODEL...

DIR holds MODEL.fp32.json and MODEL.bf16.json, memc's --report-json reports. For each model, the
most activation bytes (what the step saves for the backward) live at any step of the bf16 plan
must be at most MAX_RATIO times the fp32 plan's. Exit 0, or 1 with the models that miss.
"""

import json
import sys


def most_live_activations(path):
    with open(path) as f:
        return json.load(f)["most_live_bytes"]["activations"]


def main(max_ratio, directory, models):
    failures = []
    for model in models:
        fp32 = most_live_activations(f"{directory}/{model}.fp32.json")
        bf16 = most_live_activations(f"{directory}/{model}.bf16.json")
        if fp32 <= 0:
            failures.append(f"{model}: the fp32 plan saves no activations")
            continue
        print(f"{model}: bf16 activations {bf16} B, fp32 {fp32} B ({bf16 / fp32:.2f}x)")
        if not bf16 <= max_ratio * fp32:
            failures.append(f"{model}: bf16 activations are {bf16 / fp32:.2f}x fp32's, over "
                            f"{max_ratio}x")
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]), sys.argv[2], sys.argv[3:]))
