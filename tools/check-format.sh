#!/usr/bin/env bash
# Checks that every C++ file of lib/, apps/ and tests/ is formatted as .clang-format says
# (clang-format --dry-run -Werror); lists the files and lines that are not. `tools/check-format.sh
# --fix` formats them in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'lib/*.h' 'lib/*.cpp' 'apps/*.h' 'apps/*.cpp' 'tests/*.h' 'tests/*.cpp')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if clang-format --dry-run -Werror "${files[@]}"; then
  echo "check-format: ${#files[@]} files formatted"
else
  echo "check-format: some files are not formatted; run tools/check-format.sh --fix" >&2
  exit 1
fi
