#!/usr/bin/env python3
"""Checks that no file of lib/ below io/ compares a string with a config choice's name.

    tools/check-config-strings.py [LIB_DIR]      (default: lib/ beside this script's folder)

io/ reads each choice of the config (model.type, norm, positions, activation, cell, schedule,
vocabulary type, valid metric, precision) into its enum of core/choice.h once; below io/ code
switches on the enum. A comparison `== "name"` or `"name" ==` (or !=) with one of those names
anywhere else under LIB_DIR is reported as FILE:LINE, and the exit status is 1.
"""
import pathlib
import re
import sys

# The names of the tables in core/choice.h, read from it so that a new value is checked too.
NAME = re.compile(r'std::pair\{[A-Za-z0-9_:]+, "([^"]+)"\}')


def choice_names(lib: pathlib.Path):
    return set(NAME.findall((lib / "core" / "choice.h").read_text()))


def comparisons(lib: pathlib.Path):
    names = "|".join(sorted(re.escape(name) for name in choice_names(lib)))
    compare = re.compile(r'[!=]=\s*"(%s)"|"(%s)"\s*[!=]=' % (names, names))
    for path in sorted(lib.rglob("*")):
        if path.suffix not in (".h", ".cpp") or path.relative_to(lib).parts[0] == "io":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if compare.search(line.split("//")[0]):
                yield f"{path.relative_to(lib.parent)}:{number}: compares a config choice's name: {line.strip()}"


def main():
    lib = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "lib"
    found = list(comparisons(lib))
    for message in found:
        print(message)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
