#!/usr/bin/env bash
# AER of attention alignments on an XL-WA style gold file (source<TAB>target<TAB>links), for
# every extraction choice of attn-dump-attention --alignments: layer, one head or the mean,
# shift 0 or 1, word links from any piece link or from the mean attention.
#   tools/alignment-aer.sh RUN GOLD.tsv [BUILD_DIR]      (prints a Markdown table)
set -euo pipefail
run=$1 gold=$2 build=${3:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cut -f1 "$gold" > "$work/src"
cut -f2 "$gold" > "$work/tgt"
layers=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1])); m=c['model']; print(m['transformer']['decoder_layers'] if m['type']=='transformer' else 1)" "$run/config.json")
heads=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1])); m=c['model']; print(m['transformer']['heads'] if m['type']=='transformer' else 1)" "$run/config.json")
echo "| layer | head | shift | words | AER | precision | recall |"
echo "|---|---|---|---|---:|---:|---:|"
for layer in $(seq 0 $((layers - 1))); do
  for head in mean $(seq 0 $((heads - 1))); do
    for shift in 0 1; do
      for words in any mean; do
        "$build/apps/attn-dump-attention" --model "$run" --src "$work/src" --tgt "$work/tgt" --alignments \
          --alignment-layer "$layer" --alignment-head "$head" --alignment-shift "$shift" --alignment-words "$words" \
          > "$work/links" 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
        "$build/apps/attn-score" --alignments "$gold" --hyp "$work/links" --json |
          python3 -c "import json,sys; s=json.load(sys.stdin); print(f\"| $layer | $head | $shift | $words | {s['aer']:.3f} | {s['precision']:.3f} | {s['recall']:.3f} |\")"
      done
    done
  done
done
