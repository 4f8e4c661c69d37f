#!/usr/bin/env python3
"""tools/get-data.sh's download path, offline: a synthetic raw corpus served on 127.0.0.1.

Usage: test_get_data.py PATH/TO/get-data.sh   (ctest runs it; exit 0 = pass)

The synthetic corpus has what the split procedure must handle: CRLF line ends, English
sentences with several translations, exact duplicate pairs, an attribution column, malformed
lines, and a U+2028 inside a sentence (a line break only for str.splitlines()).  The splits
of it must match the digest below, which is that of the corpus' own split script on the same
raw file: this pins the procedure, including the held-out draws that are made and not written.
"""

import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import zipfile

RAW_NAMES = ["formatted.zip"] + ["IWSLT17.TED.%s.en-it.%s.xml" % (s, l)
                                 for s in ("dev2010", "tst2010") for l in ("en", "it")]
CORPUS = ["tatoeba_en_it/%s.%s" % (s, l) for s in ("train", "dev", "test") for l in ("en", "it")]
CORPUS += ["iwslt17_en_it/%s.%s" % (s, l) for s in ("dev", "test") for l in ("en", "it")]
N_DISTINCT_ENGLISH = 7500  # the evaluation splits take 3 x 2000 of them (held-out, dev, test)
IWSLT_SEGMENTS = {"dev2010": 5, "tst2010": 3}
# sha256 over the 10 files' sha256 sums, in CORPUS order, as laid out by the corpus' own
# make_splits.py (tatoeba with --heldout-out elsewhere, iwslt17) from this synthetic raw data.
EXPECTED_DIGEST = "1f3e35ca43c64d05c0702d90f3b38cfd020768dd9100f0ffbccafdae851827c2"
SENTENCE_WITH_U2028 = "Tom saw\u2028seventeen\u00a0birds."

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL: " + what)


def synthetic_pairs():
    """The raw lines of formatted.txt, and the set of unique (en, it) pairs they hold."""
    lines, pairs = [], set()
    for i in range(N_DISTINCT_ENGLISH):
        en = "Tom saw %d birds." % i
        if i == 17:
            en = SENTENCE_WITH_U2028
        for k in range(1 + (i % 7 == 0) + 2 * (i % 11 == 0)):  # 1 to 4 translations
            it = "Tom ha visto %d uccelli (%d)." % (i, k)
            pairs.add((en, it))
            lines.append("%s\t%s" % (en, it) + ("\tCC-BY 2.0 (France) #%d" % i if i % 5 == 0 else ""))
            if i % 13 == 0:
                lines.append("%s\t%s" % (en, it))  # an exact duplicate
    lines += ["a line with no tab", "\tItalian without English", "English without Italian\t"]
    return "".join(line + "\r\n" for line in lines), pairs


def iwslt_xml(split, lang):
    segs = "".join('<seg id="%d">  %s %s segment %d &amp; more  </seg>\n' % (k, split, lang, k)
                   for k in range(1, IWSLT_SEGMENTS[split] + 1))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<mteval>\n<srcset setid="x" srclang="%s">\n'
            '<doc docid="1" genre="lectures">\n <url>u</url>\n <talkid>1</talkid>\n%s</doc>\n'
            '</srcset>\n</mteval>\n' % (lang, segs))


def make_mirror(folder):
    text, pairs = synthetic_pairs()
    with zipfile.ZipFile(os.path.join(folder, "formatted.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("formatted.txt", text.encode("utf-8"))
    for name in RAW_NAMES[1:]:
        split, lang = name.split(".")[2], name.split(".")[4]
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(iwslt_xml(split, lang))
    sums = os.path.join(folder, "..", "mirror.sha256")
    with open(sums, "w") as f:
        for name in RAW_NAMES:
            with open(os.path.join(folder, name), "rb") as raw:
                f.write("%s  %s\n" % (hashlib.sha256(raw.read()).hexdigest(), name))
    return pairs, os.path.abspath(sums)


def start_server(folder):
    """python3 -m http.server on 127.0.0.1, on a port the kernel picks; returns (proc, url)."""
    server = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind",
                               "127.0.0.1", "--directory", folder],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    banner = server.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N (http://...) ..."
    words = banner.split()
    if "port" not in words:
        server.kill()
        sys.exit("http.server did not start: %r" % banner)
    return server, "http://127.0.0.1:%s" % words[words.index("port") + 1]


def get_data(script, dest, *args, env_extra=None):
    env = dict(os.environ)
    env.pop("ATTN_DATA_MIRROR", None)
    env.update(env_extra or {})
    return subprocess.run(["bash", script, "--dest", dest] + list(args), env=env,
                          capture_output=True, text=True, timeout=60)


def read_lines(path):
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    check(text.endswith("\n"), path + " ends with a newline")
    return text.split("\n")[:-1]


def all_files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, files in os.walk(root) for f in files)


def check_laid_out(dest, pairs):
    files = all_files(dest)
    check(files == sorted(CORPUS + ["raw/" + n for n in RAW_NAMES]),
          "DEST holds the 10 corpus files and the 5 raw files, nothing else: %r" % files)
    split = {}
    for name in ("train", "dev", "test"):
        en = read_lines(os.path.join(dest, "tatoeba_en_it", name + ".en"))
        it = read_lines(os.path.join(dest, "tatoeba_en_it", name + ".it"))
        check(len(en) == len(it), name + ": as many English as Italian lines")
        split[name] = list(zip(en, it))
        check(set(split[name]) <= pairs, name + ": every line pair is a pair of the raw file")
    english = {name: {en for en, _ in split[name]} for name in split}
    for name in ("dev", "test"):
        check(len(split[name]) == 2000 and len(english[name]) == 2000,
              name + ": 2000 pairs of 2000 distinct English sentences")
        check(not english[name] & english["train"], name + ": no English sentence also in train")
    check(not english["dev"] & english["test"], "dev and test share no English sentence")
    # Train holds every translation of its English sentences, once each ...
    train_pairs = {p for p in pairs if p[0] in english["train"]}
    check(sorted(split["train"]) == sorted(train_pairs),
          "train holds each translation of its English sentences exactly once")
    # ... and the 2000 held-out English sentences are in no written file.
    all_english = {en for en, _ in pairs}
    check(len(all_english - english["train"] - english["dev"] - english["test"]) == 2000,
          "2000 English sentences (the held-out split) are in no file")
    check(SENTENCE_WITH_U2028 in english["train"] | english["dev"] | english["test"],
          "a sentence with U+2028 inside is kept whole")
    for split_name, name in (("dev2010", "dev"), ("tst2010", "test")):
        en = read_lines(os.path.join(dest, "iwslt17_en_it", name + ".en"))
        it = read_lines(os.path.join(dest, "iwslt17_en_it", name + ".it"))
        n = IWSLT_SEGMENTS[split_name]
        check(en == ["%s en segment %d & more" % (split_name, k) for k in range(1, n + 1)] and
              it == ["%s it segment %d & more" % (split_name, k) for k in range(1, n + 1)],
              "iwslt17 %s: the segments' text, stripped and unescaped, in order" % name)
    digest = hashlib.sha256()
    for rel in CORPUS:
        with open(os.path.join(dest, rel), "rb") as f:
            digest.update(hashlib.sha256(f.read()).hexdigest().encode())
    check(digest.hexdigest() == EXPECTED_DIGEST,
          "the splits are those of the corpus' own script (digest %s)" % digest.hexdigest())


def main():
    script = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        mirror = os.path.join(tmp, "mirror")
        os.mkdir(mirror)
        pairs, sums = make_mirror(mirror)
        server, url = start_server(mirror)
        # A SIGTERM (ctest's timeout) still runs the finally below, which stops the server.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        try:
            run_tests(script, tmp, url, pairs, sums)
        finally:
            server.kill()
            server.wait()
    print("%d failed" % len(failures) if failures else "test_get_data: all checks passed")
    return 1 if failures else 0


def run_tests(script, tmp, url, pairs, sums):
    # TMPDIR is watched too: no held-out file may be written anywhere.
    scratch = os.path.join(tmp, "tmpdir")
    os.mkdir(scratch)
    os.environ["TMPDIR"] = scratch

    dest = os.path.join(tmp, "data")
    run = get_data(script, dest, "--mirror", url, "--sha256sums", sums)
    check(run.returncode == 0, "get-data.sh --mirror succeeds: " + run.stderr)
    if run.returncode != 0:
        return
    check_laid_out(dest, pairs)

    # The raw files kept in DEST/raw are used again without a download (this mirror is dead).
    os.remove(os.path.join(dest, "tatoeba_en_it", "train.en"))
    run = get_data(script, dest, "--mirror", "file://" + os.path.join(tmp, "nowhere"),
                   "--sha256sums", sums)
    check(run.returncode == 0 and "downloading" not in run.stdout,
          "a rerun rebuilds from DEST/raw without downloading: " + run.stdout + run.stderr)
    if run.returncode == 0:
        check_laid_out(dest, pairs)

    # A checksum mismatch fails and leaves no corpus file, in a new DEST or in an existing one.
    bad_sums = os.path.join(tmp, "bad.sha256")
    with open(sums) as f, open(bad_sums, "w") as out:
        lines = f.read().splitlines()
        lines[-1] = "0" * 64 + lines[-1][64:]  # the last raw file: the others are fetched first
        out.write("\n".join(lines) + "\n")
    for dest, existing in ((os.path.join(tmp, "new"), False), (os.path.join(tmp, "old"), True)):
        if existing:
            os.mkdir(dest)
            open(os.path.join(dest, "README.md"), "w").close()
        run = get_data(script, dest, "--sha256sums", bad_sums, env_extra={"ATTN_DATA_MIRROR": url})
        check(run.returncode != 0 and "checksum mismatch" in run.stderr,
              "a checksum mismatch is an error: %d %s" % (run.returncode, run.stderr))
        left = all_files(dest) if os.path.isdir(dest) else []
        check(left == (["README.md"] if existing else []) and
              (existing or not os.path.exists(dest)),
              "a failed download leaves DEST as it was: %r" % left)
    # The pinned sums stay the default: the mirror's bytes do not match them.
    run = get_data(script, os.path.join(tmp, "pinned"), "--mirror", url)
    check(run.returncode != 0 and "checksum mismatch" in run.stderr and
          "pinned" in run.stderr, "without --sha256sums the pinned sums are checked: " + run.stderr)
    check(all_files(tmp + "/tmpdir") == [], "nothing is left in TMPDIR")
    held_out = [f for f in all_files(tmp) if "heldout" in f.lower() or "held-out" in f.lower()]
    check(held_out == [], "no held-out file is written anywhere: %r" % held_out)


if __name__ == "__main__":
    sys.exit(main())
