#!/usr/bin/env python3
"""Checks that every folder of lib/ includes only folders below it (docs/ARCHITECTURE.md, "Layers").

    tools/check-layering.py [LIB_DIR]      (default: lib/ beside this script's folder)

Reads the #include "folder/file.h" lines of every .h and .cpp under LIB_DIR. A file may include
its own folder and any folder of a lower level; never one of its own level or above. A folder
missing from LEVELS is an error too: a new folder must be placed in the picture first.
Exit status 0 when the layering holds, 1 with one line per violation otherwise.
"""
import pathlib
import re
import sys

# Lowest first. Folders on one level are independent of each other.
LEVELS = [
    ["core"],
    ["io"],
    ["dnnl", "autograd", "data", "eval", "optim", "dist", "align"],
    ["ops"],
    ["layers"],
    ["models"],
    ["decode", "run"],
    ["train", "serve"],
    ["bench"],
]
LEVEL_OF = {folder: level for level, folders in enumerate(LEVELS) for folder in folders}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/[^"]+"')


def violations(lib: pathlib.Path):
    for path in sorted(lib.rglob("*")):
        if path.suffix not in (".h", ".cpp") or not path.is_file():
            continue
        folder = path.relative_to(lib).parts[0]
        if folder not in LEVEL_OF:
            yield f"{path}: folder {folder}/ is not in tools/check-layering.py's LEVELS"
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match or match.group(1) == folder:
                continue
            target = match.group(1)
            if target not in LEVEL_OF:
                continue  # not a folder of lib/ (a system or third-party header)
            if LEVEL_OF[target] >= LEVEL_OF[folder]:
                relation = "its own level" if LEVEL_OF[target] == LEVEL_OF[folder] else "a higher level"
                yield f"{path}:{number}: {folder}/ includes {target}/, which is on {relation}: {line.strip()}"


def main() -> int:
    lib = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "lib"
    if not lib.is_dir():
        print(f"check-layering: {lib} is not a directory", file=sys.stderr)
        return 2
    found = list(violations(lib))
    for violation in found:
        print(violation, file=sys.stderr)
    if found:
        print(f"check-layering: {len(found)} include(s) break the layering", file=sys.stderr)
        return 1
    print("check-layering: " + " < ".join("{" + ", ".join(f) + "}" if len(f) > 1 else f[0] for f in LEVELS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
