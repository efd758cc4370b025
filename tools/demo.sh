#!/usr/bin/env bash
# The main job on a bundled example: install, build, then import the bundled GPT-2-style model
# and print its memc IR followed by memc's one-line summary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh"
build="${MEMC_BUILD_DIR:-$root/build}"
"$build/bin/memc" --emit=mlir "$root/test/fixtures/gpt2.onnx"
