"""Starts a training program that checkpoints every step, once per signal (SIGTERM, SIGINT,
SIGHUP); once its first checkpoint exists, sends the signal and waits. Prints the exit codes
and the temporaries left in the checkpoint folder.

Usage: signal_during_checkpoints.py FOLDER PROGRAM ARGS...
"""
import glob
import os
import signal
import subprocess
import sys
import time

folder, command = sys.argv[1], sys.argv[2:]
checkpoint = os.path.join(folder, "checkpoint.safetensors")
codes = []
messages = []


def written():
    return os.stat(checkpoint).st_mtime_ns if os.path.exists(checkpoint) else None


for sent in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    before = written()
    with open(os.path.join(folder, "..", "stderr.txt"), "w+") as log:
        run = subprocess.Popen(command, stderr=log)
        # Until this run has written a checkpoint of its own (so its handlers are in place);
        # bounded by the run itself: it either writes one or ends.
        while written() == before and run.poll() is None:
            time.sleep(0.05)
        time.sleep(0.2)  # a few more checkpoints: the signal lands mostly mid-write
        run.send_signal(sent)
        codes.append(run.wait())
        if codes[-1] != -sent:
            log.seek(0)
            messages.append(log.read()[-2000:])
print("codes", codes, "temporaries", glob.glob(os.path.join(folder, "*.tmp.*")))
for message in messages:  # why a run ended otherwise, for the failure's report
    print(message)
