#!/usr/bin/env bash
# Training speed of attn against PyTorch, side by side on this machine: for each benchmark the
# median of REPEATS runs of `attn-bench train` and of tools/bench-pytorch.py (the same model,
# batch shape and update rule), one JSON line per run, then a summary table (docs/performance.md).
#
#   tools/bench-train.sh [--bin DIR] [--baseline DIR [--baseline-flags FLAGS]] [--repeats 3]
#                        [--steps 10] [--only NAME] [--shape BxSxT] [--no-pytorch]
#
# NAME is one of the benchmark names below (e.g. transformer-small-bf16); --shape replaces its
# batch shape (sentences x source x target length: the batch-shape sweep of docs/performance.md).
# --baseline DIR (the apps of an older build) runs its attn-bench alternately with --bin's and
# adds its median and the ratio: on a shared machine whose speed drifts from minute to
# minute, only interleaved runs compare two builds fairly. --baseline-flags adds attn-bench flags to
# the baseline's runs: `--baseline build/apps --baseline-flags --unfused-loss` compares the fused
# loss with the loss over the full logits in one build. Run it on a quiet
# machine: a 2-core machine shared with anything else varies by 2x. PyTorch comes from
# tools/install-pytorch-deps.sh; without it (or with --no-pytorch) only attn runs.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=build-native/apps
baseline=
baseline_flags=
shape_override=
repeats=3
steps=10
only=
pytorch=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --baseline-flags) baseline_flags=$2; shift 2 ;;
    --shape) shape_override=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-pytorch) pytorch=0; shift ;;
    *) echo "bench-train.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -x $bin/attn-bench ]] || { echo "bench-train.sh: no $bin/attn-bench: build first or give --bin DIR" >&2; exit 2; }
[[ -z $baseline || -x $baseline/attn-bench ]] || { echo "bench-train.sh: no $baseline/attn-bench (--baseline)" >&2; exit 2; }
if [[ -n $shape_override && ! $shape_override =~ ^[0-9]+x[0-9]+x[0-9]+$ ]]; then
  echo "bench-train.sh: --shape $shape_override is not BxSxT (e.g. 32x32x32)" >&2
  exit 2
fi
# Debian's python3-torch is in the system Python, which a python3 earlier on PATH may not be.
torch_python=
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import torch' 2>/dev/null; then torch_python=$candidate; break; fi
done
if [[ $pytorch -eq 1 && -z $torch_python ]]; then
  echo "bench-train.sh: no PyTorch (tools/install-pytorch-deps.sh): attn only" >&2
  pytorch=0
fi

# name | config | precision | batch sentences x source x target length
benchmarks=(
  "transformer-small-f32 configs/bench/transformer-small.json f32 64 24 24"
  "transformer-small-bf16 configs/bench/transformer-small.json bf16 64 24 24"
  "transformer-base-f32 configs/bench/transformer-base.json f32 32 32 32"
  "rnn-attn-f32 configs/bench/rnn-attn.json f32 64 24 24"
  "rnn-attn-bf16 configs/bench/rnn-attn.json bf16 64 24 24"
)

"$bin/attn-bench" --version
grep -m1 'model name' /proc/cpuinfo || true

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
calc() { python3 -c "print($1)"; }

header="benchmark | shape | attn tokens/s | attn MFU | attn peak RSS MB"
[[ $pytorch -eq 1 ]] && header+=" | PyTorch tokens/s | PyTorch peak RSS MB | attn / PyTorch"
[[ -n $baseline ]] && header+=" | baseline tokens/s | attn / baseline"
summary=("$header")
for line in "${benchmarks[@]}"; do
  read -r name config precision b s t <<<"$line"
  [[ -z $only || $only == "$name" ]] || continue
  [[ -n $shape_override ]] && IFS=x read -r b s t <<<"$shape_override"
  shape=(--batch-sentences "$b" --src-len "$s" --tgt-len "$t" --steps "$steps")
  attn_rates=() attn_mfu=() attn_rss=() torch_rates=() torch_rss=() baseline_rates=()
  for ((i = 1; i <= repeats; i++)); do
    json=$("$bin/attn-bench" train --config "$config" "${shape[@]}" --set "train.precision=$precision" --json)
    echo "{\"benchmark\": \"$name\", \"shape\": \"${b}x${s}x${t}\", \"attn\": $json}"
    attn_rates+=("$(field "$json" tokens_per_s)") attn_mfu+=("$(field "$json" mfu)") attn_rss+=("$(field "$json" peak_rss_mb)")
    if [[ -n $baseline ]]; then
      # shellcheck disable=SC2086 # the flags are words
      json=$("$baseline/attn-bench" train --config "$config" "${shape[@]}" --set "train.precision=$precision" $baseline_flags --json)
      echo "{\"benchmark\": \"$name\", \"shape\": \"${b}x${s}x${t}\", \"baseline\": $json}"
      baseline_rates+=("$(field "$json" tokens_per_s)")
    fi
    if [[ $pytorch -eq 1 ]]; then
      json=$("$torch_python" tools/bench-pytorch.py --config "$config" "${shape[@]}" --precision "$precision" --json)
      echo "{\"benchmark\": \"$name\", \"shape\": \"${b}x${s}x${t}\", \"pytorch\": $json}"
      torch_rates+=("$(field "$json" tokens_per_s)") torch_rss+=("$(field "$json" peak_rss_mb)")
    fi
  done
  attn=$(median "${attn_rates[@]}")
  row="$name | ${b}x${s}x${t} | $(printf '%.0f' "$attn") | $(printf '%.0f%%' "$(calc "$(median "${attn_mfu[@]}") * 100")")"
  row+=" | $(printf '%.0f' "$(median "${attn_rss[@]}")")"
  if [[ $pytorch -eq 1 ]]; then
    torch=$(median "${torch_rates[@]}")
    row+=" | $(printf '%.0f' "$torch") | $(printf '%.0f' "$(median "${torch_rss[@]}")") | $(printf '%.2fx' "$(calc "$attn / $torch")")"
  fi
  if [[ -n $baseline ]]; then
    before=$(median "${baseline_rates[@]}")
    row+=" | $(printf '%.0f' "$before") | $(printf '%.2fx' "$(calc "$attn / $before")")"
  fi
  summary+=("$row")
done
printf '%s\n' "${summary[@]}"
