#!/usr/bin/env bash
# Rematerialization benchmark: for each zoo model's AdamW training step, the curve budget ->
# (peak, recompute % of the step's FLOPs) for --remat auto (heuristic and ILP), and the fixed
# strategies --remat full and Chen's sqrt(n). Shape-only models (no weights are read); every
# peak is a real plan's. Prints the markdown of docs/benchmarks.md.
#
#   bench/remat/run.sh [BUILD_DIR] [ILP_SECONDS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
ilp="${2:-20}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for spec in "gpt2-124m 8 1024" "gpt2-355m 8 1024" "bert-base 8 512" "llama-1b 1 2048" \
            "resnet50 32 224"; do
  read -r model batch seq <<<"$spec"
  "$build/bin/memc-zoo" --model "$model" --batch "$batch" --seq "$seq" --weights none \
    -o "$work/$model.onnx" >/dev/null
  echo "(batch $batch, sequence or image side $seq)"
  "$build/bin/memc-remat-bench" "$work/$model.onnx" --ilp-seconds "$ilp"
done
