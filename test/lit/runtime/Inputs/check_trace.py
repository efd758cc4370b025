"""Checks a --profile Chrome trace: a traceEvents list of complete events ("ph": "X") on the
steps' track (tid 1), one per plan step of each traced run, each named, with non-negative ts and
dur in microseconds, in time order, and the step indices of each run 0, 1, 2, ...; then the
worker tracks (tid 2 and up, each named by a "thread_name" metadata event): complete events,
each named after a step event it lies inside.

usage: check_trace.py TRACE.json RUNS"""
import json
import sys

trace = json.load(open(sys.argv[1]))
runs = int(sys.argv[2])
events = [e for e in trace["traceEvents"] if e["ph"] != "M"]
names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
         if e["ph"] == "M" and e["name"] == "thread_name"}
steps = [e for e in events if e["tid"] == 1]
indices = [e["args"]["step"] for e in steps]
per_run = len(steps) // runs if runs else 0
ok = (len(steps) == per_run * runs and per_run > 0
      and all(e["ph"] == "X" and e["name"] and e["dur"] >= 0 and e["ts"] >= 0 for e in steps)
      and all(a["ts"] <= b["ts"] for a, b in zip(steps, steps[1:]))
      and indices == list(range(per_run)) * runs)
print(f"trace events: one per step of {runs} runs, complete, named, ordered: {ok}")

slack = 1.0  # microseconds: the trace rounds times to 1 ns, the steps' marks and spans differ


def inside(span):
    middle = span["ts"] + span["dur"] / 2
    return any(s["name"] == span["name"] and s["args"]["step"] == span["args"]["step"]
               and s["ts"] - slack <= middle <= s["ts"] + s["dur"] + slack for s in steps)


workers = [e for e in events if e["tid"] != 1]
tracks = sorted({e["tid"] for e in workers})
ok = (all(e["ph"] == "X" and e["tid"] >= 2 and e["dur"] >= 0 and inside(e) for e in workers)
      and all(t in names for t in tracks) and names.get(1) == "steps")
print(f"worker tracks: {len(tracks)}, each event named after the step it ran in: {ok}")
