#!/usr/bin/env python3
"""tools/make-large-corpus.py on a tiny synthetic corpus: the two sides stay aligned pair by
pair, line counts and English word counts are as asked, the output depends on the seed only
(not on --jobs), and existing files are refused without --force.

    test_make_large_corpus.py SCRIPT
"""
import pathlib
import statistics
import subprocess
import sys
import tempfile


def run(script, *args):
    result = subprocess.run([sys.executable, script, "--quiet", *args], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def write_source(root):
    """Pair i: English "e<i>w0 .. e<i>w<k-1>", Italian "i<i>w0 .. i<i>w<k>" (one word more)."""
    en, it = [], []
    for i in range(60):
        k = 1 + i % 9
        en.append(" ".join(f"e{i}w{j}" for j in range(k)))
        it.append(" ".join(f"i{i}w{j}" for j in range(k + 1)))
    (root / "src.en").write_text("\n".join(en) + "\n")
    (root / "src.it").write_text("\n".join(it) + "\n")
    return en, it


def pairs_of(line):
    """The source pairs an English line joins, in order (each starts with its word 0)."""
    return [int(word[1:].split("w")[0]) for word in line.split() if word.endswith("w0")]


def main():
    script = sys.argv[1]
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        en, it = write_source(root)
        source = ["--src", str(root / "src.en"), "--tgt", str(root / "src.it")]

        def generate(out, *args):
            return run(script, *source, "--out", str(root / out), "--block-pairs", "700", *args)

        def read(out):
            return [(root / out / name).read_bytes() for name in ("train.en", "train.it")]

        code, output = generate("a", "--pairs", "3000", "--seed", "5", "--min-words", "5", "--max-words", "20",
                                "--jobs", "1")
        expect(code == 0, f"a tiny corpus should be written, got {code}: {output}")
        out_en, out_it = [data.decode().split("\n")[:-1] for data in read("a")]
        expect(len(out_en) == 3000 and len(out_it) == 3000, f"3000 lines a side, got {len(out_en)}, {len(out_it)}")
        for number, (line_en, line_it) in enumerate(zip(out_en, out_it), 1):
            chosen = pairs_of(line_en)
            if line_en != " ".join(en[i] for i in chosen) or line_it != " ".join(it[i] for i in chosen):
                failures.append(f"line {number} is not the same source pairs on both sides: {line_en!r} / {line_it!r}")
                break
        words = [len(line.split()) for line in out_en]
        expect(min(words) >= 5 and max(words) <= 20, f"English words outside [5, 20]: {min(words)}..{max(words)}")
        expect(any(len(pairs_of(line)) > 1 for line in out_en), "no line joins several pairs")

        code, output = generate("b", "--pairs", "3000", "--seed", "5", "--min-words", "5", "--max-words", "20",
                                "--jobs", "2")
        expect(code == 0 and read("b") == read("a"), f"the same seed with --jobs 2 should give the same bytes: {output}")
        code, output = generate("c", "--pairs", "3000", "--seed", "6", "--min-words", "5", "--max-words", "20")
        expect(code == 0 and read("c")[0] != read("a")[0], f"another seed should give another corpus: {output}")

        # The default lengths: 3..80 words, mostly 10..35.
        code, output = generate("d", "--pairs", "3000")
        words = [len(line.split()) for line in read("d")[0].decode().split("\n")[:-1]]
        expect(code == 0 and min(words) >= 3 and max(words) <= 80, f"default bounds: {output} {min(words)}..{max(words)}")
        expect(10 <= statistics.median(words) <= 35, f"median {statistics.median(words)} outside 10..35")
        expect(sum(10 <= w <= 35 for w in words) > 0.7 * len(words), "fewer than 70% of lines have 10..35 words")

        before = read("a")
        code, output = generate("a", "--pairs", "10", "--seed", "5")
        expect(code != 0 and "train.en' exists" in output and "--force" in output,
               f"an existing corpus should be refused naming it, got {code}: {output}")
        expect(read("a") == before, "a refused run changed the existing files")
        code, output = generate("a", "--pairs", "10", "--force")
        expect(code == 0 and len(read("a")[0].split(b"\n")) == 11, f"--force should overwrite: {output}")
        expect(not list((root / "a").glob("*.tmp")), "temporary files left behind")

        (root / "short.it").write_text("uno\n")
        code, output = run(script, "--src", str(root / "src.en"), "--tgt", str(root / "short.it"), "--out",
                           str(root / "e"), "--pairs", "10")
        expect(code != 0 and "short.it" in output and "aligned" in output, f"misaligned input: {code}: {output}")

    for failure in failures:
        print(f"FAIL: {failure}")
    print(f"{'FAILED' if failures else 'ok'}: make-large-corpus.py")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
