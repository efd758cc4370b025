#!/usr/bin/env bash
# Configures and builds memc into build/ (or $MEMC_BUILD_DIR) with CMake and Ninja: the targets
# named (the demo builds only memc and memc-runner), or everything.
# Usage: tools/build.sh [TARGET...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MEMC_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=()
[ $# -eq 0 ] || targets=(--target "$@")
# Two jobs fit the 2-core machines this is built on; MLIR-heavy files need ~1 GiB each.
cmake --build "$build" -j "${MEMC_JOBS:-$(nproc)}" "${targets[@]}"
