#!/usr/bin/env bash
# The long-run memory proof (docs/performance.md, "Memory"): a small Transformer trained for
# 20,000 steps on a streamed synthetic corpus (tools/make-large-corpus.py: Tatoeba pairs joined to real-corpus lengths,
# so batch shapes vary as they do on news or Europarl), then tools/memory-trend.py judges its
# rss_mb. A run whose resident memory creeps fails, however slowly: that is the point.
#
# Usage: tools/memory-long-run.sh [--bin DIR] [--steps N] [--pairs N] [--out DIR] [--set k=v ...]
#   --bin DIR    attn's programs (default build/apps)
#   --steps N    default 20000 (minutes on one core)
#   --pairs N    corpus size (default 1,000,000 pairs, about 240 MB, made once under OUT/corpus)
#   --out DIR    default runs/memory-long-run
#   --set k=v    more config overrides (the base is configs/en-it.json with the model below)
# Exits with memory-trend.py's status: 0 flat, 1 growing.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="build/apps" steps=20000 pairs=1000000 out="runs/memory-long-run" overrides=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --pairs) pairs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --set) overrides+=(--set "$2"); shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "memory-long-run: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -f data/tatoeba_en_it/train.en ] || { echo "memory-long-run: data/tatoeba_en_it is missing (tools/get-data.sh)" >&2; exit 2; }

run="$out/run"
# Never delete a run: a second measurement needs another --out, or the old one moved aside.
[ ! -e "$run" ] || { echo "memory-long-run: $run already exists; move it aside or choose another --out" >&2; exit 2; }
corpus="$out/corpus"
if [ ! -f "$corpus/train.it" ]; then
  python3 tools/make-large-corpus.py --out "$corpus" --pairs "$pairs" >"$out/corpus.log" 2>&1
fi

# A model small enough for 20,000 steps in minutes, a window far smaller than the corpus (it
# streams), and a log record every 100 steps for the trend.
"$bin/attn-train" --config configs/en-it.json \
  --set "output_dir=$run" --set "data.train_src=$corpus/train.en" --set "data.train_tgt=$corpus/train.it" \
  --set data.buffer_pairs=20000 --set data.valid_max_sentences=100 --set vocab.size=1000 \
  --set vocab.max_sentences=50000 --set model.transformer.d_model=32 --set model.transformer.heads=2 \
  --set model.transformer.ffn_dim=64 --set model.transformer.encoder_layers=2 \
  --set model.transformer.decoder_layers=2 --set train.threads=1 --set train.batch_tokens=512 \
  --set "train.max_steps=$steps" --set train.max_time=0 --set train.valid_every=5000 \
  --set train.save_every=5000 --set train.log_every=100 "${overrides[@]}" >"$out/console.log" 2>&1

python3 - "$run/train.log.jsonl" <<'PY'
import json, sys
train = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "train"]
marks = [r for r in train if r["step"] in (100, 200) or r["step"] % 2000 == 0]
print("rss_mb by step: " + ", ".join(f"{r['step']}: {r['rss_mb']:.0f}" for r in marks))
print(f"primitive cache: {train[-1]['primitive_cache_entries']} entries, "
      f"hit rate {100 * train[-1]['primitive_cache_hit_rate']:.2f}% in the last window")
PY
# Warm-up is the first tenth of the run, not memory-trend's default 200 steps: the heap takes
# about 2,000 steps to hold the primitive cache's working set of 1,024 entries of mixed sizes,
# and then must stay flat for 18,000.
python3 tools/memory-trend.py "$run" --after-step $((steps / 10))
