#!/bin/bash
# Usage: bench/attention/attention_memory.sh (after tools/build.sh); results in docs/benchmarks.md.
# Planned transient bytes at the peak (peak minus parameters and optimizer state; remat none) of
# 2-layer zoo models at two sequence lengths, attention fused and unfused.
B="${MEMC_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}"
work="$(mktemp -d)"
cd "$work"
run() {
  model=$1; shift
  for T in "$@"; do
    $B/memc-zoo --model $model --batch 1 --seq $T --weights none --layers 2 --vocab 1024 -o $model-$T.onnx >/dev/null
    for f in auto off; do
      $B/memc $model-$T.onnx --loss cross_entropy --remat none --fuse-attention $f --report-json $model-$T-$f.json -o $model-$T-$f.out >/dev/null 2>&1 || echo FAIL $model $T $f
    done
  done
  /usr/bin/python3 - "$model" "$@" <<'PY'
import json, sys
model, t0, t1 = sys.argv[1], sys.argv[2], sys.argv[3]
def transient(T, f):
    r = json.load(open(f"{model}-{T}-{f}.json"))
    b = r["breakdown"]
    return r["peak_bytes"] - b["parameters"] - b["optimizer_state"]
for f in ("auto", "off"):
    a, b = transient(t0, f), transient(t1, f)
    print(f"{model} fuse-attention={f}: T={t0} {a/2**20:.1f} MiB, T={t1} {b/2**20:.1f} MiB, x{b/a:.2f}")
PY
}
run gpt2-124m 512 1024
run llama-1b 1024 2048
