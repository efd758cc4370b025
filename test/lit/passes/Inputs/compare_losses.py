"""compare_losses.py RTOL A.jsonl B.jsonl: whether two training logs' losses agree step by step
to a relative RTOL; prints the first step that does not and exits 1."""
import json
import sys

rtol = float(sys.argv[1])
losses = [[json.loads(line)["loss"] for line in open(path)] for path in sys.argv[2:4]]
if len(losses[0]) != len(losses[1]) or not losses[0]:
    sys.exit("the logs have %d and %d steps" % tuple(map(len, losses)))
for step, (a, b) in enumerate(zip(*losses), start=1):
    if abs(a - b) > rtol * abs(b):
        sys.exit("step %d: loss %.9g against %.9g" % (step, a, b))
print("%d losses match to %g" % (len(losses[0]), rtol))
