#!/usr/bin/env bash
# get-data.sh: put the English->Italian corpus where attn's configs expect it.
#
# Usage: tools/get-data.sh [--from DIR] [--dest DIR] [--mirror URL] [--sha256sums FILE]
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
# (default)    if DEST already holds the whole corpus, keep it. Otherwise download the five raw
#              files (curl), check their sha256, and rebuild the splits with tools/make_splits.py
#              (Python 3, standard library; its docstring has the procedure). The raw files are
#              kept in DEST/raw and not downloaded again.
# --mirror URL download the raw files from URL/NAME instead of their sources (or set
#              ATTN_DATA_MIRROR=URL; the flag wins). A mirror is one folder that holds the five
#              files side by side under their own names, as DEST/raw does:
#                formatted.zip  IWSLT17.TED.{dev2010,tst2010}.en-it.{en,it}.xml
#              served over HTTP, or read directly with URL file:///path/to/folder.
# --sha256sums FILE  expect these sha256 sums instead of the pinned ones, for a mirror that
#              serves other bytes. FILE is in sha256sum's format ("SUM  NAME" lines) and must
#              name all five files.
# A failed download or a checksum mismatch stops the script with an error and leaves DEST as
# it was: everything is built in a temporary folder inside DEST and moved into place only when
# the whole corpus is there. Either way, every .en/.it pair is checked to have the same number
# of lines.
set -euo pipefail

readonly TATOEBA_FILES=(train.en train.it dev.en dev.it test.en test.it)
readonly IWSLT_FILES=(dev.en dev.it test.en test.it)

# The raw files, their sources (pinned commits) and their sha256 sums.
readonly TATOEBA_URL="https://raw.githubusercontent.com/nikodallanoce/NeuralMachineTranslation/0f8c18107f7b43b5bf4bdc6f8478b44b4fe3644a/dataset/formatted.zip"
readonly IWSLT_BASE="https://raw.githubusercontent.com/lidongxing/SLP-LMNMT/ff786b5c0782391179bce0c058a315e6c6eff09c/data/DeEnItNlRo-DeEnItNlRo"
readonly RAW_PINNED=(
  "formatted.zip cb305fdd913642a5ad62ff0e39f601ecc9b157fc3dafabf72386d204d60a40f5"
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

# The raw files' names, where each comes from and the sha256 it must have (set_sources).
RAW_NAMES=()
declare -A RAW_URL RAW_SHA256
RAW_SUMS_FROM="the sums pinned in get-data.sh"

# set_sources MIRROR SUMS_FILE: fill RAW_URL and RAW_SHA256 (either argument may be empty).
set_sources() {
  local mirror=$1 sums=$2 entry name sha line lineno=0
  for entry in "${RAW_PINNED[@]}"; do
    read -r name sha <<<"$entry"
    RAW_NAMES+=("$name")
    RAW_SHA256[$name]=$sha
    if [[ -n $mirror ]]; then
      RAW_URL[$name]="${mirror%/}/$name"
    elif [[ $name == formatted.zip ]]; then
      RAW_URL[$name]=$TATOEBA_URL
    else
      RAW_URL[$name]="$IWSLT_BASE/$name"
    fi
  done
  [[ -n $sums ]] || return 0
  [[ -f $sums ]] || die "--sha256sums: $sums is not a file"
  local -A given=()
  while IFS= read -r line || [[ -n $line ]]; do
    lineno=$((lineno + 1))
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    [[ $line =~ ^([0-9a-fA-F]{64})\ [\ *](.+)$ ]] ||
      die "$sums:$lineno: expected \"SHA256  NAME\" (sha256sum's format), got: $line"
    name=$(basename "${BASH_REMATCH[2]}")
    [[ -v "RAW_SHA256[$name]" ]] || die "$sums:$lineno: $name is not one of the raw files"
    given[$name]=${BASH_REMATCH[1],,}
  done <"$sums"
  for name in "${RAW_NAMES[@]}"; do
    [[ -v "given[$name]" ]] || die "$sums has no sha256 for $name"
    RAW_SHA256[$name]=${given[$name]}
  done
  RAW_SUMS_FROM="--sha256sums $sums"
}

# has_sha256 FILE SHA256: FILE exists and has that sum.
has_sha256() {
  [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]
}

# fetch NAME CACHE DIR: put raw file NAME into DIR, from CACHE if a good copy is there, else
# downloaded and checked.
fetch() {
  local name=$1 cache=$2 dir=$3 url=${RAW_URL[$1]} sha=${RAW_SHA256[$1]}
  if has_sha256 "$cache/$name" "$sha"; then
    cp "$cache/$name" "$dir/$name"
    return
  fi
  echo "downloading $url"
  curl --fail --location --silent --show-error --retry 3 --output "$dir/$name" "$url" ||
    die "download failed: $url (no network? then copy a prepared corpus with --from DIR," \
      "or give a mirror with --mirror URL)"
  has_sha256 "$dir/$name" "$sha" ||
    die "checksum mismatch for $url: its sha256 is $(sha256sum "$dir/$name" | cut -d' ' -f1)," \
      "expected $sha ($RAW_SUMS_FROM); nothing was written to the corpus"
}

STAGE=""
CREATED_DEST=""
clean_up() {
  [[ -z $STAGE ]] || rm -rf "$STAGE"
  [[ -z $CREATED_DEST ]] || rmdir "$CREATED_DEST" 2>/dev/null || true
}

# download DEST: fetch the raw files, split them, and move the corpus into DEST. All the work
# happens in a temporary folder inside DEST (so the final moves are renames); it is removed
# whatever happens, and so is DEST if this run created it and left it empty.
download() {
  local dest=$1 name rel here
  command -v curl >/dev/null || die "curl is needed to download the corpus"
  command -v python3 >/dev/null || die "python3 is needed to rebuild the splits"
  here="$(cd "$(dirname "$0")" && pwd)"
  [[ -d $dest ]] || CREATED_DEST=$dest
  mkdir -p "$dest"
  STAGE=$(mktemp -d "$dest/.get-data.XXXXXX")
  trap clean_up EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  mkdir "$STAGE/raw"
  for name in "${RAW_NAMES[@]}"; do fetch "$name" "$dest/raw" "$STAGE/raw"; done
  python3 "$here/make_splits.py" tatoeba --raw "$STAGE/raw/formatted.zip" --out "$STAGE/tatoeba_en_it"
  python3 "$here/make_splits.py" iwslt17 --raw-dir "$STAGE/raw" --out "$STAGE/iwslt17_en_it"
  corpus_complete "$STAGE" || die "make_splits.py did not produce the whole corpus"

  mkdir -p "$dest/raw" "$dest/tatoeba_en_it" "$dest/iwslt17_en_it"
  for name in "${RAW_NAMES[@]}"; do mv "$STAGE/raw/$name" "$dest/raw/$name"; done
  while read -r rel; do mv "$STAGE/$rel" "$dest/$rel"; done < <(corpus_files)
}

main() {
  local from="" dest="data" mirror=${ATTN_DATA_MIRROR:-} sums=""
  while [[ $# -gt 0 ]]; do
    case $1 in
      --from) [[ $# -ge 2 ]] || die "--from needs a directory"; from=$2; shift 2 ;;
      --dest) [[ $# -ge 2 ]] || die "--dest needs a directory"; dest=$2; shift 2 ;;
      --mirror) [[ $# -ge 2 && -n $2 ]] || die "--mirror needs a URL"; mirror=$2; shift 2 ;;
      --sha256sums) [[ $# -ge 2 ]] || die "--sha256sums needs a file"; sums=$2; shift 2 ;;
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
    set_sources "$mirror" "$sums"
    download "$dest"
  fi
  echo "corpus ready in $dest:"
  check_pairs "$dest"
}

main "$@"
