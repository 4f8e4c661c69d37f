#!/usr/bin/env bash
# attn against CTranslate2 on the same model: builds CTranslate2 (v4.x, from a source tree whose
# third_party/cpu_features, third_party/spdlog and third_party/cxxopts are present) against the
# system's oneDNN (CTranslate2 4.x needs oneDNN 3: with Debian 12's 2.6 its Conv1D operator, which
# no text Transformer uses, does not compile and must be left out by hand), exports the
# run with attn-export, checks that both translate the test set identically (greedy and beam,
# the settings of docs/guide.md "Export to CTranslate2"), then times both, interleaved, the
# median of REPEATS runs each: f32 and int8 (attn --precision int8; CTranslate2 on the model
# exported with --quantization int8), greedy and beam, batch 32 over the whole input and batch 1
# over its first LATENCY_LINES lines (one-sentence latency), and each run's peak RSS.
# Batch 32 is throughput: attn decodes a batch a thread at once (decode.parallel_batches), and
# CTranslate2 runs both ways it has, one batch on every thread (--intra_threads) and a batch a
# thread (--inter_threads); the ratio and its RSS are those of its faster way. Both sort the
# input by length in windows of 16 batches (CTranslate2's --read_batch_size). Batch 1 is
# latency: one sentence at a time on every thread in both.
#
#   tools/bench-ctranslate2.sh --ct2-src DIR [--bin DIR] [--model RUN] [--input FILE]
#                              [--beams "1 5"] [--precisions "f32 int8"] [--repeats 3] [--threads 2]
#                              [--latency-lines 200] [--max-differing-lines 0]
#
# The comparison: CTranslate2's ct2-translator takes one max_decoding_length per run, while
# attn's limit is per sentence (int(max_len_ratio x S) + max_len_extra, S = pieces + 1), so the
# check translates the input in groups of one source length, each with its own limit, and puts
# the lines back in order. Scores (beam > 1) are compared to 1e-4, relative for scores beyond 1 in
# size (attn prints 6 significant digits). The two beam searches stop differently (attn at a
# sentence's K-th finished hypothesis, CTranslate2 when its best beam ends), which now and then
# gives a line another best: --max-differing-lines lets that many lines differ, each shown,
# before the timing refuses to compare different work. The timing runs translate the input in
# one process each, both with the largest limit of the input (attn through a copy of the
# run whose config sets that limit), so both do the same work. Sentences/s are of the
# translation alone: attn's summary, and CTranslate2's --log_throughput (target tokens/s) over
# the target tokens it wrote.
# Run it on a quiet machine: decoding speed on a shared machine varies widely.
set -euo pipefail

ct2_src=
bin=build-native/apps
model=runs/en-it
input=data/tatoeba_en_it/test.en
beams="1 5"
repeats=3
threads=2
precisions="f32 int8"
latency_lines=200
window_batches=16  # attn-translate sorts the input by length in windows of 16 batches: so does CTranslate2 here
max_differing=0
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
    --precisions) precisions=$2; shift 2 ;;
    --latency-lines) latency_lines=$2; shift 2 ;;
    --max-differing-lines) max_differing=$2; shift 2 ;;
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
"$bin/attn-export" --format ctranslate2 --model "$model" --out "$work/model" --quantization float32 --force
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
  python3 - "$work" "$beam" "$ratio" "$extra" "$limit" "$translator" "$threads" "$tgt_spm" "$model" "$bin" "$max_differing" <<'EOF'
import collections, subprocess, sys
work, beam, ratio, extra, limit, translator, threads, tgt_spm, model, bin_dir, max_differing = sys.argv[1:]
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
    close = sum(abs(a - c) <= 1e-4 * max(1, abs(c)) for a, c in zip(attn_scores, scores))
    print("beam %d: %d of %d scores within 1e-4" % (beam, close, len(lines)))
differing = [i for i in range(len(lines))
             if attn_text[i] != text[i] or (attn_scores and abs(attn_scores[i] - scores[i]) > 1e-4 * max(1, abs(scores[i])))]
for i in differing[:10]:
    print("  line %d: attn %r (%s), CTranslate2 %r (%s)" % (i + 1, attn_text[i], attn_scores[i] if attn_scores else "-",
                                                          text[i], scores[i] if attn_scores else "-"))
if len(differing) > int(max_differing):
    raise SystemExit("bench-ctranslate2.sh: the outputs differ (beam %d): no timing of different work" % beam)
EOF
done

# 4. Time both, interleaved, median of $repeats. attn reads a copy of the run whose decode limit
# is CTranslate2's: the largest of the input.
fixed=$work/run-fixed-limit
rm -rf "$fixed" && mkdir -p "$fixed"
for file in "$model"/*; do [[ $(basename "$file") == config.json ]] || ln -s "$(realpath "$file")" "$fixed/"; done
decode_limit=$(python3 - "$model/config.json" "$fixed/config.json" "$work/input.pieces" "$ratio" "$extra" "$limit" <<'EOF'
import json, sys
source, target, pieces, ratio, extra, limit = sys.argv[1:]
longest = max(min(len(line.split()) + 1, int(limit)) for line in open(pieces, encoding="utf-8"))
config = json.load(open(source))
# int(1e-9 x S) is 0 for any source: every sentence's limit is max_len_extra.
config["decode"]["max_len_ratio"] = 1e-9
config["decode"]["max_len_extra"] = min(int(float(ratio) * longest) + int(extra), int(limit))
json.dump(config, open(target, "w"), indent=2)
print(config["decode"]["max_len_extra"])
EOF
)
head -n "$latency_lines" "$input" > "$work/latency.txt"
head -n "$latency_lines" "$work/input.pieces" > "$work/latency.pieces"
if [[ " $precisions " == *" int8 "* && ! -f $work/model.int8/model.bin ]]; then
  "$bin/attn-export" --format ctranslate2 --model "$model" --out "$work/model.int8" --quantization int8 --force
fi

# attn PRECISION BEAM BATCH INPUT PARALLEL_BATCHES -> "sentences/s peak-MB target-tokens"
time_attn() {
  /usr/bin/time -f %M -o "$work/rss" "$bin/attn-translate" --model "$fixed" --input "$4" --precision "$1" \
    --beam "$2" --batch-size "$3" --batch-tokens 0 --length-penalty 0 --threads "$threads" \
    --parallel-batches "$5" > /dev/null 2> "$work/log"
  python3 - "$work/log" "$work/rss" <<'EOF'
import re, sys
log, rss = sys.argv[1:]
tokens, per_s = re.findall(r"\(([0-9]+) target tokens\) in [0-9.]+ s: ([0-9.]+) sentences/s", open(log).read())[-1]
print("%s %d %s" % (per_s, int(open(rss).read()) // 1024, tokens))
EOF
}
# CTranslate2 PRECISION BEAM BATCH PIECES INTER -> "sentences/s peak-MB target-tokens": INTER
# batches at once (--inter_threads), each on threads / INTER threads (--intra_threads).
time_ct2() {
  local dir=$work/model compute=float32
  [[ $1 == int8 ]] && dir=$work/model.int8 compute=int8
  /usr/bin/time -f %M -o "$work/rss" "$translator" --model "$dir" --compute_type "$compute" --inter_threads "$5" \
    --intra_threads "$((threads / $5))" --read_batch_size "$((window_batches * $3))" --beam_size "$2" --batch_size "$3" --length_penalty 0 --min_decoding_length 0 --max_input_length "$limit" \
    --max_decoding_length "$decode_limit" --src "$4" --log_throughput > "$work/out" 2> "$work/log"
  python3 - "$work/out" "$work/log" "$4" "$work/rss" <<'EOF'
import re, sys
out, log, src, rss = sys.argv[1:]
tokens = sum(len(line.split()) for line in open(out, encoding="utf-8"))  # as its throughput counts them
per_s = float(re.findall(r"[0-9.]+", open(log).read().strip().splitlines()[-1])[-1])
lines = sum(1 for _ in open(src, encoding="utf-8"))
# The tokens column counts each line's eos, as attn's summary does.
print("%.1f %d %d" % (lines / (tokens / per_s), int(open(rss).read()) // 1024, tokens + lines))
EOF
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
column() { cut -d' ' -f"$2" "$work/runs.$1" | median; }
printf "%-9s %-4s %-5s %11s %12s %12s %7s %8s %8s\n" precision beam batch "attn sent/s" "CT2 1 batch" \
  "CT2 $threads batch" "ratio" "attn MB" "CT2 MB"
for precision in $precisions; do
  for beam in $beams; do
    for batch in 32 1; do
      text=$input pieces=$work/input.pieces parallel=true
      [[ $batch == 1 ]] && text=$work/latency.txt pieces=$work/latency.pieces parallel=false
      : > "$work/runs.attn"
      : > "$work/runs.ct2"
      : > "$work/runs.ct2inter"
      for _ in $(seq "$repeats"); do
        time_attn "$precision" "$beam" "$batch" "$text" "$parallel" >> "$work/runs.attn"
        time_ct2 "$precision" "$beam" "$batch" "$pieces" 1 >> "$work/runs.ct2"
        [[ $parallel == true ]] && time_ct2 "$precision" "$beam" "$batch" "$pieces" "$threads" >> "$work/runs.ct2inter"
      done
      a=$(column attn 1) c=$(column ct2 1) ci=$(column ct2inter 1) rss=$(column ct2 2)
      best=$(python3 -c "print(max($c, float('${ci:-0}')))")
      [[ -n $ci && $ci == "$best" ]] && rss=$(column ct2inter 2)
      printf "%-9s %-4s %-5s %11s %12s %12s %6.2fx %8s %8s\n" "$precision" "$beam" "$batch" "$a" "$c" "${ci:--}" \
        "$(python3 -c "print($a / $best)")" "$(column attn 2)" "$rss"
      echo "  runs (sentences/s peak-MB target-tokens): attn $(paste -sd';' "$work/runs.attn")," \
        "CTranslate2 $(paste -sd';' "$work/runs.ct2"), $threads batches at once $(paste -sd';' "$work/runs.ct2inter")"
    done
  done
done
