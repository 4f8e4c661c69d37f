#!/usr/bin/env python3
"""Where a training step's time goes: runs `attn-bench train` under ONEDNN_VERBOSE=1 and splits
the median step into oneDNN's primitives (matmul, reorder, layer norm, eltwise, ...) and the
rest, attn's own OpenMP loops (Adam, cross-entropy, softmax, dropout, conversions, ...).

    tools/profile-train-step.py [--top 12] -- build-native/apps/attn-bench train \\
        --config configs/bench/transformer-small.json --batch-sentences 64 --src-len 24 \\
        --tgt-len 24 --steps 10 [--set train.precision=bf16]

oneDNN's times are summed over every step the benchmark runs (its --warmup steps, default 3,
and its --steps) and divided by their number; the benchmark's own 2048^3 peak products are left
out. The top products are listed with their GFLOP/s and the layouts of their operands (a `ba`
weight is a transposed plain matrix, `BA16a64b...` a packed one). Verbose timing itself slows
the step a little: compare runs made the same way. Standard library only.
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=12, help="how many matmul shapes to list")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- attn-bench train ...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if len(command) < 2 or command[1] != "train":
        parser.error("give the attn-bench train command after --")
    steps = option_value(command, "--warmup", 3) + option_value(command, "--steps", 10)

    run = subprocess.run(command + ["--json"], env=dict(os.environ, ONEDNN_VERBOSE="1"), capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit(f"profile-train-step: {' '.join(command)} failed:\n{run.stderr.strip()}")
    by_kind = collections.Counter()
    products = collections.Counter()
    calls = collections.Counter()
    result = None
    for line in run.stdout.splitlines():
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
    if result is None:
        sys.exit("profile-train-step: the benchmark printed no JSON result")

    step_ms = 1000 * result["step_median_s"]
    onednn_ms = sum(by_kind.values()) / steps
    print(f"{result['precision']}: {result['tokens_per_s']:.0f} target tokens/s, median step {step_ms:.1f} ms, "
          f"matmul peak {result['peak_gflops']:.0f} GFLOP/s, MFU {100 * result['mfu']:.1f}%")
    for kind, ms in by_kind.most_common():
        print(f"  {kind:<22} {ms / steps:7.1f} ms/step")
    print(f"  {'attn own loops':<22} {step_ms - onednn_ms:7.1f} ms/step (median step - oneDNN)")
    print(f"top matmul products (ms/step, GFLOP/s, problem, kernel, src and weight layouts):")
    for key, ms in products.most_common(args.top):
        gflops = product_flops(key[0]) * calls[key] / (ms / 1000) / 1e9
        print(f"  {ms / steps:6.2f} {gflops:6.0f}  {key[0]:<36} {key[1]:<22} {key[2]} {key[3]}")


if __name__ == "__main__":
    main()
