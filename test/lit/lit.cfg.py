# lit configuration for memc: IR tests through memc-opt and import tests through memc, checked
# with FileCheck. Run from the build tree (ctest, or `ninja check-memc`).
import os
import subprocess

import lit.formats

config.name = "memc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.memc_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.memc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(
    ("%fixtures", os.path.join(config.memc_source_dir, "test", "fixtures")))
config.substitutions.append(("%python", config.python_executable))
# Data-parallel programs' ranks: CI runs as root and starts more ranks than it has cores.
config.substitutions.append(("%mpirun", "mpirun --allow-run-as-root --oversubscribe"))
# The CUDA runner exists where the build found nvcc (programs for --target cuda can be written);
# "gpu" where a GPU answers (the build machines have none).
if os.path.exists(os.path.join(config.memc_tools_dir, "memc-runner-cuda")):
    config.available_features.add("cuda-runner")
# Its data-parallel counterpart, where the build found NCCL too.
if os.path.exists(os.path.join(config.memc_tools_dir, "memc-runner-cuda-mpi")):
    config.available_features.add("cuda-mpi-runner")
try:
    if subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0:
        config.available_features.add("gpu")
except (OSError, subprocess.TimeoutExpired):
    pass
