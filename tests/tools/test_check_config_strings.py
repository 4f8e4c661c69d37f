#!/usr/bin/env python3
"""tools/check-config-strings.py passes on lib/ and catches a comparison with a choice's name.

    test_check_config_strings.py CHECKER LIB_DIR
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile


def run(checker, lib):
    return subprocess.run([sys.executable, checker, str(lib)], capture_output=True, text=True)


def main():
    checker, lib = sys.argv[1], pathlib.Path(sys.argv[2])
    clean = run(checker, lib)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / "lib"
        (copy / "core").mkdir(parents=True)
        (copy / "train").mkdir()
        (copy / "io").mkdir()
        shutil.copy(lib / "core" / "choice.h", copy / "core")
        (copy / "train" / "x.cpp").write_text('bool bf16(const std::string& p) { return p == "bf16"; }\n')
        (copy / "io" / "y.cpp").write_text('bool pre(const std::string& n) { return n == "pre"; }\n')
        found = run(checker, copy)
        assert found.returncode == 1, found.stdout
        assert "train/x.cpp:1" in found.stdout and "io/" not in found.stdout, found.stdout
    print("check-config-strings: ok")


if __name__ == "__main__":
    main()
