#!/usr/bin/env bash
# bench-mpi.sh: data-parallel scaling of attn-train on this machine. Trains the same config for
# the same steps as 1 rank x 1 thread, then as mpirun -np 2 x 1 thread (each rank its half of
# every batch), and prints target tokens/s (median over log windows, the first one left out
# as warm-up), the scaling efficiency, and the allreduce time per step.
#
# Usage: tools/bench-mpi.sh [--config FILE] [--steps N] [--build DIR] [--set key=value ...]
#   defaults: configs/en-it.json, 300 steps, build-native (falling back to build)
# Needs the corpus the config names (tools/get-data.sh) and python3 to read the logs.
set -euo pipefail
cd "$(dirname "$0")/.."

config=configs/en-it.json
steps=300
build=build-native
[ -x "$build/apps/attn-train" ] || build=build
overrides=()
while [ $# -gt 0 ]; do
  case "$1" in
    --config) config="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --set) overrides+=(--set "$2"); shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-mpi: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# mpirun as root needs both; a container may forbid the shared-memory transport's fast copy.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none

log_every=$(( steps / 6 > 0 ? steps / 6 : 1 ))
common=(--config "$config" "${overrides[@]}" --set train.threads=1 --set "train.max_steps=$steps"
  --set "train.log_every=$log_every" --set train.valid_every=1000000 --set train.save_every=1000000
  --set train.max_time=0)

echo "bench-mpi: 1 rank x 1 thread, $steps steps of $config"
"$build/apps/attn-train" "${common[@]}" --set "output_dir=$work/one" 2>"$work/one.err" ||
  { cat "$work/one.err" >&2; exit 1; }
# The second run reuses the first one's vocabulary, so both train the same model.
mkdir -p "$work/two"
cp "$work"/one/spm*.model "$work/two/"
echo "bench-mpi: 2 ranks x 1 thread (mpirun -np 2 --bind-to core)"
mpirun -np 2 --bind-to core "$build/apps/attn-train" "${common[@]}" --set "output_dir=$work/two" 2>"$work/two.err" ||
  { cat "$work/two.err" >&2; exit 1; }

python3 - "$work/one/train.log.jsonl" "$work/two/train.log.jsonl" "$log_every" <<'PY'
import json, statistics, sys

def windows(path):
    records = [json.loads(line) for line in open(path)]
    return [r for r in records if r["type"] == "train"][1:]  # the first window warms up

one, two = windows(sys.argv[1]), windows(sys.argv[2])
t1 = statistics.median(r["tokens_per_s"] for r in one)
t2 = statistics.median(r["tokens_per_s"] for r in two)
comm = statistics.median(r["allreduce_s_per_step"] for r in two)
log_every = int(sys.argv[3])
step = statistics.median((r["elapsed_s"] - p["elapsed_s"]) / log_every for p, r in zip(two, two[1:]))
print(f"{'setup':<22} {'tokens/s':>10}")
print(f"{'1 rank x 1 thread':<22} {t1:>10.0f}")
print(f"{'2 ranks x 1 thread':<22} {t2:>10.0f}")
print(f"speed-up {t2 / t1:.2f}x, scaling efficiency {100 * t2 / (2 * t1):.0f}%")
print(f"allreduce per step (2 ranks): {1000 * comm:.1f} ms of {1000 * step:.0f} ms ({100 * comm / step:.1f}%)")
PY
