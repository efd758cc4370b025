"""Compares one rank's planned model state under ZeRO with stage 0's (memc --report-json):
optimizer state within 1/N + 5% of stage 0's, gradient accumulators within 1/N + 15%, and
parameters (trained and frozen, and buffers) within 1/N + 25%.
Prints one line per category FileCheck reads ("optimizer_state ok" or FAIL with the ratio).
Usage: zero_memory.py STAGE0.json STAGE_K.json"""
import json
import sys

base, sharded = (json.load(open(path))["data_parallel"] for path in sys.argv[1:3])
ranks = sharded["world_size"]
for name, key, slack in (("optimizer_state", "optimizer_state_bytes", 0.05),
                         ("gradient_accumulators", "gradient_accumulator_bytes", 0.15),
                         ("parameters", "parameter_bytes", 0.25)):
    if base[key] == 0:
        print(f"{name} none")
        continue
    ratio = sharded[key] / base[key]
    verdict = "ok" if ratio <= 1 / ranks + slack else "FAIL"
    print(f"{name} {verdict} ({ratio:.3f} of stage 0's, limit 1/{ranks} + {slack:g})")
