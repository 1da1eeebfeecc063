"""Reads a pytest JUnit report for .ci/run.

    skipped_tests.py --skipped-for-references REPORT   print the pytest node ids (one a line) of
        the tests skipped for want of PyTorch or JAX, and of the modules skipped whole at
        collection (a module-level importorskip)
    skipped_tests.py --check-ran [--no-reference-skips] [--no-skips-for MODULE] REPORT   exit 1
        unless some test passed (and, with --no-reference-skips, none skipped for want of
        PyTorch or JAX; with --no-skips-for, none for want of MODULE)
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

REFERENCE_LIBRARIES = re.compile(r"torch|jax|optax", re.IGNORECASE)  # the parity extra


def node_id(classname: str, name: str) -> str:
    """pytest's node id from a JUnit (classname, name): the classname is the file's dotted path,
    then any classes; a module skipped at collection has an empty classname."""
    parts = (classname or name).split(".")
    for k in range(len(parts), 0, -1):
        path = Path(*parts[:k]).with_suffix(".py")
        if path.is_file():
            rest = parts[k:] + ([name] if classname else [])
            return "::".join([path.as_posix(), *rest])
    raise SystemExit(f"no test file found for JUnit classname {classname!r}, name {name!r}")


# a module skipped at collection by pytest.importorskip: its details name the missing module
MISSING_MODULE = re.compile(r"could not import '([\w.]+)'")


def skips(report: Path):
    """(node id, skip reason) of each skipped test case in the report (the reason only: the
    details hold file paths, which may name torch). A module skipped at collection has the
    reason "collection skipped"; where pytest.importorskip skipped it, the reason is the
    missing module's name instead."""
    for case in ET.parse(report).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if skipped is not None:
            message = skipped.get("message", "")
            missing = MISSING_MODULE.search(skipped.text or "")
            if message == "collection skipped" and missing:
                message = f"could not import {missing.group(1)}"
            yield node_id(case.get("classname", ""), case.get("name", "")), message


def for_references(node: str, message: str) -> bool:
    """Whether a skip is for want of the parity extra (PyTorch, JAX, optax). A module skipped
    at collection counts, unless it names another missing module (CuPy, say)."""
    missing = re.fullmatch(r"could not import ([\w.]+)", message)
    if missing:
        return bool(REFERENCE_LIBRARIES.match(missing.group(1)))
    return "::" not in node or bool(REFERENCE_LIBRARIES.search(message))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("report", type=Path)
    parser.add_argument("--skipped-for-references", action="store_true")
    parser.add_argument("--check-ran", action="store_true")
    parser.add_argument("--no-reference-skips", action="store_true")
    parser.add_argument("--no-skips-for", metavar="MODULE",
                        help="exit 1 if a test skipped for want of MODULE")
    args = parser.parse_args()
    if args.skipped_for_references:
        for node in sorted({n for n, m in skips(args.report) if for_references(n, m)}):
            print(node)
    if args.check_ran:
        suites = list(ET.parse(args.report).getroot().iter("testsuite"))
        ran = sum(int(s.get("tests", 0)) - int(s.get("skipped", 0)) for s in suites)
        if ran <= 0:
            print(f"{args.report.name}: no test ran; a run that tests nothing proves nothing.",
                  file=sys.stderr)
            return 1
        print(f"   {args.report.name}: {ran} tests ran")
    if args.no_reference_skips:
        left = [f"{n}: {m.strip()}" for n, m in skips(args.report) if for_references(n, m)]
        if left:
            print("still skipped for want of PyTorch or JAX:\n  " + "\n  ".join(left[:20]),
                  file=sys.stderr)
            return 1
    if args.no_skips_for:
        left = [f"{n}: {m.strip()}" for n, m in skips(args.report) if args.no_skips_for in m]
        if left:
            print(f"still skipped for want of {args.no_skips_for}:\n  " + "\n  ".join(left[:20]),
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
