"""docs/from-pytorch-names.md is what scripts/update_torch_names_table.py generates from the
installed PyTorch and functrans.torch: the table of PyTorch names cannot drift from the code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "update_torch_names_table.py"
PAGE = ROOT / "docs" / "from-pytorch-names.md"


def test_page_is_checked_in_and_names_its_command():
    text = PAGE.read_text(encoding="utf-8")
    assert "python scripts/update_torch_names_table.py" in text
    for module in ("torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch.autograd"):
        assert f"\n## {module}\n" in text


def test_page_matches_the_installed_modules():
    torch = pytest.importorskip("torch")
    pinned = "2.13.0"
    if torch.__version__.split("+")[0] != pinned:
        pytest.skip(f"the table is generated from PyTorch {pinned}; "
                    f"{torch.__version__} is installed")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    # a fresh process: which torch submodules show in dir(torch) depends on what was imported
    run = subprocess.run([sys.executable, str(SCRIPT), "--check"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (
        f"docs/from-pytorch-names.md is out of date with the installed PyTorch and "
        f"functrans.torch: regenerate it with `python scripts/update_torch_names_table.py`.\n"
        f"{run.stdout}{run.stderr}")
