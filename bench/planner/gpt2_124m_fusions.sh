#!/bin/bash
# Usage: bench/planner/gpt2_124m_fusions.sh (after tools/build.sh); results in docs/benchmarks.md.
# GPT-2 124M, batch 8 x 1024 tokens, AdamW: the planned peak, the saved-for-backward high-water
# mark (most_live_bytes.activations) and the lowest peak memc reaches (the error of an
# unreachable --vram-budget) for every combination of --precision, --fuse-attention and
# --fuse-loss. Shape-only zoo model: compile-time numbers, the same on any machine.
B="${MEMC_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
$B/memc-zoo --model gpt2-124m --batch 8 --seq 1024 --weights none -o gpt2.onnx >/dev/null
for precision in fp32 bf16; do
  for attention in auto off; do
    for loss in auto off; do
      flags=(--loss cross_entropy --optimizer adamw --freeze '*.attn.bias' --precision $precision
             --fuse-attention $attention --fuse-loss $loss)
      $B/memc gpt2.onnx "${flags[@]}" --report-json r.json -o step >/dev/null 2>&1 ||
        { echo "FAIL $precision $attention $loss"; continue; }
      planned=$(/usr/bin/python3 -c "import json; r=json.load(open('r.json'))
print('peak %.1f MiB, activations %.1f MiB' % (r['peak_bytes'] / 2**20,
      r['most_live_bytes']['activations'] / 2**20))")
      lowest=$($B/memc gpt2.onnx "${flags[@]}" --vram-budget 1MiB -o low 2>&1 |
               grep -o 'reaches with these flags is [0-9.]* GiB' | grep -o '[0-9.]* GiB')
      echo "precision=$precision fuse-attention=$attention fuse-loss=$loss: $planned, lowest $lowest"
    done
  done
done
