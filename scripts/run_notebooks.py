"""Execute the tutorial notebooks and write their outputs back, so they read well unrun.

    python scripts/run_notebooks.py                # every docs/tutorials/*.ipynb
    python scripts/run_notebooks.py docs/tutorials/02_vjp_jvp.ipynb
    python scripts/run_notebooks.py --check        # execute only; write nothing

Needs the `notebooks` extra (pip install -e ".[notebooks]"). Each notebook runs top to bottom
in a fresh kernel from its own folder; the first failing cell stops it with its traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "docs"))

from nbrun import BUDGET, execute, notebooks  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="execute without writing")
    args = parser.parse_args(argv)
    import nbformat

    total, failed = 0.0, False
    for path in args.paths or notebooks():
        path = path.resolve()
        try:
            nb, seconds = execute(path)
        except Exception as e:  # CellExecutionError carries the cell and traceback
            print(f"FAILED {path.name}\n{e}", file=sys.stderr)
            failed = True
            continue
        total += seconds
        over = "  OVER BUDGET" if seconds >= BUDGET else ""
        print(f"{path.name}: {seconds:.1f} s{over}")
        if not args.check:
            nbformat.write(nb, path)
    print(f"total: {total:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
