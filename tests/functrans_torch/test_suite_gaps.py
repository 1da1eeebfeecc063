"""The gaps PyTorch's own autograd tests found, closed: functrans.torch against PyTorch 2.x on
the programs of suite_gap_programs.py (node hooks, GradientEdge, Variable, var_mean,
scatter_reduce, nanmedian, legacy constructors, out=, gradcheck's checks, autograd.functional's
validation, checkpoint, undefined gradients), against recorded fixtures always and against a
live PyTorch when installed."""

import json

import pytest
from parity_programs import differences, observe
from suite_gap_programs import FIXTURES, PROGRAMS

import functrans.torch as ft_torch

with open(FIXTURES) as _f:
    _RECORDED = json.load(_f)

NAMES = sorted(PROGRAMS)


def _report(problems):
    return "\n".join(problems[:20])


def test_fixtures_cover_every_program():
    assert set(_RECORDED["programs"]) == set(PROGRAMS), \
        ("fixtures are stale: run `python tests/functrans_torch/suite_gap_programs.py` with "
         "torch installed")


@pytest.mark.parametrize("name", NAMES)
def test_matches_recorded_pytorch(name):
    got = observe(ft_torch, PROGRAMS[name])
    problems = differences(got, _RECORDED["programs"][name])
    assert not problems, _report(problems)


@pytest.mark.parametrize("name", NAMES)
def test_matches_live_pytorch(name):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "autograd"):
        pytest.skip("PyTorch is not installed")
    want = observe(torch, PROGRAMS[name])
    got = observe(ft_torch, PROGRAMS[name])
    problems = differences(got, want, once_warnings=False)
    assert not problems, _report(problems)
