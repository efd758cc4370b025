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
for sent in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    run = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    # Bounded by the run itself: it either writes its checkpoint or ends.
    while not os.path.exists(checkpoint) and run.poll() is None:
        time.sleep(0.05)
    time.sleep(0.2)  # a few more checkpoints: the signal lands mostly mid-write
    run.send_signal(sent)
    codes.append(run.wait())
print("codes", codes, "temporaries", glob.glob(os.path.join(folder, "*.tmp.*")))
