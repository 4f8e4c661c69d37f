#!/usr/bin/env python3
"""How ctest reports attn's tests (docs/ARCHITECTURE.md, Tests): a test case that cannot run
here is Skipped, with its reason, never passed; a failure beside a skip still fails; every test
carries one of the labels the documented loops select (unit, programs, tools, gradcheck, browser).

The skip is forced on a CPU that has bf16 matmuls with ONEDNN_MAX_CPU_ISA=AVX2, under which
oneDNN offers none. ctest runs that one test from a scratch directory whose CTestTestfile.cmake
points at the build's tests, so that its logs do not land in the build's Testing/ directory
while the outer ctest writes there.

    test_ctest_reporting.py CTEST TESTS_BUILD_DIR ATTN_TESTS
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

BF16_TEST = "bf16 linear equals the f32 one within bf16 rounding where the CPU has bf16 matmuls"
MARKER = "attn-test-skipped: "
PRIMARY_LABELS = {"unit", "programs", "tools", "gradcheck", "browser"}


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    return result.returncode, result.stdout + result.stderr


def check_labels(ctest, tests_dir, expect):
    code, output = run([ctest, "--test-dir", tests_dir, "--show-only=json-v1"])
    expect(code == 0, f"ctest --show-only failed ({code}): {output}")
    if code != 0:
        return
    tests = json.loads(output)["tests"]
    expect(len(tests) > 100, f"only {len(tests)} tests listed")
    for test in tests:
        labels = set()
        for prop in test.get("properties", []):
            if prop["name"] == "LABELS":
                labels = set(prop["value"])
        expect(labels & PRIMARY_LABELS, f"test '{test['name']}' has none of {sorted(PRIMARY_LABELS)}: {labels}")
        expect(not {"unit", "programs"} <= labels, f"test '{test['name']}' is both unit and programs")
        expect("NOT_BUILT" not in test["name"], f"attn_tests is not built: {test['name']}")


def check_forced_skip(ctest, tests_dir, expect):
    with tempfile.TemporaryDirectory() as scratch:
        pathlib.Path(scratch, "CTestTestfile.cmake").write_text(f'subdirs("{tests_dir}")\n')
        env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2")
        code, output = run([ctest, "--test-dir", scratch, "-R", f"^{BF16_TEST}$", "-V"], env)
    # "out of 1": the one test ran (a renamed test would leave "No tests were found").
    missing = [text for text in ["***Skipped", MARKER + "oneDNN has no bf16 matmul", "ONEDNN_MAX_CPU_ISA=AVX2",
                                 "The following tests did not run:", "(Skipped)", "out of 1"] if text not in output]
    expect(code == 0 and not missing, f"forced skip: exit status {code}, missing {missing} from:\n{output}")


def check_fixtures(attn_tests, expect):
    code, output = run([attn_tests, "skip fixture: a skip in one SECTION skips the test case - "
                                    "whose other SECTION passed"])
    expect(code == 0, f"section skip: exit status {code}: {output}")
    expect(MARKER + "the fixture's reason" in output and "its other parts passed 1 checks" in output,
           f"section skip: no skip line naming the part that ran: {output}")
    code, output = run([attn_tests, "skip fixture: a failing SECTION beside a skip fails the test case"])
    expect(code != 0, f"failure beside a skip: exit status 0: {output}")
    expect(MARKER not in output, f"failure beside a skip: reported skipped: {output}")


def main():
    ctest, tests_dir, attn_tests = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    failures = []

    def expect(condition, what):
        if not condition:
            failures.append(what)

    check_labels(ctest, tests_dir, expect)
    check_forced_skip(ctest, tests_dir, expect)
    check_fixtures(attn_tests, expect)
    for failure in failures:
        print("FAIL:", failure)
    print(f"{'FAILED' if failures else 'passed'}: ctest reporting")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
