"""Checks memc's planning answers against real compiles of the flags they name.

  check_planning.py ladder MEMC MODEL LADDER.json WORKDIR
      every row of --explain-memory's JSON equals `memc MODEL <row flags> --report-json` (peak,
      breakdown, fits, recompute) to the byte; a row with an error fails to compile with it; a
      row's --max-seq length fits and that plus its step does not
  check_planning.py micro-batch MEMC MODEL WORKDIR ARGS...
      runs `memc MODEL ARGS...` (with --micro-batch auto), reads the micro-batch it chose, and
      checks that it fits and the next one up does not
  check_planning.py fit MEMC MODEL WORKDIR ARGS...
      runs `memc MODEL ARGS...` (with --fit auto): the choice fits, and every combination it
      planned with a lower estimated slowdown does not

Prints one line per check; exits 1 at the first disagreement.
"""
import json
import os
import re
import subprocess
import sys


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def report(memc, model, flags, path):
    """The --report-json of `memc model flags` (which may exit 1 for a budget it misses)."""
    if os.path.exists(path):
        os.remove(path)
    run = subprocess.run([memc, model] + flags + ["--report-json", path],
                         capture_output=True, text=True)
    if not os.path.exists(path):
        fail("memc %s wrote no report (exit %d): %s" % (" ".join(flags), run.returncode,
                                                         run.stderr.strip()))
    with open(path) as f:
        return json.load(f)


def check_ladder(memc, model, ladder_path, workdir):
    with open(ladder_path) as f:
        ladder = json.load(f)
    rows = ladder["ladder"] + ladder["batch_sweep"]
    if not rows:
        fail("no rows")
    for index, row in enumerate(rows):
        if "error" in row:
            run = subprocess.run([memc, model] + row["flags"], capture_output=True, text=True)
            if run.returncode != 1 or row["error"] not in run.stderr:
                fail("row %s: its flags do not fail with its error" % row["name"])
            print("row %s: fails as it says" % row["name"])
            continue
        compiled = report(memc, model, row["flags"], os.path.join(workdir, "row%d.json" % index))
        for key in ("peak_bytes", "fits", "breakdown", "host_breakdown", "most_live_bytes",
                    "recompute_flops_pct"):
            if compiled[key] != row[key]:
                fail("row %s: %s is %r, a compile with its flags gives %r" %
                     (row["name"], key, row[key], compiled[key]))
        print("row %s: peak %d bytes, as compiled" % (row["name"], row["peak_bytes"]))
        if row.get("max_seq"):
            longest = row["max_seq"]
            base = without(row["flags"], ["--seq-len"])
            at = report(memc, model, base + ["--seq-len", str(longest)],
                        os.path.join(workdir, "seq.json"))
            beyond = longest + row["max_seq_step"]
            above = report(memc, model, base + ["--seq-len", str(beyond)],
                           os.path.join(workdir, "seq.json"))
            if not at["fits"] or at["peak_bytes"] != row["max_seq_peak_bytes"] or above["fits"]:
                fail("row %s: --seq-len %d fits: %s (%d bytes), %d fits: %s" %
                     (row["name"], longest, at["fits"], at["peak_bytes"], beyond, above["fits"]))
            print("row %s: --seq-len %d fits, %d does not" % (row["name"], longest, beyond))


def run_choice(memc, model, args):
    run = subprocess.run([memc, model] + args, capture_output=True, text=True)
    if run.returncode != 0:
        fail("memc %s: exit %d: %s" % (" ".join(args), run.returncode, run.stderr.strip()))
    return run.stderr


def without(args, names):
    """args without the flags `names` (each followed by its value)."""
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in names:
            skip = True
        else:
            kept.append(arg)
    return kept


def check_micro_batch(memc, model, workdir, args):
    notes = run_choice(memc, model, args)
    found = re.search(r"--micro-batch auto: (\d+) fits", notes)
    if not found:
        fail("no choice in: " + notes)
    batch = int(found.group(1))
    base = without(args, ["--micro-batch", "--global-batch", "-o"])
    base = [arg for arg in base if arg not in ("--micro-batch=auto",)]
    chosen = report(memc, model, base + ["--micro-batch", str(batch)],
                    os.path.join(workdir, "chosen.json"))
    above = report(memc, model, base + ["--micro-batch", str(batch + 1)],
                   os.path.join(workdir, "above.json"))
    if not chosen["fits"] or above["fits"]:
        fail("micro-batch %d fits: %s; %d fits: %s" % (batch, chosen["fits"], batch + 1,
                                                       above["fits"]))
    print("micro-batch %d fits (%d bytes), %d does not (%d bytes)" %
          (batch, chosen["peak_bytes"], batch + 1, above["peak_bytes"]))


def check_fit(memc, model, workdir, args):
    notes = run_choice(memc, model, args)
    planned = re.findall(r"--fit auto planned (.*?): peak \S+ \S+( \(does not fit\))?, "
                         r"estimated slowdown \+([0-9.]+)%", notes)
    chose = re.search(r"--fit auto chose (.*)", notes)
    if not planned or not chose:
        fail("no choice in: " + notes)
    choice = chose.group(1).strip()
    estimates = {flags: float(slowdown) for flags, _, slowdown in planned}
    if choice not in estimates:
        fail("the choice %r was not among the plans" % choice)
    for flags, misses, slowdown in planned:
        if float(slowdown) < estimates[choice] and not misses:
            fail("%s fits with a lower estimate (%s%%) than the choice" % (flags, slowdown))
    base = without(args, ["--fit", "-o"])
    if choice != "the flags as given":
        chosen_flags = choice.split()
        base = without(base, chosen_flags[0::2]) + chosen_flags
    compiled = report(memc, model, base, os.path.join(workdir, "fit.json"))
    if not compiled["fits"]:
        fail("the choice %r does not fit when compiled" % choice)
    print("chose %s (of %d planned), which fits; every faster one planned does not" %
          (choice, len(planned)))


def main():
    command, memc, model = sys.argv[1:4]
    if command == "ladder":
        check_ladder(memc, model, sys.argv[4], sys.argv[5])
    elif command == "micro-batch":
        check_micro_batch(memc, model, sys.argv[4], sys.argv[5:])
    elif command == "fit":
        check_fit(memc, model, sys.argv[4], sys.argv[5:])
    else:
        fail("unknown command " + command)


if __name__ == "__main__":
    main()
