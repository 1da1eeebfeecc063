"""Every tutorial notebook runs top to bottom in a real Jupyter kernel, without an error and
within its time budget; its cells assert their own results, so a notebook cannot drift."""

from __future__ import annotations

import pytest

from nbrun import BUDGET, committed_problems, execute, notebooks

NOTEBOOKS = notebooks()
ids = [p.name for p in NOTEBOOKS]


def test_there_are_tutorials():
    assert len(NOTEBOOKS) >= 1


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_committed_notebook_is_a_clean_run(path):
    pytest.importorskip("nbformat")
    assert committed_problems(path) == []


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_notebook_executes(path):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    _, seconds = execute(path)
    print(f"{path.name}: {seconds:.1f} s")
    assert seconds < BUDGET, (f"{path.name} took {seconds:.0f} s, over its {BUDGET} s budget: "
                              "make it smaller (fewer points, steps or plots)")
