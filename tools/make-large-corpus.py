#!/usr/bin/env python3
"""Generate a large synthetic parallel corpus from the Tatoeba pairs (the large-corpus check).

Standard library only.  The output is for a temporary directory: never commit it.

  make-large-corpus.py --out DIR [--pairs 20000000] [--seed 1]   -> DIR/train.{en,it}

Each output pair joins k Tatoeba pairs drawn at random (with replacement): the same k pairs in
the same order on both sides, joined with a space, so every line still translates its partner.
The English side's word count (words split on whitespace) is steered to a length drawn from a
log-normal distribution, median 17 words (mu = ln 17, sigma = 0.5), redrawn until it falls in
[--min-words, --max-words].  Pairs are added until the count reaches that length; a drawn
pair that would pass --max-words ends the line if it has --min-words already, else is skipped.  With the defaults (3..80) and Tatoeba (mostly 4..10 words
a sentence) 20M pairs come out as:

    English words a line   3-9: 5.0%   10-19: 43.9%   20-35: 41.4%   36-50: 7.8%   51-80: 1.9%
    (mean 21.9, median 20; about 113 bytes an English line, 124 an Italian one: 4.7 GB in all)

which is the shape of a real corpus's sentence lengths (Europarl, news): mostly 10-35 words,
a thin tail to 80.  Every English line is inside [--min-words, --max-words]; the Italian side
is whatever the same pairs give.

The output is deterministic for a seed, whatever --jobs: pairs are made in blocks of
BLOCK_PAIRS, block b from its own generator seeded with (seed, b); --jobs processes make
blocks side by side and the main process writes them in order.  Files are written as
DIR/train.{en,it}.tmp and renamed when complete; existing DIR/train.{en,it} are refused
unless --force.
"""
import argparse
import math
import multiprocessing
import os
import random
import sys
import time

BLOCK_PAIRS = 100_000
MEDIAN_WORDS = 17
SIGMA = 0.5
MAX_TRIES = 1000  # skipped draws before a pair is restarted (inputs whose lengths cannot fit)

# Set in each worker (and in the main process) by init_worker: the sentences and the options.
STATE = {}


def fail(message):
    print(f"make-large-corpus: {message}", file=sys.stderr)
    sys.exit(1)


def read_lines(path):
    try:
        with open(path, encoding="utf-8", newline="\n") as file:
            return [line.rstrip("\n").rstrip("\r") for line in file]
    except OSError as error:
        fail(f"cannot read '{path}': {error.strerror}")
    except UnicodeDecodeError as error:
        fail(f"'{path}' is not UTF-8: {error}")


def read_pairs(src_path, tgt_path, max_words):
    """The usable pairs: both sides non-blank, the English side 1..max_words words."""
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        fail(f"'{src_path}' has {len(src)} lines but '{tgt_path}' has {len(tgt)}: they must be aligned")
    pairs = [(s, t, len(s.split())) for s, t in zip(src, tgt) if s.strip() and t.strip()]
    pairs = [p for p in pairs if p[2] <= max_words]
    if not pairs:
        fail(f"'{src_path}' and '{tgt_path}' hold no pair with 1..{max_words} English words")
    return pairs


def init_worker(pairs, min_words, max_words):
    STATE.update(src=[p[0] for p in pairs], tgt=[p[1] for p in pairs], words=[p[2] for p in pairs],
                 min_words=min_words, max_words=max_words)


def target_length(rng, min_words, max_words):
    while True:
        length = round(rng.lognormvariate(math.log(MEDIAN_WORDS), SIGMA))
        if min_words <= length <= max_words:
            return length


def one_pair(rng):
    """Indices of the Tatoeba pairs joined into one output pair."""
    words, min_words, max_words = STATE["words"], STATE["min_words"], STATE["max_words"]
    count = len(words)
    target = target_length(rng, min_words, max_words)
    for _ in range(MAX_TRIES):
        chosen, total, tries = [], 0, 0
        while total < target and tries < MAX_TRIES:
            i = int(rng.random() * count)
            if total + words[i] > max_words:
                tries += 1
                if total >= min_words:
                    break
                continue
            chosen.append(i)
            total += words[i]
        if min_words <= total <= max_words:
            return chosen
    raise RuntimeError(f"no pairs of these sentences make {min_words}..{max_words} English words")


def make_block(task):
    """Block `block` of `pairs` output pairs, as the bytes of both files."""
    seed, block, pairs = task
    rng = random.Random(f"{seed}:{block}")
    src, tgt = STATE["src"], STATE["tgt"]
    src_lines, tgt_lines = [], []
    for _ in range(pairs):
        chosen = one_pair(rng)
        src_lines.append(" ".join([src[i] for i in chosen]))
        tgt_lines.append(" ".join([tgt[i] for i in chosen]))
    return ("\n".join(src_lines) + "\n").encode(), ("\n".join(tgt_lines) + "\n").encode()


def blocks(args):
    for block, start in enumerate(range(0, args.pairs, args.block_pairs)):
        yield args.seed, block, min(args.block_pairs, args.pairs - start)


def write_corpus(args, pairs, paths):
    tmp = [path + ".tmp" for path in paths]
    started, written, sizes = time.monotonic(), 0, [0, 0]
    with open(tmp[0], "wb", buffering=1 << 22) as src_file, open(tmp[1], "wb", buffering=1 << 22) as tgt_file:
        if args.jobs > 1:
            pool = multiprocessing.Pool(args.jobs, init_worker, (pairs, args.min_words, args.max_words))
            results = pool.imap(make_block, blocks(args))
        else:
            init_worker(pairs, args.min_words, args.max_words)
            pool, results = None, map(make_block, blocks(args))
        try:
            for src_bytes, tgt_bytes in results:
                src_file.write(src_bytes)
                tgt_file.write(tgt_bytes)
                written += src_bytes.count(b"\n")
                sizes = [sizes[0] + len(src_bytes), sizes[1] + len(tgt_bytes)]
                if not args.quiet:
                    elapsed = time.monotonic() - started
                    print(f"{written:,} / {args.pairs:,} pairs, {sum(sizes) / 1e9:.2f} GB, {elapsed:.0f} s",
                          file=sys.stderr, flush=True)
        finally:
            if pool:
                pool.terminate()
    for source, destination in zip(tmp, paths):
        os.replace(source, destination)
    return written, sizes, time.monotonic() - started


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", default="data/tatoeba_en_it/train.en", help="English side (default: %(default)s)")
    parser.add_argument("--tgt", default="data/tatoeba_en_it/train.it", help="Italian side (default: %(default)s)")
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument("--pairs", type=int, default=20_000_000, help="pairs to write (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="(default: %(default)s)")
    parser.add_argument("--min-words", type=int, default=3, help="English words a line, at least (default: %(default)s)")
    parser.add_argument("--max-words", type=int, default=80, help="English words a line, at most (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="processes making pairs (default: %(default)s); the output does not depend on it")
    # Smaller blocks let the test see several of them in a tiny corpus.
    parser.add_argument("--block-pairs", type=int, default=BLOCK_PAIRS, help=argparse.SUPPRESS)
    parser.add_argument("--force", action="store_true", help="overwrite DIR/train.{en,it}")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    if not 1 <= args.min_words <= args.max_words:
        parser.error("--min-words and --max-words must satisfy 1 <= min <= max")
    if args.jobs < 1 or args.block_pairs < 1:
        parser.error("--jobs and --block-pairs must be at least 1")
    return args


def main():
    args = parse_args()
    paths = [os.path.join(args.out, "train.en"), os.path.join(args.out, "train.it")]
    existing = [path for path in paths if os.path.exists(path)]
    if existing and not args.force:
        fail(f"'{existing[0]}' exists: pass --force to overwrite it")
    pairs = read_pairs(args.src, args.tgt, args.max_words)
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as error:
        fail(f"cannot create --out '{args.out}': {error.strerror}")
    try:
        written, sizes, seconds = write_corpus(args, pairs, paths)
    except RuntimeError as error:  # lengths these sentences cannot make (one_pair)
        for path in paths:
            if os.path.exists(path + ".tmp"):
                os.remove(path + ".tmp")
        fail(str(error))
    print(f"wrote {written:,} pairs from {len(pairs):,} source pairs in {seconds:.0f} s: "
          f"{paths[0]} {sizes[0]:,} bytes, {paths[1]} {sizes[1]:,} bytes, {sum(sizes) / 1e9:.2f} GB in all")


if __name__ == "__main__":
    main()
