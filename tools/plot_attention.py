#!/usr/bin/env python3
"""Renders one attention map of an attn-dump-attention CSV as a labelled heatmap.

    python3 tools/plot_attention.py att.csv --sentence 0 --kind cross --layer 2 --head 0 -o map.png
    python3 tools/plot_attention.py att.csv --sentence 0 --kind cross --layer 2 --grid -o heads.png

Keys (source tokens for cross attention) run along x, queries (target tokens) down y. --layer
defaults to the last layer of the kind, --head to the first head in the file ("mean" after
--average-heads); --grid draws every head of the layer side by side on one colour scale.

Links over the map (cross attention): --gold FILE draws a white square on every cell of a gold
link, --predicted FILE a red dot on every cell of a predicted one. Both files hold one line per
sentence of Pharaoh "i-j" links (source i, target j; "i?j"/"ipj" possible links are drawn
dashed), or XL-WA lines whose last tab field holds them. --links-in words (default) reads the
indices as whitespace-separated words, each drawn on all its pieces (a piece beginning with
"\u2581" starts a word); --links-in pieces as the map's positions.
    python3 tools/plot_attention.py att.csv --sentence 3 --gold dev.tsv --predicted links.txt -o s3.png
Needs Python 3 with matplotlib and NumPy (tools/install-plot-deps.sh installs them).
"""
import argparse
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

AXIS_NAMES = {
    "cross": ("source", "target (output)"),
    "enc_self": ("source", "source"),
    "dec_self": ("target (decoder input)", "target (output)"),
}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", help="a CSV written by attn-dump-attention")
    parser.add_argument("--sentence", type=int, required=True, help="0-based input line")
    parser.add_argument("--kind", default="cross", choices=sorted(AXIS_NAMES), help="default: cross")
    parser.add_argument("--layer", type=int, help="default: the last layer of --kind")
    parser.add_argument("--head", help='head index or "mean" (default: the first head)')
    parser.add_argument("--grid", action="store_true", help="every head of the layer in one figure")
    parser.add_argument("--gold", help="gold links (Pharaoh or XL-WA lines), drawn as squares")
    parser.add_argument("--predicted", help="predicted links (Pharaoh lines), drawn as dots")
    parser.add_argument("--links-in", default="words", choices=["words", "pieces"],
                        help="what the links' indices count (default: words)")
    parser.add_argument("-o", "--output", required=True, help="image file (.png, .svg, .pdf)")
    return parser.parse_args(argv)


def read_rows(path, sentence, kind):
    """The rows of one sentence and kind, as dicts of strings."""
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        return [row for row in reader if row["kind"] == kind and int(row["sentence"]) == sentence]


def head_order(head):
    return (1, 0) if head == "mean" else (0, int(head))


def ordered(tokens):
    """{position: token} -> the tokens by position."""
    return [tokens.get(i, "") for i in range(max(tokens) + 1)]


def build_map(rows):
    """(weights Tq x Tk, query tokens, key tokens) of the rows of one head."""
    queries, keys = {}, {}
    for row in rows:
        queries[int(row["query_pos"])] = row["query_token"]
        keys[int(row["key_pos"])] = row["key_token"]
    weights = np.zeros((max(queries) + 1, max(keys) + 1))
    for row in rows:
        weights[int(row["query_pos"]), int(row["key_pos"])] = float(row["weight"])
    return weights, ordered(queries), ordered(keys)


def draw(axes, weights, query_tokens, key_tokens, kind, title):
    image = axes.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    axes.set_xticks(range(len(key_tokens)), key_tokens, rotation=90, fontsize=8)
    axes.set_yticks(range(len(query_tokens)), query_tokens, fontsize=8)
    key_name, query_name = AXIS_NAMES[kind]
    axes.set_xlabel(key_name)
    axes.set_ylabel(query_name)
    axes.set_title(title, fontsize=10)
    return image


WORD_START = "\u2581"


def piece_words(tokens):
    """The word of each piece (a piece beginning with U+2581 starts one), None for specials."""
    words, word = [], -1
    for token in tokens:
        if token in ("</s>", "<s>", "<pad>"):
            words.append(None)
            continue
        if word < 0 or token.startswith(WORD_START):
            word += 1
        words.append(word)
    return words


def read_links(path, sentence):
    """(sure, possible) sets of (source, target) links of line `sentence` of a Pharaoh file."""
    with open(path, encoding="utf-8") as file:
        lines = file.read().split("\n")
    if sentence >= len(lines):
        fail(f"{path} has no line {sentence + 1}")
    sure, possible = set(), set()
    for token in lines[sentence].split("\t")[-1].split():
        for mark, links in (("-", sure), ("?", possible), ("p", possible)):
            if mark in token:
                i, j = token.split(mark, 1)
                links.add((int(i), int(j)))
                break
        else:
            fail(f"{path} line {sentence + 1}: bad link {token!r}")
    return sure, possible - sure


def cells(links, query_tokens, key_tokens, level):
    """The (query, key) cells of the map that `links` cover."""
    if level == "pieces":
        return {(j, i) for i, j in links if j < len(query_tokens) and i < len(key_tokens)}
    query_words, key_words = piece_words(query_tokens), piece_words(key_tokens)
    return {(q, k) for q, qw in enumerate(query_words) for k, kw in enumerate(key_words)
            if qw is not None and kw is not None and (kw, qw) in links}


def overlay(axes, args, query_tokens, key_tokens):
    """Gold squares and predicted dots over a cross-attention map."""
    if args.gold:
        sure, possible = read_links(args.gold, args.sentence)
        for style, links in (("-", sure), ("--", possible)):
            for q, k in cells(links, query_tokens, key_tokens, args.links_in):
                axes.add_patch(plt.Rectangle((k - 0.45, q - 0.45), 0.9, 0.9, fill=False, edgecolor="white",
                                             linewidth=1.5, linestyle=style))
    if args.predicted:
        sure, possible = read_links(args.predicted, args.sentence)
        found = cells(sure | possible, query_tokens, key_tokens, args.links_in)
        if found:
            axes.scatter([k for _, k in found], [q for q, _ in found], s=18, c="red", marker="o")


def fail(message):
    print(f"plot_attention: {message}", file=sys.stderr)
    sys.exit(2)


def main(argv):
    args = parse_args(argv)
    if (args.gold or args.predicted) and args.kind != "cross":
        fail("--gold and --predicted draw links over cross attention only")
    rows = read_rows(args.csv, args.sentence, args.kind)
    if not rows:
        fail(f"{args.csv} has no {args.kind} rows for sentence {args.sentence}")
    layers = sorted({int(row["layer"]) for row in rows})
    layer = layers[-1] if args.layer is None else args.layer
    rows = [row for row in rows if int(row["layer"]) == layer]
    if not rows:
        fail(f"no {args.kind} layer {layer} for sentence {args.sentence}; layers: {layers}")
    heads = sorted({row["head"] for row in rows}, key=head_order)
    if args.grid:
        chosen = heads
    else:
        chosen = [heads[0] if args.head is None else args.head]
        if chosen[0] not in heads:
            fail(f"no head {chosen[0]} in {args.kind} layer {layer}; heads: {', '.join(heads)}")

    maps = [build_map([row for row in rows if row["head"] == head]) for head in chosen]
    columns = math.ceil(math.sqrt(len(maps)))
    grid_rows = math.ceil(len(maps) / columns)
    tq, tk = maps[0][0].shape
    cell = (max(3.0, 0.35 * tk + 1.5), max(2.5, 0.3 * tq + 1.5))
    figure, axes = plt.subplots(grid_rows, columns, figsize=(cell[0] * columns + 1, cell[1] * grid_rows),
                                squeeze=False, constrained_layout=True)
    for index, ((weights, query_tokens, key_tokens), head) in enumerate(zip(maps, chosen)):
        title = f"sentence {args.sentence}, {args.kind} layer {layer}, head {head}"
        image = draw(axes.flat[index], weights, query_tokens, key_tokens, args.kind, title)
        if args.kind == "cross":
            overlay(axes.flat[index], args, query_tokens, key_tokens)
    for unused in list(axes.flat)[len(maps):]:
        unused.axis("off")
    figure.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    figure.savefig(args.output, dpi=150)
    print(f"plot_attention: wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
