#!/usr/bin/env bash
# The README's test command: install the system packages, configure, build, and run every test
# (ctest, output on failure). Exits non-zero when anything fails.
# Usage: tools/test.sh [BUILD_DIR] [CMAKE_ARGS...]   (default: build, a Release build)
#   tools/test.sh build-asan -DATTN_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
#       -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"        # ASan + UBSan, as CI runs it
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
[ $# -gt 0 ] && shift
tools/install-deps.sh
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
