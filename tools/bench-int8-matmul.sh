#!/usr/bin/env bash
# The int8 kernel comparison of docs/performance.md's "The int8 kernel": builds tools/int8-matmul-kernels.cpp
# against the system's oneDNN and runs it for the given row counts (default 5 32 160).
#
#   tools/bench-int8-matmul.sh [--threads 2] [ROWS...]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=2
if [[ ${1:-} == --threads ]]; then
  threads=$2
  shift 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
c++ -O2 -std=c++17 tools/int8-matmul-kernels.cpp -o "$out/int8-matmul-kernels" -ldnnl
grep -m1 'model name' /proc/cpuinfo || true
OMP_NUM_THREADS=$threads ONEDNN_VERBOSE=0 "$out/int8-matmul-kernels" "$@"
