#!/usr/bin/env bash
# Proof at scale: train on a corpus far larger than memory, kill the run with SIGKILL in the
# middle of its file, resume it, and report peak RSS, time to the first step and tokens/s.
#
# Usage: tools/large-corpus-check.sh --corpus DIR [--bin DIR] [--steps N] [--kill-at N]
#                                    [--vocab FILE] [--out DIR] [--set key=value ...]
#   --corpus DIR   holds train.en and train.it (tools/make-large-corpus.py --out DIR)
#   --bin DIR      attn's programs (default: build/apps)
#   --steps N      steps in all (default 500); --kill-at N: SIGKILL once step N is logged
#                  (default steps/2), after its checkpoint (save_every 50)
#   --vocab FILE   a SentencePiece model to use (spm.model of an en-it run); without it the
#                  run trains its own on a sample of the corpus
#   --out DIR      the run directory (default: a new temporary one)
#   --set k=v      more config overrides (configs/en-it.json is the base)
# Prints one line per phase and a summary; the run's own log is DIR/console.log.
set -euo pipefail
cd "$(dirname "$0")/.."

corpus="" bin="build/apps" steps=500 kill_at="" vocab="" out="" overrides=()
while [ $# -gt 0 ]; do
  case "$1" in
    --corpus) corpus="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --kill-at) kill_at="$2"; shift 2 ;;
    --vocab) vocab="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --set) overrides+=(--set "$2"); shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "large-corpus-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$corpus" ] || { echo "large-corpus-check: --corpus DIR is required" >&2; exit 2; }
for f in "$corpus/train.en" "$corpus/train.it"; do
  [ -f "$f" ] || { echo "large-corpus-check: $f does not exist (make it with tools/make-large-corpus.py)" >&2; exit 2; }
done
kill_at="${kill_at:-$((steps / 2))}"
out="${out:-$(mktemp -d)/run}"
mkdir -p "$out"
[ -z "$vocab" ] || cp "$vocab" "$out/spm.model"

train=("$bin/attn-train" --config configs/en-it.json
  --set "output_dir=$out" --set "data.train_src=$corpus/train.en" --set "data.train_tgt=$corpus/train.it"
  --set "train.max_steps=$steps" --set train.max_time=0 --set train.log_every=1 --set train.save_every=50
  --set train.valid_every=100000 --set data.valid_max_sentences=200 "${overrides[@]}")

# Peak RSS of a process, from its VmHWM, sampled until it ends (a SIGKILLed process reports nothing).
watch_peak() {
  local pid=$1 peak=0 hwm
  while kill -0 "$pid" 2>/dev/null; do
    hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ "${hwm:-0}" -gt "$peak" ] && peak=$hwm
    sleep 0.5
  done
  echo $((peak / 1024))
}

# The step of the last "train" record of the run's log.
last_step() {
  python3 -c 'import json, sys
steps = [r["step"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "train"]
print(steps[-1] if steps else "")' "$out/train.log.jsonl" 2>/dev/null || true
}

# Phase 1: until step kill_at is logged, then SIGKILL.
start=$(date +%s.%N)
"${train[@]}" >"$out/console.log" 2>&1 &
pid=$!
( while kill -0 "$pid" 2>/dev/null; do
    s=$(last_step); if [ -n "$s" ] && [ "$s" -ge "$kill_at" ]; then kill -9 "$pid"; break; fi; sleep 1
  done ) &
peak1=$(watch_peak "$pid")
wait "$pid" 2>/dev/null || true
first_step=$(grep -m1 -E 'step +1 \|' "$out/console.log" | sed 's/^\[\([^]]*\)\].*/\1/')
echo "phase 1: killed (SIGKILL) at step $(last_step); peak RSS ${peak1} MB"

# Phase 2: resume to the end.
"${train[@]}" --resume >>"$out/console.log" 2>&1 &
pid=$!
peak2=$(watch_peak "$pid")
wait "$pid"
resumed=$(grep -o 'resumed from .* at step [0-9]*' "$out/console.log" | tail -1 | grep -o '[0-9]*$')
echo "phase 2: resumed from step $resumed, finished at step $(last_step); peak RSS ${peak2} MB"

python3 - "$out" "$start" "$first_step" "$resumed" <<'EOF'
import datetime, json, statistics, sys
out, start, first, resumed = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
records = [json.loads(l) for l in open(f"{out}/train.log.jsonl")]
train = [r for r in records if r.get("type") == "train"]
# Steps 1-20 of each session warm up (primitive creation); the rest are steady.
warm = set(range(1, 21)) | set(range(resumed + 1, resumed + 21))
steady = [r["tokens_per_s"] for r in train if r["step"] not in warm]
first_t = datetime.datetime.strptime(first, "%Y-%m-%d %H:%M:%S.%f").timestamp() if first else float("nan")
print(f"step 1 done {first_t - start:.1f} s after the start")
print(f"tokens/s median {statistics.median(steady):.0f} over {len(steady)} steps (warm-up steps left out)")
print(f"rss_mb by step: " + ", ".join(f"{r['step']}: {r['rss_mb']:.0f}" for r in train if r["step"] % 50 == 0))
EOF
grep "data window" "$out/console.log" | sed 's/^\[[^]]*\] \[info\] /  /'
