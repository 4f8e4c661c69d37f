#!/usr/bin/env python3
"""Judges the resident memory of a training run from its train.log.jsonl: flat, or growing.

    tools/memory-trend.py RUN_DIR_OR_LOG [--after-step 200] [--max-growth 0.10]
                          [--max-trend 0.03] [--max-peak-mb MB] [--json]

A run passes when, after its warm-up, its rss_mb
  - never exceeds the value at that step by more than --max-growth (10%),
  - does not trend up: the median of the last quarter of those records is within --max-trend
    (3%) of the median of the first quarter, so a slow creep that stays under 10% over a short
    run still fails over a long one,
  - and, with --max-peak-mb, never exceeds that figure.
The warm-up (the pool, the primitive cache and the data windows fill) lasts --after-step steps,
and, in a run that reaches a second epoch, the whole first one: the first pass reads the corpus
in windows that grow to data.buffer_pairs (with data.concat_prob, joined pairs besides), so
memory rises until the second pass for a run that does not creep (docs/experiments.md).
Prints one line of figures and the verdict; exits 1 when the run fails, 2 on bad input.
"""
import argparse
import json
import pathlib
import statistics
import sys


def train_records(path):
    log = pathlib.Path(path)
    if log.is_dir():
        log = log / "train.log.jsonl"
    if not log.is_file():
        sys.exit(f"memory-trend: error: {log} does not exist")
    records = []
    for number, line in enumerate(log.read_text().splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            sys.exit(f"memory-trend: error: {log}:{number}: not JSON ({error.msg})")
        if record.get("type") == "train" and "rss_mb" in record:
            records.append(record)
    return log, records


def warm_up_end(records, after_step):
    """--after-step, or the first step of the second epoch when the run reaches one, whichever is later."""
    second_pass = [r["step"] for r in records if r.get("epoch", 1) >= 2]
    return max(after_step, second_pass[0]) if second_pass else after_step


def judge(records, after_step, max_growth, max_trend, max_peak_mb):
    steady = [r for r in records if r["step"] >= warm_up_end(records, after_step)]
    if len(steady) < 4:
        return None
    base = steady[0]["rss_mb"]
    rss = [r["rss_mb"] for r in steady]
    quarter = max(1, len(rss) // 4)
    first, last = statistics.median(rss[:quarter]), statistics.median(rss[-quarter:])
    result = {
        "steps": [steady[0]["step"], steady[-1]["step"]],
        "rss_mb_at_start": base,
        "rss_mb_max": max(rss),
        "growth": max(rss) / base - 1,
        "trend": last / first - 1,
        "failures": [],
    }
    if result["growth"] > max_growth:
        result["failures"].append(f"grew {100 * result['growth']:.1f}% after step {steady[0]['step']} "
                                  f"(limit {100 * max_growth:.0f}%)")
    if result["trend"] > max_trend:
        result["failures"].append(f"trends up: last quarter's median {last:.0f} MB against the first's "
                                  f"{first:.0f} MB ({100 * result['trend']:+.1f}%, limit {100 * max_trend:.0f}%)")
    if max_peak_mb and result["rss_mb_max"] > max_peak_mb:
        result["failures"].append(f"peaked at {result['rss_mb_max']:.0f} MB (limit {max_peak_mb:.0f} MB)")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", help="a run directory or its train.log.jsonl")
    parser.add_argument("--after-step", type=int, default=200)
    parser.add_argument("--max-growth", type=float, default=0.10)
    parser.add_argument("--max-trend", type=float, default=0.03)
    parser.add_argument("--max-peak-mb", type=float, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    log, records = train_records(args.log)
    result = judge(records, args.after_step, args.max_growth, args.max_trend, args.max_peak_mb)
    if result is None:
        print(f"memory-trend: error: {log}: fewer than 4 progress records from step {args.after_step} on",
              file=sys.stderr)
        sys.exit(2)
    if args.json:
        print(json.dumps(result))
    else:
        verdict = "FAIL: " + "; ".join(result["failures"]) if result["failures"] else "flat"
        print(f"memory-trend: steps {result['steps'][0]}-{result['steps'][1]}: rss_mb "
              f"{result['rss_mb_at_start']:.0f} -> max {result['rss_mb_max']:.0f} "
              f"({100 * result['growth']:+.1f}%), trend {100 * result['trend']:+.1f}%: {verdict}")
    sys.exit(1 if result["failures"] else 0)


if __name__ == "__main__":
    main()
