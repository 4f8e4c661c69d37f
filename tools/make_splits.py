#!/usr/bin/env python3
"""Rebuild attn's English->Italian splits from the raw files (tools/get-data.sh runs this).

Standard library only.  The output is byte for byte the corpus as distributed (see
data/README.md for where the raw files come from); UTF-8, LF line ends, one sentence a line.

  make_splits.py tatoeba --raw formatted.zip --out DIR   -> DIR/{train,dev,test}.{en,it}
  make_splits.py iwslt17 --raw-dir RAW --out DIR         -> DIR/{dev,test}.{en,it}

tatoeba (deterministic for a given raw file and seed):
 1. Read the one .txt in the zip.  Split each line on TAB: English, Italian, and any further
    (attribution) column dropped; drop a trailing CR.  Skip lines with fewer than two columns
    or an empty side.  The text is otherwise left as it is.
 2. Remove exact duplicate (English, Italian) pairs, keeping the first.
 3. Group the pairs by English sentence; shuffle the distinct English sentences (in file order)
    with random.Random(seed).
 4. The first N_HELDOUT English sentences are the held-out split, the next N_DEV dev, the next
    N_TEST test.  Each gives one pair, its Italian picked with the same generator; its other
    translations are dropped, so that no evaluation sentence reaches train.
 5. Every other pair goes to train, shuffled with the same generator.

The held-out split is a second test set that the corpus keeps to itself.  This script never
writes it, but it still takes the held-out sentences out first and draws their Italian picks:
those draws advance the generator, and skipping them would change dev, test and train.

iwslt17: the text of every <seg> of the official dev2010 / tst2010 XML files, in document
order, without the spaces around it (entities such as &amp; decoded).  English and Italian
must have the same document and segment ids in the same order.
"""

import argparse
import os
import random
import sys
import xml.etree.ElementTree as ET
import zipfile


def write_pairs(out_dir, name, pairs):
    os.makedirs(out_dir, exist_ok=True)
    for side, lang in enumerate(("en", "it")):
        with open(os.path.join(out_dir, name + "." + lang), "w", encoding="utf-8",
                  newline="\n") as f:
            for pair in pairs:
                if "\r" in pair[side] or "\n" in pair[side]:
                    sys.exit("make_splits.py: line break inside a sentence: %r" % pair[side])
                f.write(pair[side] + "\n")


def read_zip_text(path):
    with zipfile.ZipFile(path) as z:
        names = [n for n in z.namelist()
                 if n.lower().endswith(".txt") and not os.path.basename(n).startswith("_")]
        if len(names) != 1:
            sys.exit("make_splits.py: %s: expected one .txt inside, found %r" % (path, names))
        return z.read(names[0]).decode("utf-8")


def read_tatoeba_pairs(path):
    pairs = []
    for line in read_zip_text(path).split("\n"):  # not splitlines(): it also splits at U+2028
        cols = line[:-1].split("\t") if line.endswith("\r") else line.split("\t")
        if len(cols) >= 2 and cols[0] and cols[1]:
            pairs.append((cols[0], cols[1]))
    return pairs


def cmd_tatoeba(args):
    groups = {}  # English -> its distinct Italian translations; both in file order
    for en, it in read_tatoeba_pairs(args.raw):
        translations = groups.setdefault(en, [])
        if it not in translations:
            translations.append(it)
    english = list(groups)
    rng = random.Random(args.seed)
    rng.shuffle(english)

    n_eval = args.n_heldout + args.n_dev + args.n_test
    if n_eval >= len(english):
        sys.exit("make_splits.py: %s has %d distinct English sentences; the evaluation splits "
                 "need more than %d" % (args.raw, len(english), n_eval))

    def pick(sentences):
        return [(en, groups[en][rng.randrange(len(groups[en]))]) for en in sentences]

    dev_start, test_start = args.n_heldout, args.n_heldout + args.n_dev
    pick(english[:dev_start])  # the held-out split: drawn (see the docstring), never written
    dev = pick(english[dev_start:test_start])
    test = pick(english[test_start:n_eval])
    train = [(en, it) for en in english[n_eval:] for it in groups[en]]
    rng.shuffle(train)

    write_pairs(args.out, "dev", dev)
    write_pairs(args.out, "test", test)
    write_pairs(args.out, "train", train)
    print("tatoeba: %d distinct English sentences -> train %d, dev %d, test %d pairs"
          " (%d held out, not written)" % (len(english), len(train), len(dev), len(test),
                                           args.n_heldout))


def read_iwslt_xml(path):
    """[(docid, segid, text)] for every <seg>, in document order."""
    root = ET.parse(path).getroot()
    return [(doc.get("docid"), seg.get("id"), "".join(seg.itertext()).strip())
            for doc in root.iter("doc") for seg in doc.iter("seg")]


def cmd_iwslt17(args):
    path = os.path.join(args.raw_dir, "IWSLT17.TED.%s.en-it.%s.xml")
    for raw_name, name in (("dev2010", "dev"), ("tst2010", "test")):
        en = read_iwslt_xml(path % (raw_name, "en"))
        it = read_iwslt_xml(path % (raw_name, "it"))
        if [s[:2] for s in en] != [s[:2] for s in it]:
            sys.exit("make_splits.py: %s: the English and Italian segment ids differ"
                     % (path % (raw_name, "*")))
        write_pairs(args.out, name, [(e[2], i[2]) for e, i in zip(en, it)])
        print("iwslt17: %s -> %s, %d pairs" % (raw_name, name, len(en)))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tatoeba", help="formatted.zip -> train/dev/test")
    t.add_argument("--raw", required=True, help="formatted.zip (a zip holding one .txt)")
    t.add_argument("--out", required=True, help="folder for {train,dev,test}.{en,it}")
    t.add_argument("--seed", type=int, default=1234)
    t.add_argument("--n-heldout", type=int, default=2000)
    t.add_argument("--n-dev", type=int, default=2000)
    t.add_argument("--n-test", type=int, default=2000)
    t.set_defaults(run=cmd_tatoeba)
    w = sub.add_parser("iwslt17", help="the IWSLT17 dev2010/tst2010 XML -> dev/test")
    w.add_argument("--raw-dir", required=True,
                   help="folder holding IWSLT17.TED.{dev2010,tst2010}.en-it.{en,it}.xml")
    w.add_argument("--out", required=True, help="folder for {dev,test}.{en,it}")
    w.set_defaults(run=cmd_iwslt17)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
