#!/usr/bin/env python3
"""tools/check-layering.py: passes on lib/, and fails, naming file and line, on a tree that
includes upward, sideways within a level, or holds a folder it does not know.

    test_check_layering.py CHECK_SCRIPT LIB_DIR
"""
import pathlib
import subprocess
import sys
import tempfile


def run(script, lib):
    result = subprocess.run([sys.executable, script, str(lib)], capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def tree(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def main():
    script, lib = sys.argv[1], sys.argv[2]
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    code, output = run(script, lib)
    expect(code == 0, f"lib/ should pass, got {code}: {output}")

    cases = {
        "upward": ({"ops/gemm.h": "#pragma once\n#include \"models/model.h\"\n", "models/model.h": ""},
                   ["ops/gemm.h:2", "ops/ includes models/", "higher level"]),
        "sideways": ({"data/batch.cpp": "#include <vector>\n#include \"eval/bleu.h\"\n", "eval/bleu.h": ""},
                     ["data/batch.cpp:2", "data/ includes eval/", "its own level"]),
        "unknown folder": ({"extras/thing.cpp": "#include \"core/check.h\"\n"},
                           ["extras/ is not in"]),
    }
    with tempfile.TemporaryDirectory() as temp:
        for name, (files, expected) in cases.items():
            root = tree(pathlib.Path(temp) / name.replace(" ", "_"), files)
            code, output = run(script, root)
            expect(code == 1, f"{name}: exit status {code}, expected 1: {output}")
            for text in expected:
                expect(text in output, f"{name}: '{text}' missing from: {output}")
        allowed = tree(pathlib.Path(temp) / "allowed", {
            "models/model.cpp": "#include \"models/model.h\"\n#include \"layers/linear.h\"\n#include <vector>\n",
            "layers/linear.h": "#include \"ops/gemm.h\"\n#include \"core/tensor.h\"\n"})
        code, output = run(script, allowed)
        expect(code == 0, f"downward includes should pass: {output}")

    for failure in failures:
        print("FAIL:", failure)
    print(f"{'FAILED' if failures else 'passed'}: check-layering")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
