#!/usr/bin/env bash
# The checks that need a GPU, run on a GPU host from binaries built beforehand on the build
# machine (which has the CUDA toolkit but no GPU: tools/build.sh, then tools/gpu-prepare.sh)
# and copied with the tree (build/bin/memc-nccl-check, build/gpu.tar.xz or build/gpu/): where the
# CUDA libraries were found and the GPU's name;
# memc-nccl-check (runtime/comm's NCCL collectives on device buffers); the CUDA device's tests
# on the GPU; every CUDA kernel against the PyTorch references (memc-cuda-kernel-check, one
# failed case a kernel bug: its log names the case, the output and the first wrong elements);
# the demo model trained on the GPU in fp32 and bf16 against the CPU's losses of the same steps
# (a run whose arena use passes the plan fails), its bf16 steps profiled (--profile: the table
# and a trace), and under compute-sanitizer memcheck one
# training step and a few reference cases of each kernel group. A summary table and the logs
# go to OUTDIR.
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
export LD_LIBRARY_PATH="$(IFS=:; echo "${libs[*]}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# What tools/gpu-prepare.sh made, unpacked where only its archive was carried.
gpu="$build/gpu"
[ -d "$gpu" ] || [ ! -f "$build/gpu.tar.xz" ] || tar -C "$build" -xJf "$build/gpu.tar.xz"

{
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    2>&1 | head -n1)"
  echo "libraries searched: ${libs[*]}"
  [ ! -x "$gpu/chargpt-fp32.cuda" ] || "$gpu/chargpt-fp32.cuda" --version
} | tee "$out/environment.txt"

status=0
rows=()
# check NAME COMMAND...: runs it with its output in OUTDIR/NAME.log and adds its row.
check() {
  local name="$1"; shift
  "$@" >"$out/$name.log" 2>&1
  local code=$?
  rows+=("| $name | $([ $code -eq 0 ] && echo passed || echo "FAILED (exit $code)") |")
  [ $code -eq 0 ] || status=1
  tail -n 3 "$out/$name.log"
}

[ -x "$build/bin/memc-nccl-check" ] && check nccl-check "$build/bin/memc-nccl-check"

if [ -d "$gpu" ]; then
  check cuda-device-tests "$gpu/memc-cuda-device-tests"
  # Under a timeout: a kernel that hangs is the last case its log starts.
  check cuda-kernels env MEMC_KERNEL_REFERENCES="$gpu/references.txt" \
    timeout 300 "$gpu/memc-cuda-kernel-check"
  for precision in fp32 bf16; do
    program="$gpu/chargpt-$precision.cuda"
    # The same steps as the CPU program's (tools/gpu-prepare.sh): losses within the precision's
    # tolerance.
    check "train-$precision" "$program" --data "$gpu/chargpt.data.npz" --steps 5 --seed 1 \
      --log "$out/chargpt-$precision.cuda.jsonl"
    check "losses-$precision" python3 - "$gpu/chargpt-$precision.cpu.jsonl" \
      "$out/chargpt-$precision.cuda.jsonl" "$precision" <<'PY'
import json, sys
cpu, gpu, precision = sys.argv[1:4]
read = lambda path: [json.loads(line)["loss"] for line in open(path) if '"loss"' in line]
tolerance = 1e-4 if precision == "fp32" else 2e-2
a, b = read(cpu), read(gpu)
print("cpu", a); print("gpu", b)
assert len(a) == len(b) > 0, "different step counts"
worst = max(abs(x - y) / max(abs(x), 1e-6) for x, y in zip(a, b))
print(f"largest relative difference {worst:.2e} (tolerance {tolerance})")
sys.exit(0 if worst <= tolerance else 1)
PY
  done
  # The step profiler on the GPU (its times from CUDA events): the table in the log, the trace
  # beside it.
  check profile-bf16 "$gpu/chargpt-bf16.cuda" --data "$gpu/chargpt.data.npz" --steps 5 --seed 1 \
    --profile "$out/chargpt-bf16.trace.json"
  if command -v compute-sanitizer >/dev/null; then
    check memcheck compute-sanitizer --tool memcheck --error-exitcode 1 \
      "$gpu/chargpt-fp32.cuda" --data "$gpu/chargpt.data.npz" --steps 1
    # The kernel check's cases under memcheck: a few of each kernel group, in both of its runs
    # (plain and in place).
    sanitized=(add_f32_1 add_bf16 gelu_grad_tanh_f32 cast_f32_f16_rounding where_causal
               loss_scale_update_backoff softmax_wide layer_norm_grad_wide reduce_sum_bias_grad
               cross_entropy_ignore_class_grad cumsum_exclusive_f32 transpose_heads concat_axis1
               gather_grad_many_repeats top_k_ties_f32 slice_grad_1 adamw_first_step
               max_pool_grad2d_overlap avg_pool_grad2d_k3s2p1_ceil_excl batch_norm_grad_rank4
               matmul_f32_3 matmul_bf16_batch conv2d_basic conv_grad2d_basic_input
               conv_grad2d_basic_weight linear_cross_entropy_tied_f32_grad
               flash_attention_causal_f32 flash_attention_grad_gqa_mask_f32 flash_attention_f16)
    check memcheck-kernels env MEMC_KERNEL_REFERENCES="$gpu/references.txt" \
      timeout 300 compute-sanitizer --tool memcheck --error-exitcode 1 \
      "$gpu/memc-cuda-kernel-check" --gtest_filter="$(printf '*/%s:' "${sanitized[@]}")"
  fi
else
  rows+=("| CUDA backend | not prepared: run tools/gpu-prepare.sh on the build machine |")
  status=1
fi

{
  echo "| check | result |"
  echo "|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$out/summary.md"
exit $status
