#!/usr/bin/env bash
# Prepares, on the build machine (CUDA toolkit, no GPU), what tools/gpu-check.sh runs on a GPU
# host: the README demo's model compiled for the GPU (fp32 and bf16) and for the CPU with the same
# flags, the CPU programs' losses over the first steps, which the GPU programs must repeat, and
# the CUDA device's tests and kernel check with the PyTorch references the check reads.
# Writes build/gpu/ (MEMC_BUILD_DIR/gpu): *.cuda programs, *.cpu.jsonl logs, the data, the test
# programs, references.txt, and build/gpu.tar.xz, the same in a few MiB (the programs share
# their runner and kernels) for the device tool's 64 MiB carry: tools/gpu-check.sh unpacks it
# where build/gpu/ is missing.
# Usage: tools/gpu-prepare.sh   (after tools/build.sh, in a build that found nvcc)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MEMC_BUILD_DIR:-$root/build}"
out="$build/gpu"
steps=5
[ -x "$build/bin/memc-runner-cuda" ] || { echo "gpu-prepare: no memc-runner-cuda in $build (no nvcc?)" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"
cp "$root/tools/demo/chargpt.data.npz" "$out/chargpt.data.npz"
for precision in fp32 bf16; do
  flags=("$root/tools/demo/chargpt.onnx" --loss cross_entropy --optimizer adamw --lr 3e-3
         --freeze 'h.*.attn.bias' --precision "$precision")
  "$build/bin/memc" "${flags[@]}" --target cuda -o "$out/chargpt-$precision.cuda"
  "$build/bin/memc" "${flags[@]}" --target cuda --report-json "$out/chargpt-$precision.plan.json"
  "$build/bin/memc" "${flags[@]}" -o "$out/chargpt-$precision.cpu"
  "$out/chargpt-$precision.cpu" --data "$out/chargpt.data.npz" --steps "$steps" --seed 1 \
    --log "$out/chargpt-$precision.cpu.jsonl" 2>/dev/null
  rm "$out/chargpt-$precision.cpu"
done
cp "$build/test/runtime/memc-cuda-device-tests" "$build/test/kernels/cuda/memc-cuda-kernel-check" \
   "$root/test/kernels/references.txt" "$out/"
tar -C "$build" -cf - gpu | xz -9 > "$build/gpu.tar.xz"
du -sh "$out" "$build/gpu.tar.xz"
