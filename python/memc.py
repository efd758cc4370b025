"""memc from Python: the memory ladder of a model, and its training executable.

    import memc
    rows = memc.explain_memory(model, (example_input,), loss="cross_entropy", vram_budget="24GiB")
    memc.compile_training(model, (example_input,), "train", loss="cross_entropy", lr=3e-4)

The torch functions export the module with memc_export.export (beside this file) into a
temporary directory and run memc on it; the *_file functions take an ONNX file and need no torch.
Keyword arguments are memc's flags (memc_flags says how they are written). memc's output goes
to sys.stdout and sys.stderr; a memc that fails raises MemcError with what it said.

memc is the `memc` argument, else $MEMC, else `memc` on PATH, else ../build/bin/memc beside
this file.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

_BUILT_MEMC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin", "memc")


class MemcError(RuntimeError):
    """memc exited with an error: `stderr` holds its messages, `returncode` its exit status."""

    def __init__(self, argv, returncode, stderr):
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"memc exited with status {returncode}:\n{stderr.rstrip()}")


def _flag_values(value):
    """The values a flag takes, one per occurrence: a list or a dict gives the flag once per
    item (memc's list flags, --input-shape, --freeze and the others, are given that way, and
    --lora-targets takes it as well as a comma-joined list)."""
    if isinstance(value, dict):
        return [f"{name}={'x'.join(map(str, dims)) if isinstance(dims, (list, tuple)) else dims}"
                for name, dims in value.items()]
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    return [str(value)]


def memc_flags(**flags):
    """memc's argv for keyword arguments: vram_budget="24GiB" is --vram-budget 24GiB, True the
    bare flag, False and None nothing, a list the flag once per item (lora_targets=["q_proj",
    "v_proj"]), and a dict NAME=DIMS items (input_shape={"input_ids": (4, 128)} is
    --input-shape input_ids=4x128)."""
    argv = []
    for name, value in flags.items():
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            argv.append(flag)
            continue
        for item in _flag_values(value):
            argv += [flag, item]
    return argv


def find_memc(memc=None):
    """The memc binary to run: `memc`, $MEMC, `memc` on PATH, or the build tree's."""
    found = memc or os.environ.get("MEMC") or shutil.which("memc")
    if found:
        return found
    if os.access(_BUILT_MEMC, os.X_OK):
        return os.path.normpath(_BUILT_MEMC)
    raise FileNotFoundError("memc: no memc binary: pass memc=PATH, set $MEMC, put memc on PATH "
                            f"or build it ({os.path.normpath(_BUILT_MEMC)})")


def _run(memc, onnx_path, argv):
    command = [find_memc(memc), os.fspath(onnx_path)] + argv
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        raise MemcError(command, done.returncode, done.stderr)
    sys.stderr.write(done.stderr)


def explain_memory_file(onnx_path, memc=None, **flags):
    """The memory ladder of training the model in `onnx_path` with `flags`: memc's
    --explain-memory rows (dicts with name, flags, peak_bytes, fits, breakdown,
    recompute_flops_pct), in memc's order."""
    with tempfile.TemporaryDirectory(prefix="memc-") as scratch:
        report = os.path.join(scratch, "report.json")
        _run(memc, onnx_path, ["--explain-memory", "--report-json", report] + memc_flags(**flags))
        with open(report) as file:
            return json.load(file)["ladder"]


def compile_training_file(onnx_path, output, memc=None, **flags):
    """Compiles the model in `onnx_path` into the training executable `output`; its path."""
    _run(memc, onnx_path, memc_flags(**flags) + ["-o", os.fspath(output)])
    return os.path.abspath(output)


def _exported(model, example_inputs, scratch, export_options):
    from memc_export import export  # torch is needed here only

    path = os.path.join(scratch, "model.onnx")
    export(model, example_inputs, path, **(export_options or {}))
    return path


def explain_memory(model, example_inputs, memc=None, export_options=None, **flags):
    """explain_memory_file for a torch module exported on `example_inputs` (export_options go
    to memc_export.export: input_names, output_names, batch_axis, ...)."""
    with tempfile.TemporaryDirectory(prefix="memc-") as scratch:
        onnx_path = _exported(model, example_inputs, scratch, export_options)
        return explain_memory_file(onnx_path, memc=memc, **flags)


def compile_training(model, example_inputs, output, memc=None, export_options=None, **flags):
    """compile_training_file for a torch module exported on `example_inputs`."""
    with tempfile.TemporaryDirectory(prefix="memc-") as scratch:
        onnx_path = _exported(model, example_inputs, scratch, export_options)
        return compile_training_file(onnx_path, output, memc=memc, **flags)
