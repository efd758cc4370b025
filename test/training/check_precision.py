"""Checks memc's --precision bf16 training against PyTorch's autocast (precision-pytorch.test).

    check_precision.py REFERENCE.npz MULTIPLE DIR MODEL...

DIR holds MODEL.fp32.jsonl and MODEL.bf16.jsonl, memc's training logs. For each model, the
largest step-by-step distance of memc's bf16 loss trace from memc's fp32 trace must be at most
MULTIPLE times the distance of autocast-bf16's trace from PyTorch's fp32 trace (both recorded by
make_precision_references.py); memc's fp32 trace must follow PyTorch's closer than autocast does,
so the comparison is between precisions and not between implementations. Exit 0, or 1 with the
models that miss.
"""

import json
import sys

import numpy as np


def log_losses(path):
    with open(path) as f:
        return np.array([json.loads(line)["loss"] for line in f], np.float64)


def main(reference_path, multiple, directory, models):
    reference = np.load(reference_path)
    failures = []
    for model in models:
        torch_fp32 = reference[f"fp32/{model}"].astype(np.float64)
        autocast = reference[f"autocast_bf16/{model}"].astype(np.float64)
        memc_fp32 = log_losses(f"{directory}/{model}.fp32.jsonl")
        memc_bf16 = log_losses(f"{directory}/{model}.bf16.jsonl")
        if not len(memc_fp32) == len(memc_bf16) == len(torch_fp32):
            failures.append(f"{model}: {len(memc_bf16)} and {len(memc_fp32)} logged steps, "
                            f"PyTorch's trace has {len(torch_fp32)}")
            continue
        autocast_deviation = np.abs(autocast - torch_fp32).max()
        memc_deviation = np.abs(memc_bf16 - memc_fp32).max()
        implementation_gap = np.abs(memc_fp32 - torch_fp32).max()
        print(f"{model}: memc bf16 deviates {memc_deviation:.3g} from memc fp32, autocast "
              f"{autocast_deviation:.3g} from torch fp32 ({memc_deviation / autocast_deviation:.2f}x); "
              f"memc fp32 is {implementation_gap:.3g} from torch fp32")
        if not memc_deviation <= multiple * autocast_deviation:
            failures.append(f"{model}: bf16 deviation {memc_deviation:.3g} is over {multiple}x "
                            f"autocast's {autocast_deviation:.3g}")
        if not implementation_gap < autocast_deviation:
            failures.append(f"{model}: memc fp32 is {implementation_gap:.3g} from torch fp32, "
                            f"not closer than autocast's {autocast_deviation:.3g}")
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]))
