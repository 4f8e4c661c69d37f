#!/usr/bin/env bash
# attn against CTranslate2 on the same model: builds CTranslate2 (v4.x, from a source tree whose
# third_party/cpu_features, third_party/spdlog and third_party/cxxopts are present) against the
# system's oneDNN (CTranslate2 4.x needs oneDNN 3: with Debian 12's 2.6 its Conv1D operator, which
# no text Transformer uses, does not compile and must be left out by hand), exports the
# run with attn-export, checks that both translate the test set identically (greedy and beam,
# the settings of docs/guide.md "Export to CTranslate2"), then times both, interleaved, the
# median of REPEATS runs each.
#
#   tools/bench-ctranslate2.sh --ct2-src DIR [--bin DIR] [--model RUN] [--input FILE]
#                              [--beams "1 5"] [--repeats 3] [--threads 2] [--quantization float32]
#
# The comparison: CTranslate2's ct2-translator takes one max_decoding_length per run, while
# attn's limit is per sentence (int(max_len_ratio x S) + max_len_extra, S = pieces + 1), so the
# check translates the input in groups of one source length, each with its own limit, and puts
# the lines back in order. Scores (beam > 1) are compared to 1e-4. The timing runs translate the
# whole input in one process each, CTranslate2 with the largest limit of the input.
# Run it on a quiet machine: decoding speed on a shared machine varies widely.
set -euo pipefail

ct2_src=
bin=build-native/apps
model=runs/en-it
input=data/tatoeba_en_it/test.en
beams="1 5"
repeats=3
threads=2
quantization=float32
work=${TMPDIR:-/tmp}/bench-ctranslate2

while [[ $# -gt 0 ]]; do
  case "$1" in
    --ct2-src) ct2_src=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --beams) beams=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --quantization) quantization=$2; shift 2 ;;
    *) echo "bench-ctranslate2.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
  esac
done
[[ -n $ct2_src && -f $ct2_src/CMakeLists.txt ]] || { echo "bench-ctranslate2.sh: --ct2-src DIR: a CTranslate2 v4 source tree" >&2; exit 2; }
[[ -x $bin/attn-export ]] || { echo "bench-ctranslate2.sh: no $bin/attn-export: build first or give --bin DIR" >&2; exit 2; }
mkdir -p "$work"

# 1. CTranslate2 on oneDNN (libdnnl-dev) and GNU OpenMP, no MKL, with its command-line client.
ct2_build=$work/ct2-build
if [[ ! -x $ct2_build/cli/ct2-translator ]]; then
  cmake -S "$ct2_src" -B "$ct2_build" -DCMAKE_BUILD_TYPE=Release -DWITH_MKL=OFF -DWITH_DNNL=ON \
    -DOPENMP_RUNTIME=COMP -DBUILD_CLI=ON >/dev/null
  cmake --build "$ct2_build" -j"$(nproc)" --target translator
fi
translator=$ct2_build/cli/ct2-translator

# 2. The model, the settings, the input as pieces.
"$bin/attn-export" --format ctranslate2 --model "$model" --out "$work/model" --quantization "$quantization" --force
python3 - "$model/config.json" > "$work/settings" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
t, d = c["model"]["transformer"], c["decode"]
limit = t["max_positions"] if t["positions"] in ("sinusoidal", "learned") else 4 * c["data"]["max_len"]
print(d["max_len_ratio"], d["max_len_extra"], limit, "spm.model" if c["vocab"]["joint"] else "spm.src.model",
      "spm.model" if c["vocab"]["joint"] else "spm.tgt.model")
EOF
read -r ratio extra limit src_spm tgt_spm < "$work/settings"
"$bin/attn-tokenize" encode --model "$model/$src_spm" < "$input" > "$work/input.pieces"

# 3. Line for line (and scores), per source length.
for beam in $beams; do
  nbest=$([[ $beam -gt 1 ]] && echo 2 || echo 1)
  "$bin/attn-translate" --model "$model" --input "$input" --beam "$beam" --nbest "$nbest" --length-penalty 0 \
    --threads "$threads" --quiet > "$work/attn.$beam"
  python3 - "$work" "$beam" "$ratio" "$extra" "$limit" "$translator" "$threads" "$tgt_spm" "$model" "$bin" <<'EOF'
import collections, subprocess, sys
work, beam, ratio, extra, limit, translator, threads, tgt_spm, model, bin_dir = sys.argv[1:]
beam, ratio, extra, limit = int(beam), float(ratio), int(extra), int(limit)
lines = open(work + "/input.pieces", encoding="utf-8").read().split("\n")[:-1]
groups = collections.defaultdict(list)
for i, line in enumerate(lines):
    groups[min(len(line.split()) + 1, limit)].append(i)
ct2_out = [None] * len(lines)
for length, indices in groups.items():
    max_length = max(min(int(ratio * length) + extra, limit), 1)  # attn's max_output_length (float ratio)
    result = subprocess.run([translator, "--model", work + "/model", "--intra_threads", threads, "--beam_size",
                             str(beam), "--length_penalty", "0", "--min_decoding_length", "0", "--max_input_length", str(limit),
                             "--max_decoding_length", str(max_length), "--with_score"],
                            input="\n".join(lines[i] for i in indices) + "\n", capture_output=True, text=True,
                            check=True)
    for i, out in zip(indices, result.stdout.split("\n")):
        ct2_out[i] = out
pieces = [line.split(" ||| ", 1)[1] if " ||| " in line else "" for line in ct2_out]
scores = [float(line.split(" ||| ", 1)[0]) for line in ct2_out]
text = subprocess.run([bin_dir + "/attn-tokenize", "decode", "--model", model + "/" + tgt_spm],
                      input="\n".join(pieces) + "\n", capture_output=True, text=True, check=True).stdout.split("\n")
attn = open("%s/attn.%d" % (work, beam), encoding="utf-8").read().split("\n")
if beam > 1:  # "index ||| text ||| score", two per line: the first is the best
    best = [row.split(" ||| ") for row in attn[0::2] if row]
    attn_text, attn_scores = [b[1] for b in best], [float(b[2]) for b in best]
else:
    attn_text, attn_scores = attn[:len(lines)], None
same = sum(a == c for a, c in zip(attn_text, text))
print("beam %d: %d of %d lines identical" % (beam, same, len(lines)))
if attn_scores:
    close = sum(abs(a - c) <= 1e-4 for a, c in zip(attn_scores, scores))
    print("beam %d: %d of %d scores within 1e-4" % (beam, close, len(lines)))
if same != len(lines) or (attn_scores and close != len(lines)):
    raise SystemExit("bench-ctranslate2.sh: the outputs differ (beam %d): no timing of different work" % beam)
EOF
done

# 4. Time both, interleaved, median of $repeats.
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for beam in $beams; do
  : > "$work/time.attn"; : > "$work/time.ct2"
  for _ in $(seq "$repeats"); do
    /usr/bin/time -f %e -o "$work/t" "$bin/attn-translate" --model "$model" --input "$input" --beam "$beam" \
      --length-penalty 0 --threads "$threads" --quiet > /dev/null
    cat "$work/t" >> "$work/time.attn"
    /usr/bin/time -f %e -o "$work/t" "$translator" --model "$work/model" --intra_threads "$threads" \
      --beam_size "$beam" --length_penalty 0 --min_decoding_length 0 --max_input_length "$limit" --max_decoding_length "$limit" \
      --src "$work/input.pieces" > /dev/null
    cat "$work/t" >> "$work/time.ct2"
  done
  echo "beam $beam: attn $(median < "$work/time.attn") s, CTranslate2 $(median < "$work/time.ct2") s (median of $repeats)"
done
