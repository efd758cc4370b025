#!/usr/bin/env bash
# Planner benchmark on real models: memc's arena plans of the zoo models' inference graphs
# against the TFLite-style and XLA-style planners on the same requests. Shape-only models (no
# weights are read). Prints a markdown table for docs/benchmarks.md.
#
#   bench/planner/run_zoo.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
models=()
for spec in "gpt2-124m 8 1024" "gpt2-355m 8 1024" "bert-base 8 512" "llama-1b 1 2048" \
            "llama-7b 1 2048" "resnet50 32 224"; do
  read -r model batch seq <<<"$spec"
  "$build/bin/memc-zoo" --model "$model" --batch "$batch" --seq "$seq" --weights none \
    -o "$work/$model.onnx" >/dev/null
  models+=("$work/$model.onnx")
done
"$build/bin/memc-plan-zoo" "${models[@]}"
