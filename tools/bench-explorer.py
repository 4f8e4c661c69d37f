#!/usr/bin/python3
"""Times the attention explorer on a sentence pair of about 40 tokens a side: POST /v1/attention's
latency (all maps), and in headless Chromium the focused heatmap's and the all-heads overview's
draw times (the page's performance.now() spans, window.attnExplorer.timings).

  tools/bench-explorer.py [--model RUN] [--bin-dir build/apps] [--source TEXT --target TEXT]
                          [--repeats 10] [--json]

Without --model it trains a tiny run first (as the browser test does), which times the page's
drawing of a tiny model's maps, not a real one's. attn-serve runs with --threads 1. Needs
chromium, chromium-driver and python3-selenium (tools/install-deps.sh)."""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "browser"))
import explorer_fixture as fixture  # noqa: E402

DEFAULT_SOURCE = ("The committee said on Tuesday that the new rules for the regional railway network would "
                  "come into force next spring, after a long debate.")
DEFAULT_TARGET = ("Il comitato ha detto martedì che le nuove regole per la rete ferroviaria regionale "
                  "entreranno in vigore la prossima primavera, dopo un lungo dibattito.")


def forty_token_pair(server, source_words, target_words, tokens=40):
    """The first words of each side whose pieces (eos included) reach `tokens`, counted by the server."""
    def pieces(source, target):
        sentence = server.post("/v1/attention", {"q": source, "target": target, "kinds": ["cross"],
                                                 "layers": [0], "heads": [0]})["sentences"][0]
        return len(sentence["source_tokens"]), len(sentence["target_tokens"])

    source, target = source_words, target_words
    while len(source) < 200 and pieces(" ".join(source), " ".join(target))[0] < tokens:
        source, target = source + source_words, target + target_words
    for cut in range(1, len(source) + 1):
        if pieces(" ".join(source[:cut]), " ".join(target))[0] >= tokens:
            source = source[:cut]
            break
    for cut in range(1, len(target) + 1):
        if pieces(" ".join(source), " ".join(target[:cut]))[1] >= tokens:
            target = target[:cut]
            break
    return " ".join(source), " ".join(target), pieces(" ".join(source), " ".join(target))


def time_request(server, source, target, repeats):
    spans = []
    for _ in range(repeats):
        start = time.perf_counter()
        server.post("/v1/attention", {"q": source, "target": target})
        spans.append(1000 * (time.perf_counter() - start))
    return spans


def time_page(server, source, target, repeats):
    driver = fixture.chromium()
    try:
        driver.get(server.url + "/")
        driver.execute_script("document.getElementById('source').value = arguments[0];"
                              "document.getElementById('target').value = arguments[1];", source, target)
        driver.find_element("id", "explore").click()
        deadline = time.time() + 120
        while not driver.find_elements("css selector", "#heatmap rect.cell"):
            if time.time() > deadline:
                raise RuntimeError("the heatmap did not appear")
            time.sleep(0.1)
        heatmap, overview = [], []
        for _ in range(repeats):
            timings = driver.execute_script(
                "const e = window.attnExplorer; const s = e.state;"
                "e.focusMap(s.kind, s.layer, s.head); const heatmap = e.timings.heatmap_ms;"
                "e.showSentence(); return [heatmap, e.timings.overview_ms];")
            heatmap.append(timings[0])
            overview.append(timings[1])
        return heatmap, overview
    finally:
        driver.quit()


def summary(spans):
    return {"median_ms": round(statistics.median(spans), 2), "min_ms": round(min(spans), 2),
            "max_ms": round(max(spans), 2), "n": len(spans)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="run directory (default: a tiny run trained here)")
    parser.add_argument("--bin-dir", default=os.path.join(os.path.dirname(__file__), "..", "build", "apps"))
    parser.add_argument("--source", default=DEFAULT_SOURCE)
    parser.add_argument("--target", default=DEFAULT_TARGET)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    missing = fixture.browser_missing()
    if missing:
        sys.exit("bench-explorer: " + missing)
    with tempfile.TemporaryDirectory() as work:
        run = args.model
        source, target = args.source, args.target
        if not run:
            run = fixture.train_tiny_run(args.bin_dir, work, steps=10)
            src, tgt = fixture.synthetic_corpus(1, 3)
            source, target = src[0], tgt[0]
        server = fixture.Server(args.bin_dir, run, work, ["--max-attention-bytes", str(1 << 30)])
        try:
            source, target, tokens = forty_token_pair(server, source.split(), target.split())
            request = time_request(server, source, target, args.repeats)
            heatmap, overview = time_page(server, source, target, args.repeats)
        finally:
            server.stop()
    result = {"run": run, "source_tokens": tokens[0], "target_tokens": tokens[1],
              "attention_request": summary(request), "heatmap_draw": summary(heatmap),
              "overview_draw": summary(overview)}
    if args.json:
        print(json.dumps(result))
        return
    print("pair: %d source tokens, %d target tokens (%s)" % (tokens[0], tokens[1], run))
    for name in ("attention_request", "heatmap_draw", "overview_draw"):
        s = result[name]
        print("%-18s median %8.2f ms  (min %.2f, max %.2f, n %d)" % (name, s["median_ms"], s["min_ms"], s["max_ms"],
                                                                     s["n"]))


if __name__ == "__main__":
    main()
