#!/usr/bin/env bash
# The checks that need a GPU, run on a GPU host from binaries built beforehand on the build
# machine (which has the CUDA toolkit but no GPU) and copied with the tree: where the CUDA
# libraries were found and the GPU's name, then memc-nccl-check (runtime/comm's NCCL
# collectives on device buffers). A summary and the logs go to OUTDIR. The CUDA backend's checks
# (issue 26) join here.
# Usage: tools/gpu-check.sh OUTDIR   (MEMC_BUILD_DIR: the build, default build/;
#        MEMC_CUDA_LIBS: a folder of CUDA's libraries to use first)
set -uo pipefail
out="${1:?usage: tools/gpu-check.sh OUTDIR}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MEMC_BUILD_DIR:-$root/build}"
mkdir -p "$out"

# CUDA's libraries: MEMC_CUDA_LIBS, then pip's nvidia/*/lib beside the python3 in PATH (where
# GPU hosts with PyTorch keep NCCL), then /usr/local/cuda.
libs=()
[ -n "${MEMC_CUDA_LIBS:-}" ] && libs+=("$MEMC_CUDA_LIBS")
nvidia="$(python3 -c 'import nvidia; print(nvidia.__path__[0])' \
  2>/dev/null || true)"
if [ -n "$nvidia" ]; then
  for lib in "$nvidia"/*/lib; do [ -d "$lib" ] && libs+=("$lib"); done
fi
libs+=(/usr/local/cuda/lib64 /usr/local/cuda/lib)
export LD_LIBRARY_PATH="$build/runtime:$(IFS=:; echo "${libs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

{
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    2>&1 | head -n1)"
  echo "libraries searched: ${libs[*]}"
  ldd "$build/bin/memc-nccl-check" | grep -E 'nccl|cudart|MemcNccl'
} | tee "$out/environment.txt"

status=0
"$build/bin/memc-nccl-check" 2>&1 | tee "$out/nccl-check.log"
nccl=${PIPESTATUS[0]}
[ "$nccl" -eq 0 ] || status=1
{
  echo "| check | result |"
  echo "|---|---|"
  echo "| memc-nccl-check | $([ "$nccl" -eq 0 ] && echo passed || echo "FAILED (exit $nccl)") |"
} | tee "$out/summary.md"
exit $status
