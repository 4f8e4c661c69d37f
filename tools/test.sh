#!/usr/bin/env bash
# The README's test command: install the system packages, configure, build, and run every test
# (ctest, output on failure). Exits non-zero when anything fails; a test that cannot run here
# (no bf16 matmul on this CPU, ...) is listed by ctest as Skipped, with its reason in its output.
# Usage: tools/test.sh [-L LABEL | -LE LABEL] [BUILD_DIR] [CMAKE_ARGS...]   (default: build, Release)
#   -L LABEL runs only the tests with that ctest label (docs/ARCHITECTURE.md, Tests), -LE LABEL
#   all but those (a regular expression: -LE "slow|gradcheck"), e.g.
#   tools/test.sh -L unit                                 # the fast loop: no program runs
#   tools/test.sh build-asan -DATTN_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
#       -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"        # ASan + UBSan, as CI runs it
set -euo pipefail
cd "$(dirname "$0")/.."
label_args=()
if [ "${1:-}" = "-L" ] || [ "${1:-}" = "-LE" ]; then
  [ $# -ge 2 ] || { echo "tools/test.sh: $1 needs a label (unit, programs, slow, mpi, tools, ...)" >&2; exit 2; }
  label_args=("$1" "$2")
  shift 2
fi
build_dir="${1:-build}"
[ $# -gt 0 ] && shift
tools/install-deps.sh
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" "${label_args[@]}"
