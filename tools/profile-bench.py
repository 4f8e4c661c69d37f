#!/usr/bin/env python3
"""Where a benchmark's time goes: runs `attn-bench train` or `attn-bench decode` under
ONEDNN_VERBOSE=1 and splits its time into oneDNN's primitives (matmul, reorder, layer norm,
eltwise, ...) and the rest, attn's own loops (Adam, cross-entropy, softmax, dropout,
conversions; in decoding also log-softmax, top-k, the KV-cache copies and the page faults).

    tools/profile-bench.py [--top 12] -- build-native/apps/attn-bench train \\
        --config configs/bench/transformer-small.json --batch-sentences 64 --src-len 24 \\
        --tgt-len 24 --steps 10 [--set train.precision=bf16]
    tools/profile-bench.py -- build-native/apps/attn-bench decode --model runs/en-it \\
        --input data/tatoeba_en_it/test.en --beam 5 --batch-size 32

Training: oneDNN's times are summed over every step the benchmark runs (its --warmup steps,
default 3, and its --steps) and divided by their number, against the median step. Decoding:
they are summed over the whole run (the model's load included, a few reorders), against the
run's time. The benchmark's own 2048^3 peak products are left out. The top products are listed
with their GFLOP/s and the layouts of their operands (a `ba` weight is a transposed plain
matrix, `BA16a64b...` a packed one). Verbose timing itself slows the run a little: compare runs
made the same way. Standard library only.
"""
import argparse
import collections
import json
import math
import os
import re
import subprocess
import sys


def option_value(command, flag, default):
    return int(command[command.index(flag) + 1]) if flag in command else default


def product_flops(problem):
    """2 M N K (times the batch) of a matmul problem 'AxB:BxC:AxC' (leading dims are batches)."""
    a, _, c = (list(map(int, part.split("x"))) for part in problem.split(":"))
    return 2 * math.prod(c) * a[-1]


def read_verbose(stdout):
    """The benchmark's JSON result, oneDNN's ms by primitive kind, and ms and calls by product."""
    by_kind = collections.Counter()
    products = collections.Counter()
    calls = collections.Counter()
    result = None
    for line in stdout.splitlines():
        if line.startswith("{"):
            result = json.loads(line)
        if not line.startswith("onednn_verbose,exec,"):
            continue
        fields = line.split(",")
        kind, implementation, memory, problem, ms = fields[3], fields[4], fields[6], fields[-2], float(fields[-1])
        if problem.startswith("2048x2048"):
            continue  # the benchmark's peak measurement
        by_kind[kind] += ms
        if kind == "matmul":
            layouts = tuple(re.search(rf"{name}_\w+::blocked:(\w+)", memory).group(1) for name in ("src", "wei"))
            key = (problem, implementation) + layouts
            products[key] += ms
            calls[key] += 1
    return result, by_kind, products, calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=12, help="how many matmul shapes to list")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- attn-bench train|decode ...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if len(command) < 2 or command[1] not in ("train", "decode"):
        parser.error("give the attn-bench train or decode command after --")
    decode = command[1] == "decode"

    run = subprocess.run(command + ["--json"], env=dict(os.environ, ONEDNN_VERBOSE="1"), capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit(f"profile-bench: {' '.join(command)} failed:\n{run.stderr.strip()}")
    result, by_kind, products, calls = read_verbose(run.stdout)
    if result is None:
        sys.exit("profile-bench: the benchmark printed no JSON result")

    mfu = f"matmul peak {result['peak_gflops']:.0f} GFLOP/s, MFU {100 * result['mfu']:.1f}%"
    if decode:
        unit, runs, total_ms = "ms", 1, 1000 * result["seconds"]
        print(f"{result['precision']} beam {result['beam']}: {result['sentences_per_s']:.1f} sentences/s, "
              f"{result['sentences']} sentences in {result['seconds']:.2f} s, "
              f"model {result['gflops']:.1f} GFLOP/s, {mfu}")
    else:
        unit, runs = "ms/step", option_value(command, "--warmup", 3) + option_value(command, "--steps", 10)
        total_ms = 1000 * result["step_median_s"]
        print(f"{result['precision']}: {result['tokens_per_s']:.0f} target tokens/s, median step {total_ms:.1f} ms, "
              f"{mfu}")
    share = lambda ms: f"{100 * ms / total_ms:5.1f}%"
    for kind, ms in by_kind.most_common():
        print(f"  {kind:<22} {ms / runs:9.1f} {unit} {share(ms / runs)}")
    rest = total_ms - sum(by_kind.values()) / runs
    print(f"  {'attn own loops':<22} {rest:9.1f} {unit} {share(rest)} (the {'run' if decode else 'median step'}"
          f" - oneDNN)")
    print(f"top matmul products ({unit}, calls, GFLOP/s, problem, kernel, src and weight layouts):")
    for key, ms in products.most_common(args.top):
        gflops = product_flops(key[0]) * calls[key] / (ms / 1000) / 1e9
        print(f"  {ms / runs:8.2f} {calls[key] // runs:6d} {gflops:6.0f}  {key[0]:<36} {key[1]:<22} {key[2]} {key[3]}")


if __name__ == "__main__":
    main()
