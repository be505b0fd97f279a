#!/usr/bin/env python3
"""CI runs the suite once, split in two: the README's `swift test` on the fresh machine runs every
test whose tools are installed there, and the later stage runs the rest (the tests that skipped
for want of a hidden library, tool or file) with everything installed. This script joins the
two halves through the xUnit reports swift-testing writes (`--xunit-output F` gives
`F-swift-testing.xml`, whose test cases are named by their ids, not their display names).

  remaining-tests.py filter FRESH.xml          prints a --filter pattern for the tests listed by
                                               `swift test list` that did not pass in FRESH.xml
                                               (nothing when every test passed there)
  remaining-tests.py check FRESH.xml REST.xml  fails unless every listed test passed in one of the
                                               two reports, or was skipped in REST.xml for a suite
                                               another script runs (the VM's, PipeWire's)

Run from the package root after a build (it calls `swift test list --skip-build`).
Exit: 0 as described, 1 when a test neither passed nor was allowed to skip, 2 on bad usage.
"""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

# Skips that are expected in the plain suite: those suites run in their own CI stages.
ELSEWHERE = ("runs inside the QEMU VM", "runs under pw-jack")


def listed_ids():
    out = subprocess.run(["swift", "test", "list", "--skip-build"], check=True,
                         capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if "/" in line and line.strip().endswith(")")]


def normal(test_id):
    # `swift test list` writes Module.Suite/Nested/test(); xUnit writes Module.Suite.Nested, test().
    suite, _, name = test_id.rpartition("/")
    return suite.replace("/", ".") + "." + name


def outcomes(report):
    """Maps each test case in a swift-testing xUnit report to passed, skipped or failed."""
    result = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        key = case.get("classname", "") + "." + case.get("name", "")
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            state = "failed"
        elif skipped is not None:
            state = "skipped: " + (skipped.text or "")
        else:
            state = "passed"
        # A parameterized test appears once per argument; any failure or skip wins over a pass.
        if result.get(key, "passed") == "passed":
            result[key] = state
    return result


def main(argv):
    if len(argv) == 3 and argv[1] == "filter":
        fresh = outcomes(argv[2])
        rest = [t for t in listed_ids() if fresh.get(normal(t)) != "passed"]
        # Anchored at the start only: swift-testing matches against more than the bare id, so a
        # `$` never matches; an id ends in its closing parenthesis, so none is another's prefix.
        if rest:
            print("|".join("^" + re.escape(t) for t in rest))
        return 0
    if len(argv) == 4 and argv[1] == "check":
        fresh, later = outcomes(argv[2]), outcomes(argv[3])
        missing = []
        for test_id in listed_ids():
            key = normal(test_id)
            if fresh.get(key) == "passed" or later.get(key) == "passed":
                continue
            state = later.get(key, "not run")
            if state.startswith("skipped: ") and any(s in state for s in ELSEWHERE):
                continue
            missing.append(f"{test_id}: {state}")
        if missing:
            print("remaining-tests.py: tests that passed in neither half of the suite:")
            for line in missing:
                print("  " + line)
            return 1
        print(f"remaining-tests.py: every one of the listed tests passed on the fresh machine or after it "
              f"(or runs in the VM or under PipeWire)")
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
