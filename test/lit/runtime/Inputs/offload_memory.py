"""Compares the --report-json of a plan without offload and with --offload-optimizer cpu: what
the host holds, that it holds all the optimizer state the plan without offload has, and that
none is left on the device.

usage: offload_memory.py PLAIN.json OFFLOADED.json"""
import json
import sys

plain, offloaded = (json.load(open(path)) for path in sys.argv[1:3])
host = offloaded["host_breakdown"]
print("host holds", " and ".join(sorted(host)))
print("host optimizer state = the state without offload:",
      host["optimizer_state"] == plain["most_live_bytes"]["optimizer_state"])
print("device optimizer state 0, device peak below 0.5x:",
      offloaded["most_live_bytes"]["optimizer_state"] == 0 and
      offloaded["peak_bytes"] < 0.5 * plain["peak_bytes"])
