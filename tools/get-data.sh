#!/usr/bin/env bash
# get-data.sh: put the English->Italian corpus where attn's configs expect it.
#
# Usage: tools/get-data.sh [--from DIR] [--dest DIR] [--make-splits FILE]
#
# Result (DEST defaults to ./data), plain UTF-8, one sentence per line, X.en aligned with X.it:
#   DEST/tatoeba_en_it/{train,dev,test}.{en,it}   main corpus (337,916 / 2,000 / 2,000 pairs)
#   DEST/iwslt17_en_it/{dev,test}.{en,it}         evaluation only (929 / 1,566 pairs)
#
# The corpus:
#  * Tatoeba English-Italian sentence pairs, as released by manythings.org/anki ("ita-eng",
#    ita.txt; the 2021-09-29 copy with 352,040 pairs). Sentences (c) their Tatoeba contributors,
#    tatoeba.org, CC-BY 2.0 FR. That copy is taken from the GitHub repository
#    nikodallanoce/NeuralMachineTranslation, file dataset/formatted.zip, pinned to a commit.
#    The current manythings file is newer and larger, so it would give different splits.
#  * IWSLT 2017 TED en-it dev2010 and tst2010 (WIT3/FBK, 2017-01-trnmted release), taken from
#    the GitHub repository lidongxing/SLP-LMNMT, pinned to a commit. TED Conference LLC,
#    CC BY-NC-ND 3.0: non-commercial research evaluation only.
#
# --from DIR   copy an existing prepared copy: DIR/tatoeba_en_it/... and DIR/iwslt17_en_it/...
#              as laid out above. Idempotent: files already identical are left alone.
# (default)    if DEST already holds the whole corpus, keep it; otherwise download the raw files (curl), check their sha256, and rebuild the splits with
#              make_splits.py, the corpus' split script (Python 3, standard library), which must
#              sit next to this script or be given with --make-splits FILE. The held-out split
#              that script also writes is discarded.
# Either way, every .en/.it pair is checked to have the same number of lines.
set -euo pipefail

readonly TATOEBA_FILES=(train.en train.it dev.en dev.it test.en test.it)
readonly IWSLT_FILES=(dev.en dev.it test.en test.it)

readonly TATOEBA_URL="https://raw.githubusercontent.com/nikodallanoce/NeuralMachineTranslation/0f8c18107f7b43b5bf4bdc6f8478b44b4fe3644a/dataset/formatted.zip"
readonly TATOEBA_SHA256="cb305fdd913642a5ad62ff0e39f601ecc9b157fc3dafabf72386d204d60a40f5"
readonly IWSLT_BASE="https://raw.githubusercontent.com/lidongxing/SLP-LMNMT/ff786b5c0782391179bce0c058a315e6c6eff09c/data/DeEnItNlRo-DeEnItNlRo"
readonly IWSLT_RAW=(
  "IWSLT17.TED.dev2010.en-it.en.xml 57691765751ad9a2897470b5e9b90ba9a35414096b85f9cc9c48b854717250c2"
  "IWSLT17.TED.dev2010.en-it.it.xml 4227e9894fe1bd8e8f1447a977d4029fc046131e55506cc4e521a5dbf0c970c7"
  "IWSLT17.TED.tst2010.en-it.en.xml 1a3fbf8360ad2282ae1ad118f1827cdc607cc86dd612a03a803d37591ef64887"
  "IWSLT17.TED.tst2010.en-it.it.xml 07dddd62865362f393ff8f6b4f5db9d79b49dc65f77a13a988c963d3e81ebff0"
)

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

die() {
  echo "get-data.sh: error: $*" >&2
  exit 1
}

# Every relative path (corpus/file) the corpus consists of.
corpus_files() {
  local f
  for f in "${TATOEBA_FILES[@]}"; do echo "tatoeba_en_it/$f"; done
  for f in "${IWSLT_FILES[@]}"; do echo "iwslt17_en_it/$f"; done
}

# check_pairs ROOT: every X.en under ROOT has as many lines as X.it.
check_pairs() {
  local root=$1 rel en it
  while read -r rel; do
    [[ $rel == *.en ]] || continue
    en="$root/$rel"
    it="$root/${rel%.en}.it"
    local n_en n_it
    n_en=$(wc -l <"$en")
    n_it=$(wc -l <"$it")
    [[ $n_en -eq $n_it ]] || die "$en has $n_en lines but $it has $n_it"
    [[ $n_en -gt 0 ]] || die "$en is empty"
    printf '  %-28s %8d pairs\n' "${rel%.en}" "$n_en"
  done < <(corpus_files)
}

# corpus_complete DIR: every corpus file is in DIR and every pair is line-aligned.
corpus_complete() {
  local root=$1 rel
  while read -r rel; do
    [[ -s "$root/$rel" ]] || return 1
  done < <(corpus_files)
  (check_pairs "$root" >/dev/null)
}

copy_from() {
  local from=$1 dest=$2 rel missing=()
  while read -r rel; do
    [[ -f "$from/$rel" ]] || missing+=("$from/$rel")
  done < <(corpus_files)
  if [[ ${#missing[@]} -gt 0 ]]; then
    die "missing in --from: ${missing[*]}"
  fi
  check_pairs "$from" >/dev/null
  while read -r rel; do
    mkdir -p "$(dirname "$dest/$rel")"
    if cmp -s "$from/$rel" "$dest/$rel"; then continue; fi
    # Copy then rename, so an interrupted run never leaves a truncated file in place.
    rm -f "$dest/$rel.partial"
    cat "$from/$rel" >"$dest/$rel.partial"  # not cp: a read-only source must not give a read-only copy
    mv "$dest/$rel.partial" "$dest/$rel"
  done < <(corpus_files)
}

# fetch URL SHA256 FILE: download (unless already there with the right checksum) and verify.
fetch() {
  local url=$1 sha=$2 file=$3
  if [[ -f $file ]] && echo "$sha  $file" | sha256sum --check --status; then return; fi
  echo "downloading $url"
  curl --fail --location --silent --show-error --retry 3 --output "$file.partial" "$url" ||
    die "download failed: $url (no network? then copy a prepared corpus with --from DIR)"
  echo "$sha  $file.partial" | sha256sum --check --status ||
    die "checksum mismatch for $url (expected sha256 $sha)"
  mv "$file.partial" "$file"
}

download() {
  local dest=$1 make_splits=$2 entry name sha
  [[ -f $make_splits ]] || die "the split script make_splits.py was not found at $make_splits;" \
    "pass --make-splits FILE, or copy a prepared corpus with --from DIR"
  command -v curl >/dev/null || die "curl is needed to download the corpus"
  command -v python3 >/dev/null || die "python3 is needed to rebuild the splits"
  local raw="$dest/raw"
  mkdir -p "$raw/iwslt17"
  fetch "$TATOEBA_URL" "$TATOEBA_SHA256" "$raw/formatted.zip"
  for entry in "${IWSLT_RAW[@]}"; do
    read -r name sha <<<"$entry"
    fetch "$IWSLT_BASE/$name" "$sha" "$raw/iwslt17/$name"
  done
  local heldout
  heldout=$(mktemp -d)
  trap 'rm -rf "$heldout"' EXIT
  python3 "$make_splits" tatoeba --raw "$raw/formatted.zip" --out "$dest/tatoeba_en_it" --heldout-out "$heldout"
  python3 "$make_splits" iwslt17 --raw-dir "$raw/iwslt17" --out "$dest/iwslt17_en_it"
}

main() {
  local from="" dest="data" make_splits
  make_splits="$(cd "$(dirname "$0")" && pwd)/make_splits.py"
  while [[ $# -gt 0 ]]; do
    case $1 in
      --from) [[ $# -ge 2 ]] || die "--from needs a directory"; from=$2; shift 2 ;;
      --dest) [[ $# -ge 2 ]] || die "--dest needs a directory"; dest=$2; shift 2 ;;
      --make-splits) [[ $# -ge 2 ]] || die "--make-splits needs a file"; make_splits=$2; shift 2 ;;
      -h | --help) usage; exit 0 ;;
      *) usage >&2; die "unknown argument: $1" ;;
    esac
  done
  if [[ -n $from ]]; then
    [[ -d $from ]] || die "--from: $from is not a directory"
    copy_from "$from" "$dest"
  elif corpus_complete "$dest"; then
    echo "corpus already in $dest: not downloading it again"
  else
    download "$dest" "$make_splits"
  fi
  echo "corpus ready in $dest:"
  check_pairs "$dest"
}

main "$@"
