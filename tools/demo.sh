#!/usr/bin/env bash
# The main job on a bundled example: install, build, then compile a small character-level GPT
# (tools/demo/chargpt.onnx, exported from PyTorch) into a training executable and train it on
# the bundled text on the CPU, printing the loss as it goes down.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh" memc memc-runner
build="${MEMC_BUILD_DIR:-$root/build}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The causal-mask buffers (h.N.attn.bias) are float initializers: freeze them. Without a budget
# the step peaks at about 17 MiB; under 14 MiB memc recomputes some activations and says where
# every byte of the peak goes.
"$build/bin/memc" "$root/tools/demo/chargpt.onnx" --loss cross_entropy --optimizer adamw \
  --lr 3e-3 --freeze 'h.*.attn.bias' --vram-budget 14MiB --report -o "$work/train"
"$work/train" --data "$root/tools/demo/chargpt.data.npz" --steps 600 --log "$work/log.jsonl" \
  2>/dev/null
echo "loss every 50 steps (step, loss):"
awk -F'[:,]' 'NR == 1 || NR % 50 == 0 { printf "  %4d  %s\n", $2, $4 }' "$work/log.jsonl"
awk -F'[:,}]' '{ if ($10 > peak) peak = $10 } END { printf "measured peak: %.2f MiB (budget 14 MiB)\n", peak / 1048576 }' \
  "$work/log.jsonl"
