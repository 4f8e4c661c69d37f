#!/usr/bin/env bash
# The README's test command: install the system packages, configure, build, and run every test
# (ctest, output on failure). Exits non-zero when anything fails.
# Usage: tools/test.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
tools/install-deps.sh
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
