"""Checks a --profile Chrome trace: a traceEvents list of complete events ("ph": "X"), one per
plan step of each traced run, each named, with non-negative ts and dur in microseconds, in
time order, and the step indices of each run 0, 1, 2, ...

usage: check_trace.py TRACE.json RUNS"""
import json
import sys

trace = json.load(open(sys.argv[1]))
runs = int(sys.argv[2])
events = trace["traceEvents"]
steps = [e["args"]["step"] for e in events]
per_run = len(events) // runs if runs else 0
ok = (len(events) == per_run * runs and per_run > 0
      and all(e["ph"] == "X" and e["name"] and e["dur"] >= 0 and e["ts"] >= 0 for e in events)
      and all(a["ts"] <= b["ts"] for a, b in zip(events, events[1:]))
      and steps == list(range(per_run)) * runs)
print(f"trace events: one per step of {runs} runs, complete, named, ordered: {ok}")
