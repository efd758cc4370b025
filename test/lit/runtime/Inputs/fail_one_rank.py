"""Ends or stops one rank of a data-parallel run once it has checkpointed, and reports how
every rank ended. Then resumes from the last checkpoint and checks the losses against an
uninterrupted run's.
Usage: fail_one_rank.py kill|stop MPIRUN_ARGS PROGRAM DATA DIR [PROGRAM_FLAGS...]
  kill: SIGKILL rank 1 (a rank that dies); stop: SIGSTOP rank 1 (a rank that hangs: the others'
  --collective-timeout must end the run).
Prints: "ended: exit code nonzero True, ranks left 0" and, for kill, "resumed: losses match
True" (the seconds it took go to stderr: timing is not a verdict here)."""
import json
import os
import shlex
import signal
import struct
import subprocess
import sys
import time

mode, mpirun, program, data, folder = sys.argv[1:6]
extra = sys.argv[6:]
checkpoints = os.path.join(folder, "ck")
checkpoint = os.path.join(checkpoints, "checkpoint.safetensors")


def ranks_of(program):
    """The pids of the processes running `program`, by their rank."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
            environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        except OSError:
            continue
        if os.path.realpath(exe) != os.path.realpath(program):
            continue
        for entry in environ:
            if entry.startswith(b"OMPI_COMM_WORLD_RANK="):
                found[int(entry.split(b"=")[1])] = int(pid)
    return found


def checkpoint_step():
    blob = open(checkpoint, "rb").read()
    (length,) = struct.unpack("<Q", blob[:8])
    return int(json.loads(blob[8:8 + length])["__metadata__"]["step"])


def train(steps, *flags):
    command = shlex.split(mpirun) + [program, "--data", data, "--steps", str(steps)] + \
        list(flags) + extra
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)


def losses(path):
    return {r["step"]: r["loss"] for r in map(json.loads, open(path))}


command = shlex.split(mpirun) + [program, "--data", data, "--steps", "1000000", "--checkpoint",
                                 checkpoints, "--checkpoint-every", "1"] + extra
with open(os.path.join(folder, "failed.log"), "wb") as out:
    run = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while not os.path.exists(checkpoint) and time.time() < deadline and run.poll() is None:
        time.sleep(0.05)
    pids = ranks_of(program)
    start = time.time()
    os.kill(pids[1], signal.SIGKILL if mode == "kill" else signal.SIGSTOP)
    try:
        code = run.wait(timeout=120)
    except subprocess.TimeoutExpired:
        run.kill()
        code = run.wait()
    took = time.time() - start
left = ranks_of(program)
for pid in left.values():
    os.kill(pid, signal.SIGKILL)
print(f"ended: exit code nonzero {code != 0}, ranks left {len(left)}")
print(f"{mode}: every rank ended {took:.1f} s after rank 1 was signalled", file=sys.stderr)
sys.stdout.write(open(os.path.join(folder, "failed.log")).read())

if mode == "kill":
    saved = checkpoint_step()
    resumed_log, full_log = os.path.join(folder, "resumed.jsonl"), os.path.join(folder, "full.jsonl")
    resumed = train(saved + 3, "--resume", checkpoints, "--log", resumed_log)
    full = train(saved + 3, "--log", full_log)
    got, want = losses(resumed_log), losses(full_log)
    match = resumed.returncode == 0 and full.returncode == 0 and sorted(got) == list(
        range(saved + 1, saved + 4)) and all(got[s] == want[s] for s in got)
    print(f"resumed: losses match {match}")
