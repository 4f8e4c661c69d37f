#!/usr/bin/env bash
# attn-serve under load (docs/performance.md, "Serving"): sentences/s with CLIENTS concurrent
# connections, each sending one test sentence per request (wrk, Debian's, with tools/bench-serve.lua),
# against `attn-translate --batch-size 32` on the same lines at the same precision and beam;
# p50/p99 latency of one sentence on an idle server (one connection) and under that load; the
# server's peak RSS. attn-translate runs before and after the server; the ratio takes the mean.
# Prints the CPU, every command's figures and a summary table.
#
#   tools/bench-serve.sh [--bin DIR] [--model RUN] [--input F] [--lines 2000] [--precision f32]
#                        [--beam K] [--threads 2] [--clients 64] [--seconds 30] [--wait-ms 5]
#
# --input defaults to the run's data.test_src (relative to the current directory, as training
# had it). Run it on a quiet machine: figures on a shared machine are not measurements.
set -euo pipefail

bin=build/apps
model=runs/en-it
input=
lines=2000
precision=f32
beam=
threads=2
clients=64
seconds=30
wait_ms=5

while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --lines) lines=$2; shift 2 ;;
    --precision) precision=$2; shift 2 ;;
    --beam) beam=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --wait-ms) wait_ms=$2; shift 2 ;;
    *) echo "bench-serve.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
[[ -x $bin/attn-serve && -x $bin/attn-translate ]] ||
  { echo "bench-serve.sh: no $bin/attn-serve or attn-translate: build first or give --bin DIR" >&2; exit 2; }
[[ -d $model ]] || { echo "bench-serve.sh: no run directory $model (--model)" >&2; exit 2; }
if [[ -z $input ]]; then
  input=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["test_src"])' "$model/config.json")
fi
[[ -f $input ]] || { echo "bench-serve.sh: no input $input (--input, or the run's data.test_src)" >&2; exit 2; }
"$here/install-deps.sh" wrk python3 >&2

work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

head -n "$lines" "$input" > "$work/lines.txt"
count=$(wc -l < "$work/lines.txt")
# One JSON request body per line, for the Lua script (wrk's Lua has no JSON).
python3 - "$work/lines.txt" "$work/bodies.txt" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8") as src, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in src:
        out.write(json.dumps({"q": line.rstrip("\n"), "source": "auto", "target": "auto"}) + "\n")
PY

"$bin/attn-serve" --version
grep -m1 'model name' /proc/cpuinfo || true
beam_args=()
[[ -n $beam ]] && beam_args=(--beam "$beam")
common=(--model "$model" --precision "$precision" --threads "$threads" "${beam_args[@]}")

# Run before the server and again after it: a shared host's speed drifts within a minute, and
# one reference run would carry that drift into the ratio.
translate_once() {
  "$bin/attn-translate" "${common[@]}" --batch-size 32 --input "$work/lines.txt" --output "$work/translate.out" \
    2> "$work/translate.err"
  grep 'sentences/s' "$work/translate.err" >&2
  grep -o '[0-9.]* sentences/s' "$work/translate.err" | tail -1 | cut -d' ' -f1
}
echo "== attn-translate --batch-size 32 on $count lines (before the server)"
translate_before=$(translate_once)

echo "== attn-serve --batch-size 32 --max-batch-wait-ms $wait_ms"
"$bin/attn-serve" "${common[@]}" --batch-size 32 --max-batch-wait-ms "$wait_ms" --port 0 --http-threads $((clients * 2)) \
  --max-queue 100000 2> "$work/serve.err" &
server_pid=$!
port=
for _ in $(seq 600); do
  port=$(grep -o 'listening on http://[^ ]*:[0-9]*' "$work/serve.err" | grep -o '[0-9]*$' || true)
  [[ -n $port ]] && curl -sf "http://127.0.0.1:$port/health" > /dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
  sleep 0.1
done
target=$(curl -sf "http://127.0.0.1:$port/languages" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["targets"][0])')
sed -i "s/\"target\": \"auto\"/\"target\": \"$target\"/" "$work/bodies.txt"
url="http://127.0.0.1:$port"

# wrk's latency percentiles in ms, and its requests/s, from its --latency report.
percentile() { awk -v p="$1" '$1 == p { v = $2; if (v ~ /us$/) v = v / 1000; else if (v ~ /ms$/) v = v + 0; else if (v ~ /s$/) v = v * 1000; print v }' "$2"; }
rate() { awk '/^Requests\/sec:/ { print $2 }' "$1"; }

echo "== idle: one connection, one sentence per request, 10 s"
BENCH_BODIES="$work/bodies.txt" wrk -t1 -c1 -d10s --latency -s "$here/bench-serve.lua" "$url" | tee "$work/idle.txt"
echo "== load: $clients connections, one sentence per request, $seconds s"
BENCH_BODIES="$work/bodies.txt" wrk -t2 -c"$clients" -d"${seconds}s" --timeout 30s --latency -s "$here/bench-serve.lua" \
  "$url" | tee "$work/load.txt"
peak_rss_mb=$(awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$server_pid/status")
curl -sf "$url/metrics" | grep -E '^attn_(batch_sentences_(sum|count)|sentences_translated_total)' || true
kill -TERM "$server_pid"
wait "$server_pid"
server_pid=
echo "== attn-translate --batch-size 32 on $count lines (after the server)"
translate_after=$(translate_once)
translate_rate=$(python3 -c "print(f'{($translate_before + $translate_after) / 2:.1f}')")

serve_rate=$(rate "$work/load.txt")
echo
echo "| figure | value |"
echo "|---|---|"
echo "| attn-translate --batch-size 32, $count lines, mean of before and after | $translate_rate sentences/s ($translate_before, $translate_after) |"
echo "| attn-serve, $clients clients, one sentence per request | $serve_rate sentences/s ($(python3 -c "print(f'{100 * $serve_rate / $translate_rate:.0f}')")% of attn-translate) |"
echo "| latency idle (1 client), p50 / p99 | $(percentile 50% "$work/idle.txt") / $(percentile 99% "$work/idle.txt") ms |"
echo "| latency under load ($clients clients), p50 / p99 | $(percentile 50% "$work/load.txt") / $(percentile 99% "$work/load.txt") ms |"
echo "| attn-serve peak RSS | $peak_rss_mb MB |"
beam_used=${beam:-"the run's decode.beam"}
echo "(precision $precision, beam $beam_used, $threads threads; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
