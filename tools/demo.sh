#!/usr/bin/env bash
# The main job on a bundled example: install, build, then compile a small character-level GPT
# (tools/demo/chargpt.onnx, exported from PyTorch) into a training executable and train it on
# the bundled text on the CPU, printing the loss as it goes down.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh"
build="${MEMC_BUILD_DIR:-$root/build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The causal-mask buffers (h.N.attn.bias) are float initializers: freeze them.
"$build/bin/memc" "$root/tools/demo/chargpt.onnx" --loss cross_entropy --optimizer adamw \
  --lr 3e-3 --freeze 'h.*.attn.bias' -o "$work/train"
"$work/train" --data "$root/tools/demo/chargpt.data.npz" --steps 600 --log "$work/log.jsonl" \
  2>/dev/null
echo "loss every 50 steps (step, loss):"
awk -F'[:,]' 'NR == 1 || NR % 50 == 0 { printf "  %4d  %s\n", $2, $4 }' "$work/log.jsonl"
