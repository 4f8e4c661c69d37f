#!/usr/bin/env bash
# Training speed while another program shares the CPU: `attn-bench train` alone, then beside one
# CPU-bound process (a Python busy loop) at nice 0 and at nice 10, each the median of REPEATS
# runs, interleaved; the table gives each median and its share of the alone figure
# (docs/performance.md, "Sharing the CPU"). A fair share at nice 0 is 2 of the 3 runnable
# threads on a 2-core machine (0.67x); at nice 10 the competitor's weight is a tenth of ours.
#
#   tools/bench-contention.sh [--bin DIR] [--baseline DIR] [--repeats 3] [--steps 20]
#                             [--config F] [--shape BxSxT] [--threads 2] [--pytorch]
#
# --baseline DIR runs an older build's attn-bench alternately with --bin's. --pytorch adds
# tools/bench-pytorch.py (the same model and batch) under the same three conditions. Run it on
# an otherwise idle machine: the competitor is the only other process the figures allow.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=build/apps
baseline=
repeats=3
steps=20
config=configs/bench/transformer-small.json
shape=64x24x24
threads=2
pytorch=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --shape) shape=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --pytorch) pytorch=1; shift ;;
    *) echo "bench-contention.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -x $bin/attn-bench ]] || { echo "bench-contention.sh: no $bin/attn-bench: build first or give --bin DIR" >&2; exit 2; }
[[ -z $baseline || -x $baseline/attn-bench ]] || { echo "bench-contention.sh: no $baseline/attn-bench (--baseline)" >&2; exit 2; }
[[ $shape =~ ^([0-9]+)x([0-9]+)x([0-9]+)$ ]] || { echo "bench-contention.sh: --shape $shape is not BxSxT" >&2; exit 2; }
batch=(--batch-sentences "${BASH_REMATCH[1]}" --src-len "${BASH_REMATCH[2]}" --tgt-len "${BASH_REMATCH[3]}" --steps "$steps")
torch_python=/usr/bin/python3
if [[ $pytorch -eq 1 ]] && ! "$torch_python" -c 'import torch' 2>/dev/null; then
  echo "bench-contention.sh: --pytorch needs python3-torch (tools/install-pytorch-deps.sh)" >&2
  exit 2
fi

"$bin/attn-bench" --version
grep -m1 'model name' /proc/cpuinfo || true

competitor=
start_competitor() {  # $1: a nice value, or "none"
  [[ $1 == none ]] && return
  nice -n "$1" python3 -c 'while True: pass' &
  competitor=$!
  sleep 0.5  # let the scheduler see it as a running task
}
stop_competitor() {
  [[ -n $competitor ]] || return 0
  kill "$competitor" 2>/dev/null || true
  wait "$competitor" 2>/dev/null || true
  competitor=
}
trap stop_competitor EXIT

rate() {  # the tokens/s of one JSON line
  python3 -c 'import json,sys; print(json.loads(sys.argv[1])["tokens_per_s"])' "$1"
}
run() {  # $1: a label (attn, baseline, pytorch)
  case "$1" in
    attn) "$bin/attn-bench" train --config "$config" "${batch[@]}" --threads "$threads" --json ;;
    baseline) "$baseline/attn-bench" train --config "$config" "${batch[@]}" --threads "$threads" --json ;;
    pytorch) OMP_NUM_THREADS=$threads "$torch_python" tools/bench-pytorch.py --config "$config" "${batch[@]}" --precision f32 --json ;;
  esac
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }

programs=(attn)
[[ -n $baseline ]] && programs+=(baseline)
[[ $pytorch -eq 1 ]] && programs+=(pytorch)
conditions=(none 0 10)
declare -A rates
for ((i = 1; i <= repeats; i++)); do
  for condition in "${conditions[@]}"; do
    for program in "${programs[@]}"; do
      start_competitor "$condition"
      json=$(run "$program")
      stop_competitor
      echo "{\"program\": \"$program\", \"competitor_nice\": \"$condition\", \"result\": $json}"
      rates[$program/$condition]+=" $(rate "$json")"
    done
  done
done

echo "program | alone tokens/s | beside nice 0 | share | beside nice 10 | share"
for program in "${programs[@]}"; do
  # shellcheck disable=SC2086 # the rates are words
  alone=$(median ${rates[$program/none]}) nice0=$(median ${rates[$program/0]}) nice10=$(median ${rates[$program/10]})
  python3 -c "a, b, c = $alone, $nice0, $nice10; print(f'$program | {a:.0f} | {b:.0f} | {b / a:.2f}x | {c:.0f} | {c / a:.2f}x')"
done
