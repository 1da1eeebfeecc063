"""Executing the tutorial notebooks with a real Jupyter kernel (nbclient + ipykernel).

Shared by tests/docs/test_notebooks.py (execute, fail on any error) and
scripts/run_notebooks.py (execute and write the outputs back into the .ipynb files).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "docs" / "tutorials"
CELL_TIMEOUT = 300  # seconds for any one cell
BUDGET = 60  # seconds for one whole notebook; the five together stay under five minutes


def notebooks() -> list[Path]:
    return sorted(TUTORIALS.glob("*.ipynb"))


def _kernel_env(tmp: str) -> None:
    """A `python3` kernel spec that runs *this* interpreter, found first on JUPYTER_PATH, and
    the repository on the kernel's PYTHONPATH (so an uninstalled checkout works too)."""
    spec = Path(tmp) / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [tmp] + [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p])
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])


def execute(path: Path, *, timeout: int = CELL_TIMEOUT):
    """Run the notebook top to bottom in a fresh kernel, from its own folder.

    Returns (executed notebook, seconds). Raises nbclient's CellExecutionError on the first cell
    that raises, naming the cell and showing its traceback.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    saved = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "PYTHONPATH")}
    with tempfile.TemporaryDirectory() as tmp:
        _kernel_env(tmp)
        try:
            client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                    resources={"metadata": {"path": str(path.parent)}},
                                    record_timing=False, coalesce_streams=True)
            start = time.perf_counter()
            client.execute()
            seconds = time.perf_counter() - start
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return nb, seconds


def committed_problems(path: Path) -> list[str]:
    """Why the committed notebook does not read as a clean top-to-bottom run, if it does not."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    problems = []
    counts = [c.get("execution_count") for c in nb.cells if c.cell_type == "code"]
    if counts != list(range(1, len(counts) + 1)):
        problems.append(f"execution counts {counts} are not 1..{len(counts)}: re-run it with "
                        "`python scripts/run_notebooks.py`")
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                problems.append(f"cell {i} has a committed error output ({out.get('ename')})")
    return problems
