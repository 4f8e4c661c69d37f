#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (AddressSanitizer + UndefinedBehavior-
# Sanitizer + coverage) in build-fuzz/, then runs one target for SECONDS on its seed corpus.
#
# Usage: tools/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]
#   TARGET   fuzz_config | fuzz_checkpoint | fuzz_translate_input | fuzz_serve_request
#   SECONDS  default 60
#   JOBS=N   build with N jobs (default: all cores)
#
# New inputs go to build-fuzz/corpus/TARGET; the seeds in tests/fuzz/corpus/TARGET are only
# read. A failing input is saved as build-fuzz/crashes/TARGET/crash-* (or leak-*, timeout-*);
# replay one with: build-fuzz/tests/fuzz/TARGET FILE. CI does not build the fuzzers.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: tools/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]}"
seconds="${2:-60}"
shift
[ $# -gt 0 ] && shift
[ -f "tests/fuzz/$target.cpp" ] || { echo "fuzz.sh: no target tests/fuzz/$target.cpp" >&2; exit 2; }

# clang, its sanitizer and libFuzzer runtimes, and its OpenMP runtime (Debian 12 packages).
packages=(clang libclang-rt-14-dev libomp-14-dev)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "fuzz.sh: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DATTN_FUZZ=ON -DATTN_MPI=OFF \
  -DATTN_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j "${JOBS:-$(nproc)}" --target "$target"

mkdir -p "build-fuzz/corpus/$target" "build-fuzz/crashes/$target"
# One OpenMP thread: libFuzzer runs inputs one at a time, and a pool would only add noise.
OMP_NUM_THREADS=1 "build-fuzz/tests/fuzz/$target" -max_total_time="$seconds" -timeout=20 -print_final_stats=1 \
  -artifact_prefix="build-fuzz/crashes/$target/" "$@" "build-fuzz/corpus/$target" "tests/fuzz/corpus/$target"
