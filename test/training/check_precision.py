"""Checks memc's --precision bf16 training against PyTorch's autocast (precision-pytorch.test).

    check_precision.py [--low=fp16] REFERENCE.npz MULTIPLE DIR MODEL...

DIR holds MODEL.fp32.jsonl and MODEL.bf16.jsonl (MODEL.fp16.jsonl with --low=fp16), memc's
training logs. For each model, the
largest step-by-step distance of memc's bf16 (fp16) loss trace from memc's fp32 trace must be at most
MULTIPLE times the distance of autocast-bf16's trace from PyTorch's fp32 trace (both recorded by
make_precision_references.py); memc's fp32 trace must follow PyTorch's closer than autocast does,
so the comparison is between precisions and not between implementations. Exit 0, or 1 with the
models that miss. torch 1.13 has no fp16 autocast on the CPU, so fp16 is held to autocast-bf16's
deviation: fp16 keeps 3 more mantissa bits than bf16, so its own autocast deviates less.
"""

import json
import sys

import numpy as np


def log_losses(path):
    with open(path) as f:
        return np.array([json.loads(line)["loss"] for line in f], np.float64)


def main(reference_path, multiple, directory, models, low="bf16"):
    reference = np.load(reference_path)
    failures = []
    for model in models:
        torch_fp32 = reference[f"fp32/{model}"].astype(np.float64)
        autocast = reference[f"autocast_bf16/{model}"].astype(np.float64)
        memc_fp32 = log_losses(f"{directory}/{model}.fp32.jsonl")
        memc_bf16 = log_losses(f"{directory}/{model}.{low}.jsonl")
        if not len(memc_fp32) == len(memc_bf16) == len(torch_fp32):
            failures.append(f"{model}: {len(memc_bf16)} and {len(memc_fp32)} logged steps, "
                            f"PyTorch's trace has {len(torch_fp32)}")
            continue
        autocast_deviation = np.abs(autocast - torch_fp32).max()
        memc_deviation = np.abs(memc_bf16 - memc_fp32).max()
        implementation_gap = np.abs(memc_fp32 - torch_fp32).max()
        print(f"{model}: memc {low} deviates {memc_deviation:.3g} from memc fp32, autocast "
              f"{autocast_deviation:.3g} from torch fp32 ({memc_deviation / autocast_deviation:.2f}x); "
              f"memc fp32 is {implementation_gap:.3g} from torch fp32")
        if not memc_deviation <= multiple * autocast_deviation:
            failures.append(f"{model}: {low} deviation {memc_deviation:.3g} is over {multiple}x "
                            f"autocast's {autocast_deviation:.3g}")
        if not implementation_gap < autocast_deviation:
            failures.append(f"{model}: memc fp32 is {implementation_gap:.3g} from torch fp32, "
                            f"not closer than autocast's {autocast_deviation:.3g}")
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    arguments = sys.argv[1:]
    low = "bf16"
    if arguments and arguments[0].startswith("--low="):
        low = arguments.pop(0)[len("--low="):]
    sys.exit(main(arguments[0], float(arguments[1]), arguments[2], arguments[3:], low))
