"""Refresh the ```output blocks of docs/**/*.md from what their ```python blocks print.

    python scripts/update_doc_outputs.py [PAGE.md ...]

Runs each page as the test suite does (tests/docs/test_markdown.py) and rewrites every output
block that differs. Review the diff before committing: a changed printout is a changed claim.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "docs"))
sys.path.insert(0, str(ROOT))

from mdblocks import run_page  # noqa: E402


def update(page: Path) -> int:
    mismatches = run_page(page, update=True)
    if not mismatches:
        return 0
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    # replace from the bottom so earlier line numbers stay valid
    for block, actual in sorted(mismatches, key=lambda m: -m[0].line):
        start = block.line - 1 + block.code.count("\n")  # the python block's closing fence
        while not lines[start].lstrip().startswith("```output"):
            start += 1
        end = start + 1
        while not lines[end].lstrip().startswith("```"):
            end += 1
        body = actual if actual.endswith("\n") else actual + "\n"
        lines[start + 1:end] = [body]
    page.write_text("".join(lines), encoding="utf-8")
    return len(mismatches)


def main(argv: list[str]) -> int:
    pages = [Path(a) for a in argv] or sorted(
        p for p in (ROOT / "docs").rglob("*.md") if "api" not in p.relative_to(ROOT / "docs").parts[:1])
    for page in pages:
        n = update(page)
        if n:
            print(f"{page.relative_to(ROOT) if page.is_absolute() else page}: {n} output block(s) updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
