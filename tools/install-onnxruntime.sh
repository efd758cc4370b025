#!/usr/bin/env bash
# Installs onnxruntime-node (ONNX Runtime's CPU library with its Node.js binding) from the npm
# registry into BUILD/npm, for the tests that run the models memc saves in an independent ONNX
# runtime. --ignore-scripts: the package carries its CPU library and needs no download script.
# Idempotent: an installed copy of the pinned version is kept.
set -euo pipefail
build="${1:?usage: install-onnxruntime.sh BUILD_DIR}"
version=1.30.0
prefix="$build/npm"
installed="$prefix/node_modules/onnxruntime-node/package.json"
if [ -f "$installed" ] && grep -q "\"version\": \"$version\"" "$installed"; then
  echo "install-onnxruntime: onnxruntime-node $version is installed"
  exit 0
fi
mkdir -p "$prefix"
npm install --prefix "$prefix" --ignore-scripts --no-audit --no-fund --no-save \
  "onnxruntime-node@$version"
