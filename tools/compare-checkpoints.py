#!/usr/bin/env python3
"""Compares the F32 tensors of two attn checkpoints (safetensors), name by name.

Usage: tools/compare-checkpoints.py A.safetensors B.safetensors [--extras]

Prints the largest absolute difference of each tensor that differs, then a summary line;
exits 0 when every parameter is bit-identical, 1 otherwise, 2 when the files do not match
in names or shapes. With --extras, the optimizer's tensors (optimizer.m, optimizer.v) are
compared too. Standard library only.
"""
import argparse
import json
import struct
import sys
from array import array


def read(path):
    with open(path, "rb") as f:
        (header_length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_length))
        data = f.read()
    header.pop("__metadata__", None)
    tensors = {}
    for name, entry in header.items():
        if entry["dtype"] != "F32":
            continue
        begin, end = entry["data_offsets"]
        values = array("f")
        values.frombytes(data[begin:end])
        tensors[name] = (tuple(entry["shape"]), values)
    return tensors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--extras", action="store_true", help="compare optimizer.* tensors too")
    args = parser.parse_args()
    a, b = read(args.a), read(args.b)
    names = sorted(n for n in a if args.extras or not n.startswith("optimizer."))
    if names != sorted(n for n in b if args.extras or not n.startswith("optimizer.")):
        print("the checkpoints hold different tensors", file=sys.stderr)
        return 2
    largest, differing, total = 0.0, 0, 0
    for name in names:
        (shape_a, va), (shape_b, vb) = a[name], b[name]
        if shape_a != shape_b:
            print(f"{name}: shapes {shape_a} and {shape_b} differ", file=sys.stderr)
            return 2
        total += len(va)
        worst = max((abs(x - y) for x, y in zip(va, vb) if x != y), default=0.0)
        if worst > 0:
            differing += sum(1 for x, y in zip(va, vb) if x != y)
            print(f"{name:<60} max |a-b| = {worst:.3e}")
        largest = max(largest, worst)
    print(f"{differing} of {total} values differ; largest difference {largest:.3e}")
    return 0 if differing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
