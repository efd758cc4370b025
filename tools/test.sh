#!/usr/bin/env bash
# Installs, builds and runs every test (lit + FileCheck, GoogleTest, import and bad-input tests)
# through ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/tools/setup.sh"
"$root/tools/build.sh"
build="${MEMC_BUILD_DIR:-$root/build}"
"$root/tools/install-onnxruntime.sh" "$build"
ctest --test-dir "$build" --output-on-failure -j "${MEMC_JOBS:-$(nproc)}"
