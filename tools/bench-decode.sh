#!/usr/bin/env bash
# Decoding speed of a trained run at each precision, greedy and beam 5: the median of REPEATS
# runs of `attn-bench decode` on the Tatoeba test set (docs/performance.md), one JSON line per
# run on stderr-free stdout and a summary table at the end.
#
#   tools/bench-decode.sh [--bin DIR] [--baseline DIR] [--model RUN] [--checkpoint F]
#                         [--precisions "f32 int8"] [--repeats 3] [--threads 2] [--batch-size 32]
#
# --baseline DIR (the apps of an older build) runs its attn-bench alternately with --bin's, run
# for run, and reports both medians and their ratio: on a shared machine whose speed drifts
# from minute to minute, only interleaved runs compare two builds fairly.
# Run it on a quiet machine: decoding speed on a shared machine varies widely.
set -euo pipefail

bin=build-native/apps
baseline=
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
    --baseline) baseline=$2; shift 2 ;;
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
[[ -z $baseline || -x $baseline/attn-bench ]] || { echo "bench-decode.sh: no $baseline/attn-bench (--baseline)" >&2; exit 2; }
[[ -f $input ]] || { echo "bench-decode.sh: no input $input: run tools/get-data.sh or give --input F" >&2; exit 2; }

"$bin/attn-bench" --version
grep -m1 'model name' /proc/cpuinfo || true

checkpoint_args=()
[[ -n $checkpoint ]] && checkpoint_args=(--checkpoint "$checkpoint")

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

# One attn-bench decode run of the binaries in $1: prints its JSON, returns sentences/s in $rate
# and the peak RSS (MB) in $rss.
run_once() {
  local json
  json=$("$1/attn-bench" decode --model "$model" "${checkpoint_args[@]}" --input "$input" --beam "$beam" \
    --batch-size "$batch_size" --threads "$threads" --precision "$precision" --json)
  echo "$json"
  read -r rate rss < <(python3 -c 'import json,sys; d = json.loads(sys.argv[1]); print(d["sentences_per_s"], d.get("peak_rss_mb", 0))' "$json")
}

# Runs alternate between precisions (and builds) within each repeat, so the ratios to f32 and to
# the baseline compare runs of the same minute.
declare -A rates baseline_rates peak_rss
for beam in 1 5; do
  for ((i = 1; i <= repeats; i++)); do
    for precision in $precisions; do
      run_once "$bin"
      rates[$precision,$beam]+="$rate "
      peak_rss[$precision,$beam]+="$rss "
      if [[ -n $baseline ]]; then
        run_once "$baseline"
        baseline_rates[$precision,$beam]+="$rate "
      fi
    done
  done
done

ratio() { python3 -c 'import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 2))' "$1" "$2"; }
for precision in $precisions; do
  for beam in 1 5; do
    # shellcheck disable=SC2086  # the lists are space-separated numbers
    middle=$(median ${rates[$precision,$beam]})
    # shellcheck disable=SC2086
    line="$precision beam $beam: median $middle sentences/s of ${rates[$precision,$beam]}(peak RSS median $(median ${peak_rss[$precision,$beam]}) MB)"
    if [[ $precision != f32 && -n ${rates[f32,$beam]:-} ]]; then
      # shellcheck disable=SC2086
      line+="; $(ratio "$middle" "$(median ${rates[f32,$beam]})")x f32"
    fi
    if [[ -n $baseline ]]; then
      # shellcheck disable=SC2086
      base=$(median ${baseline_rates[$precision,$beam]})
      line+="; baseline median $base of ${baseline_rates[$precision,$beam]}; ratio $(ratio "$middle" "$base")"
    fi
    echo "$line"
  done
done
