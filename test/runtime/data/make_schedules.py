"""Writes schedules.json: the learning rate of each optimizer step under Hugging Face's schedules,
by transformers' own formulas (transformers/optimization.py, written out here because transformers
is not a Debian package): LambdaLR multiplies the base rate by lr_lambda(current_step), and the
Trainer steps the scheduler after each optimizer step, so optimizer step s runs at
lr_lambda(s - 1). LearningRateTest.cpp compares memc's schedule with these numbers.

Run with any python3: python3 test/runtime/data/make_schedules.py
"""
import json
import math
import os


def constant_with_warmup(num_warmup_steps):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1.0, num_warmup_steps))
        return 1.0
    return lr_lambda


def linear_with_warmup(num_warmup_steps, num_training_steps):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step) /
                   float(max(1, num_training_steps - num_warmup_steps)))
    return lr_lambda


def cosine_with_warmup(num_warmup_steps, num_training_steps, num_cycles=0.5):
    def lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        progress = float(current_step - num_warmup_steps) / float(
            max(1, num_training_steps - num_warmup_steps))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))
    return lr_lambda


CASES = [  # kind, base lr, warmup, num_training_steps, optimizer steps to record
    ("constant", 3e-4, 0, 0, 5),
    ("constant", 1e-3, 4, 0, 8),
    ("linear", 5e-5, 0, 10, 12),
    ("linear", 2e-4, 3, 10, 12),
    ("cosine", 1e-3, 0, 20, 22),
    ("cosine", 6e-4, 5, 50, 52),
    ("cosine", 1e-3, 10, 110, 115),
]

if __name__ == "__main__":
    cases = []
    for kind, lr, warmup, total, steps in CASES:
        lr_lambda = {"constant": lambda: constant_with_warmup(warmup),
                     "linear": lambda: linear_with_warmup(warmup, total),
                     "cosine": lambda: cosine_with_warmup(warmup, total)}[kind]()
        rates = [lr * lr_lambda(step - 1) for step in range(1, steps + 1)]
        cases.append({"kind": kind, "lr": lr, "warmup": warmup, "total": total,
                      "rates": [repr(rate) for rate in rates]})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schedules.json")
    with open(path, "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")
