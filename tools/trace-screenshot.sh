#!/usr/bin/env bash
# Opens a memc --profile trace in Chromium's trace viewer (DevTools' Performance panel, served by
# a headless Chromium's remote-debugging port) and saves a screenshot: the steps track and one
# track per worker thread, expanded, with one kernel's event summary. For the docs
# (docs/images/trace-chromium.png); no build or test needs it. Installs Debian's chromium
# (apt-get, as root) and puppeteer-core (npm, no browser download) where they are missing.
# Usage: trace-screenshot.sh TRACE.json OUT.png [NPM_DIR]
set -euo pipefail
trace="$(realpath "${1:?usage: trace-screenshot.sh TRACE.json OUT.png [NPM_DIR]}")"
out="$(realpath -m "${2:?usage: trace-screenshot.sh TRACE.json OUT.png [NPM_DIR]}")"
prefix="${3:-${TMPDIR:-/tmp}/memc-trace-screenshot}"
if ! command -v chromium >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
if [ ! -f "$prefix/node_modules/puppeteer-core/package.json" ]; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --ignore-scripts --no-audit --no-fund --no-save \
    puppeteer-core@22
fi
NODE_PATH="$prefix/node_modules" node "$(dirname "${BASH_SOURCE[0]}")/trace-screenshot.js" \
  "$(command -v chromium)" "$trace" "$out"
