#!/usr/bin/env bash
# Import benchmark: time and peak memory of `memc --emit=mlir` on zoo models at real size, side by
# side with the ecosystem's anchor, onnx.load from Debian's python3-onnx, on the same files in the
# same run. Medians of N runs (default 5). Prints a markdown table for docs/benchmarks.md.
#
#   bench/import/run.sh [BUILD_DIR] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$root/build}"
runs="${2:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Prints "median_seconds median_max_rss_kib" of a command run $runs times.
measure() {
  local times=() rss=()
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" ||
      { cat "$work/stderr" >&2; return 1; }
    read -r t m <"$work/time"
    times+=("$t"); rss+=("$m")
  done
  printf '%s %s\n' "$(printf '%s\n' "${times[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")" \
    "$(printf '%s\n' "${rss[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")"
}

echo "| model | weights | memc import s | memc peak RSS MiB | onnx.load s | onnx.load peak RSS MiB | time ratio memc/onnx.load |"
echo "|---|---|---|---|---|---|---|"
for spec in "gpt2-124m 8 1024 random" "gpt2-355m 8 1024 random" "llama-7b 1 2048 none"; do
  read -r model batch seq weights <<<"$spec"
  "$build/bin/memc-zoo" --model "$model" --batch "$batch" --seq "$seq" --weights "$weights" \
    -o "$work/$model.onnx" >/dev/null
  bytes=$(stat -c %s "$work/$model.onnx.data")
  read -r memc_s memc_kib < <(measure "$build/bin/memc" "$work/$model.onnx" -o -)
  # The anchor reads the weights (onnx.load's default); shape-only files hold no data to read.
  read -r onnx_s onnx_kib < <(measure /usr/bin/python3 -c \
    "import onnx, sys; onnx.load(sys.argv[1], load_external_data=sys.argv[2] != 'none')" \
    "$work/$model.onnx" "$weights")
  printf '| %s (batch %s, seq %s) | %.0f MiB (%s) | %s | %.0f | %s | %.0f | %.3f |\n' \
    "$model" "$batch" "$seq" "$((bytes / 1048576))" "$weights" "$memc_s" "$((memc_kib / 1024))" \
    "$onnx_s" "$((onnx_kib / 1024))" "$(awk -v a="$memc_s" -v b="$onnx_s" 'BEGIN { print (b > 0 ? a / b : 0) }')"
  rm -f "$work/$model.onnx" "$work/$model.onnx.data"
done
