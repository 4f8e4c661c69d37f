#!/usr/bin/env bash
# The main job: set up a fresh machine, train the English->Italian Transformer of
# configs/en-it.json, translate the config's test set (data.test_src) with beam 5 (with the
# average of the run's kept step checkpoints when it keeps some) and score it against
# data.test_tgt.
#
# Usage: tools/main-job.sh [--data-from DIR] [--config FILE] [--set key=value ...] [--restart]
#   --data-from DIR   take the corpus from a local copy (see tools/get-data.sh --from)
#   --config FILE     another config (default: configs/en-it.json)
#   --set k=v         config overrides, passed to attn-train
#   --restart         start the run over: attn-train --restart moves the earlier (or an
#                     unfinished) run, with this job's outputs (checkpoint.average, test.*),
#                     into a dated subfolder of its directory
# Running it again resumes the run (and stops at once when it is finished), so it is safe to
# repeat after an interruption. A run killed before its first checkpoint cannot be resumed:
# attn-train then says so, and --restart starts it over.
set -euo pipefail
cd "$(dirname "$0")/.."

data_from=""
config="configs/en-it.json"
overrides=()
restart=0
while [ $# -gt 0 ]; do
  case "$1" in
    --data-from) data_from="$2"; shift 2 ;;
    --config) config="$2"; shift 2 ;;
    --set) overrides+=(--set "$2"); shift 2 ;;
    --restart) restart=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "main-job: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

tools/install-deps.sh
# A native build: the job runs where it is built, so let the compiler use this CPU's vectors.
cmake -S . -B build-native -DCMAKE_BUILD_TYPE=Release -DATTN_NATIVE=ON -DATTN_BUILD_TESTS=OFF >/dev/null
cmake --build build-native -j "$(nproc)"
bin=build-native/apps

if [ -n "$data_from" ]; then tools/get-data.sh --from "$data_from"; else tools/get-data.sh; fi

run_dir=$("$bin/attn-train" --config "$config" "${overrides[@]}" --print output_dir)
resume=()
if [ "$restart" -eq 1 ]; then
  resume=(--restart)
elif [ -f "$run_dir/checkpoint.last.safetensors" ]; then
  resume=(--resume)
fi

start=$(date +%s)
"$bin/attn-train" --config "$config" "${overrides[@]}" "${resume[@]}"
echo "main-job: training took $(( $(date +%s) - start )) s (this invocation)"

# A run that keeps step checkpoints (train.keep_checkpoints, 5 in configs/en-it.json) is
# translated with the average of them: it won on both dev sets (docs/experiments.md, "ALiBi with
# joined pairs"); otherwise with checkpoint.best.
keep=$("$bin/attn-train" --config "$config" "${overrides[@]}" --print train.keep_checkpoints)
checkpoint=()
if [ "$keep" -gt 0 ]; then
  kept=$(find "$run_dir" -maxdepth 1 -name 'checkpoint.step-*.safetensors' | wc -l)
  if [ "$kept" -gt 0 ]; then
    average="$run_dir/checkpoint.average.safetensors"
    "$bin/attn-average" --model "$run_dir" --last "$(( kept < keep ? kept : keep ))" --out "$average" --force
    checkpoint=(--checkpoint "$average")
  fi
fi

# The test set of the run's own config.json, read by attn (a summary of the speed on stderr).
hyp="$run_dir/test.beam5.txt"
"$bin/attn-translate" --model "$run_dir" "${checkpoint[@]}" --subset test --beam 5 --output "$hyp"
echo "main-job: translations -> $hyp"
"$bin/attn-score" --model "$run_dir" --subset test --hyp "$hyp" | tee "$run_dir/test.beam5.score"
# The run's resident memory over its steps: flat, or growing (docs/performance.md, "Memory").
# Exit 1 is a growing run; 2 a run too short to judge (it says so), which is no warning.
trend_status=0
python3 tools/memory-trend.py "$run_dir" || trend_status=$?
[ "$trend_status" -ne 1 ] || echo "main-job: warning: the run's memory grew (above)" >&2
