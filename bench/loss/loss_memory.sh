#!/bin/bash
# Usage: bench/loss/loss_memory.sh (after tools/build.sh); results in docs/benchmarks.md.
# Planned peaks of AdamW training steps with the LM head and loss fused (--fuse-loss auto) and
# not (off): unbudgeted (no recomputation), and the lowest peak memc reaches, as the error of an
# unreachable --vram-budget reports it. Shape-only zoo models: compile-time numbers.
B="${MEMC_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}"
work="$(mktemp -d)"
cd "$work"
measure() {
  name=$1 model=$2; shift 2
  for f in auto off; do
    $B/memc $model.onnx --loss cross_entropy --optimizer adamw "$@" --fuse-loss $f \
      --report-json $name-$f.json -o $name-$f.out >/dev/null 2>&1 || echo FAIL $name $f
    peak=$(/usr/bin/python3 -c "import json,sys; r=json.load(open('$name-$f.json')); print('%.1f MiB' % (r['peak_bytes']/2**20), r['loss'])")
    lowest=$($B/memc $model.onnx --loss cross_entropy --optimizer adamw "$@" --fuse-loss $f \
      --vram-budget 1MiB -o $name-$f-low.out 2>&1 | grep -o 'lowest[^;]*' | head -1)
    rm -f $name-$f.out $name-$f-low.out
    echo "$name fuse-loss=$f: peak $peak; $lowest"
  done
}
$B/memc-zoo --model gpt2-124m --batch 8 --seq 1024 --weights none -o gpt2.onnx >/dev/null
measure gpt2-124m-B8xT1024 gpt2 --freeze '*.attn.bias'
# Llama 3's vocabulary on the zoo's Llama-style 1B (untied head) at T = 2048.
$B/memc-zoo --model llama-1b --batch 1 --seq 2048 --vocab 128256 --weights none -o llama.onnx >/dev/null
measure llama-1b-V128256-B1xT2048 llama
