#!/usr/bin/env bash
# Decoding speed of a trained run at each precision, greedy and beam 5: the median of REPEATS
# runs of `attn-bench decode` on the Tatoeba test set (issue 15's figures), one JSON line per
# run on stderr-free stdout and a summary table at the end.
#
#   tools/bench-decode.sh [--bin DIR] [--model RUN] [--checkpoint F] [--precisions "f32 int8"]
#                         [--repeats 3] [--threads 2] [--batch-size 32]
#
# Run it on a quiet machine: decoding speed on a shared 2-core machine varies by 2x or more.
set -euo pipefail

bin=build-native/apps
model=runs/en-it
checkpoint=
precisions="f32 int8"
repeats=3
threads=2
batch_size=32
input=data/tatoeba_en_it/test.en

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --checkpoint) checkpoint=$2; shift 2 ;;
    --precisions) precisions=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --batch-size) batch_size=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    *) echo "bench-decode.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done

[[ -x $bin/attn-bench ]] || { echo "bench-decode.sh: no $bin/attn-bench: build first or give --bin DIR" >&2; exit 2; }
[[ -f $input ]] || { echo "bench-decode.sh: no input $input: run tools/get-data.sh or give --input F" >&2; exit 2; }

"$bin/attn-bench" --version
grep -m1 'model name' /proc/cpuinfo || true

checkpoint_args=()
[[ -n $checkpoint ]] && checkpoint_args=(--checkpoint "$checkpoint")

summary=()
for precision in $precisions; do
  for beam in 1 5; do
    rates=()
    for ((i = 1; i <= repeats; i++)); do
      json=$("$bin/attn-bench" decode --model "$model" "${checkpoint_args[@]}" --input "$input" --beam "$beam" \
        --batch-size "$batch_size" --threads "$threads" --precision "$precision" --json)
      echo "$json"
      rates+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["sentences_per_s"])' "$json")")
    done
    median=$(printf '%s\n' "${rates[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}')
    summary+=("$precision beam $beam: median $median sentences/s of ${rates[*]}")
  done
done
printf '%s\n' "${summary[@]}"
