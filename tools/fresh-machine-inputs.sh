#!/usr/bin/env bash
# Prints what decides what a new machine installs and finds, one "sha256  name" line per input:
# the install, build, test and demo scripts, .ci/run, and the dependency lines (find_package,
# find_library, find_program, pkg_check_modules, check_language, enable_language, each call
# whole) of every CMakeLists.txt and cmake/ file. Adding a source file changes no line; adding a
# dependency does. tools/check-fresh-machine.sh records these lines in tools/fresh-machine.stamp,
# and .ci/run compares them.
# Usage: fresh-machine-inputs.sh [REPOSITORY_ROOT]
set -euo pipefail
root="$(cd "${1:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"
cd "$root"

# The dependency calls of one CMake file, each from its name to its closing parenthesis, with
# comments and blank space dropped so rewrapping a call changes nothing.
dependency_lines() {
  local calls='find_package|find_library|find_program|pkg_check_modules|check_language'
  awk -v calls="$calls|enable_language" '
    BEGIN { start = "^[ \t]*(" calls ")[ \t]*\\(" }
    { sub(/#.*/, "") }
    depth == 0 && tolower($0) ~ start {
      call = ""; depth = 0; open = 1
    }
    open {
      call = call " " $0
      depth += gsub(/\(/, "(") - gsub(/\)/, ")")
      if (depth <= 0) { gsub(/[ \t]+/, " ", call); print call; open = 0; depth = 0 }
    }' "$1"
}

{
  for script in tools/setup.sh tools/install-*.sh tools/build.sh tools/test.sh tools/demo.sh \
    .ci/run; do
    if [ -f "$script" ]; then echo "$(sha256sum <"$script" | cut -d' ' -f1)  $script"; fi
  done
  git ls-files -- 'CMakeLists.txt' '*/CMakeLists.txt' 'cmake/*' | sort | while read -r file; do
    lines="$(dependency_lines "$file")"
    if [ -n "$lines" ]; then
      echo "$(printf '%s\n' "$lines" | sha256sum | cut -d' ' -f1)  $file (dependency lines)"
    fi
  done
} | sort -k2
