#!/usr/bin/env python3
"""tools/memory-trend.py passes a flat run (and one whose first epoch fills the data windows) and
fails a growing, a creeping and an oversized one.

    test_memory_trend.py SCRIPT
"""
import json
import pathlib
import subprocess
import sys
import tempfile


def run(script, rss_by_step, *flags):
    with tempfile.TemporaryDirectory() as tmp:
        log = pathlib.Path(tmp) / "train.log.jsonl"
        lines = [json.dumps({"type": "train", "step": step, "rss_mb": rss, **({"epoch": rest[0]} if rest else {})})
                 for step, rss, *rest in rss_by_step]
        lines.insert(1, json.dumps({"type": "valid", "step": 100, "bleu": 1.0}))  # other records are skipped
        log.write_text("\n".join(lines) + "\n")
        return subprocess.run([sys.executable, script, tmp, *flags], capture_output=True, text=True)


def main():
    script = sys.argv[1]
    steps = range(100, 3001, 100)
    # Warm-up below step 200 does not count; the rest wobbles by 2% around 900 MB.
    flat = [(s, 600 if s < 200 else 900 + (18 if s % 200 else 0)) for s in steps]
    result = run(script, flat)
    assert result.returncode == 0 and "flat" in result.stdout, result.stdout + result.stderr

    growing = [(s, 1061 + 0.15 * s) for s in steps]  # a run that crept: 1,061 MB -> 1,495 MB
    result = run(script, growing)
    assert result.returncode == 1 and "grew" in result.stdout, result.stdout

    creeping = [(s, 900 + 0.025 * s) for s in steps]  # under 10% in all, yet always up
    result = run(script, creeping)
    assert result.returncode == 1 and "trends up" in result.stdout and "grew" not in result.stdout, result.stdout

    result = run(script, flat, "--max-peak-mb", "910")
    assert result.returncode == 1 and "peaked at 918 MB" in result.stdout, result.stdout

    # The first epoch's windows grow, and memory with them (+11%): warm-up, when flat afterwards;
    # the same rise in the second epoch is growth.
    def epochs(rss_by_step, second_from):
        return [(s, rss, 1 if s < second_from else 2) for s, rss in rss_by_step]

    filling = [(s, 700 + min(s, 1000) * 0.08) for s in steps]
    result = run(script, epochs(filling, 1100))
    assert result.returncode == 0 and "steps 1100-3000" in result.stdout, result.stdout
    result = run(script, epochs(filling, 300))
    assert result.returncode == 1 and "FAIL" in result.stdout, result.stdout

    result = run(script, flat[:3])
    assert result.returncode == 2 and "fewer than 4" in result.stderr, result.stderr
    missing = subprocess.run([sys.executable, script, "/nonexistent/run"], capture_output=True, text=True)
    assert missing.returncode != 0 and "does not exist" in missing.stderr, missing.stderr
    print("memory-trend: ok")


if __name__ == "__main__":
    main()
