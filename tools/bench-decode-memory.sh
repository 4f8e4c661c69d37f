#!/usr/bin/env bash
# Peak memory of attn-translate on short, medium and long sentences (docs/performance.md,
# "Decoding memory"): its peak RSS (/usr/bin/time -v) translating the Tatoeba test set, the
# IWSLT17 test set, and a long set of IWSLT17 test lines joined four at a time, printed as a
# Markdown table.
#
#   tools/bench-decode-memory.sh RUN [--bin DIR] [--baseline DIR] [--batch-tokens N]
#                                [--beam 5] [--batch-size 32] [--threads 2] [--data DIR] [--outputs DIR]
#                                [--lines N]
#
# RUN is a trained run directory. --bin DIR holds the attn-translate to measure (default
# build-native/apps); --baseline DIR another build's apps, measured on the same inputs right
# after, for before/after columns. --batch-tokens N is passed to --bin's attn-translate only (a
# baseline older than the flag would refuse it); without it, the run's decode.batch_tokens.
# --outputs DIR keeps the translations (DIR/INPUT.after.txt, DIR/INPUT.before.txt) for a diff.
# --lines N translates the first N lines of each input only (N <= 512 is one window of 16
# batches of 32: the peak of one window, on a machine too busy for whole sets).
# Memory does not depend on the machine's load, but the seconds shown do.
set -euo pipefail

usage() { echo "usage: $0 RUN [--bin DIR] [--baseline DIR] [--batch-tokens N] [--beam K] [--batch-size B] [--threads T] [--data DIR] [--outputs DIR] [--lines N]" >&2; exit 2; }
[[ $# -ge 1 && $1 != --* ]] || usage
run=$1
shift
bin=build-native/apps
baseline=
batch_tokens=
beam=5
batch_size=32
threads=2
data=data
outputs=
lines=

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --batch-tokens) batch_tokens=$2; shift 2 ;;
    --beam) beam=$2; shift 2 ;;
    --batch-size) batch_size=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --outputs) outputs=$2; shift 2 ;;
    --lines) lines=$2; shift 2 ;;
    *) echo "bench-decode-memory.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done

[[ -d $run ]] || { echo "bench-decode-memory.sh: no run directory $run" >&2; exit 2; }
[[ -x $bin/attn-translate ]] || { echo "bench-decode-memory.sh: no $bin/attn-translate: build first or give --bin DIR" >&2; exit 2; }
[[ -z $baseline || -x $baseline/attn-translate ]] || { echo "bench-decode-memory.sh: no $baseline/attn-translate (--baseline)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "bench-decode-memory.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
tatoeba=$data/tatoeba_en_it/test.en
iwslt=$data/iwslt17_en_it/test.en
for file in "$tatoeba" "$iwslt"; do
  [[ -f $file ]] || { echo "bench-decode-memory.sh: no $file: run tools/get-data.sh or give --data DIR" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -z $outputs ]] || mkdir -p "$outputs"
# Every 4 consecutive lines joined by a space (the last join may hold fewer).
paste -d ' ' - - - - < "$iwslt" | sed 's/  *$//' > "$work/long.en"
if [[ -n $lines ]]; then
  head -n "$lines" "$tatoeba" > "$work/tatoeba.en"
  head -n "$lines" "$iwslt" > "$work/iwslt.en"
  head -n "$lines" "$work/long.en" > "$work/long.cut.en"
  mv "$work/long.cut.en" "$work/long.en"
  tatoeba=$work/tatoeba.en
  iwslt=$work/iwslt.en
fi

words() { awk '{ words += NF } END { printf "%.1f", NR ? words / NR : 0 }' "$1"; }

# One attn-translate run: "$1" apps, "$2" input, "$3" the translations' name under --outputs,
# further flags after. Sets rss (peak RSS, MB) and seconds.
measure() {
  local apps=$1 input=$2 name=$3
  shift 3
  if ! /usr/bin/time -v -o "$work/time" "$apps/attn-translate" --model "$run" --input "$input" --output "$work/out" \
    --beam "$beam" --batch-size "$batch_size" --threads "$threads" --quiet "$@"; then
    echo "bench-decode-memory.sh: $apps/attn-translate failed on $input (its error is above)" >&2
    exit 1
  fi
  [[ -z $outputs ]] || cp "$work/out" "$outputs/$name.txt"
  rss=$(awk -F': ' '/Maximum resident set size/ { printf "%d", $2 / 1024 }' "$work/time")
  seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$work/time")
}

flags=()
[[ -n $batch_tokens ]] && flags=(--batch-tokens "$batch_tokens")
echo "attn-translate --beam $beam --batch-size $batch_size --threads $threads${batch_tokens:+ --batch-tokens $batch_tokens}, run $run"
echo
if [[ -n $baseline ]]; then
  echo "| input | lines | words/line | peak RSS before (MB) | peak RSS after (MB) | after / before | seconds before / after |"
  echo "|---|---|---|---|---|---|---|"
else
  echo "| input | lines | words/line | peak RSS (MB) | seconds |"
  echo "|---|---|---|---|---|"
fi
for name in tatoeba iwslt long; do
  case $name in
    tatoeba) input=$tatoeba; label="Tatoeba test" ;;
    iwslt) input=$iwslt; label="IWSLT17 test" ;;
    long) input=$work/long.en; label="IWSLT17 test, 4 lines joined" ;;
  esac
  measure "$bin" "$input" "$name.after" "${flags[@]}"
  after=$rss after_s=$seconds
  count=$(wc -l < "$input")
  if [[ -n $baseline ]]; then
    measure "$baseline" "$input" "$name.before"
    before=$rss before_s=$seconds
    ratio=$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.2f", b ? a / b : 0 }')
    echo "| $label | $count | $(words "$input") | $before | $after | $ratio | $before_s / $after_s |"
  else
    echo "| $label | $count | $(words "$input") | $after | $after_s |"
  fi
done
