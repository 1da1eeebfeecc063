"""functrans.torch against PyTorch 2.x on the programs of parity_programs.py.

For every program the values, .grad contents, flags, grad_fn names, warnings and errors must
match: against PyTorch's records in parity_fixtures.json (always), and against a live PyTorch
run (when torch is installed; CI installs torch==2.13.0, the CPU build).
"""

import json

import pytest
from parity_programs import FIXTURES, PROGRAMS, differences, observe

import functrans.torch as ft_torch

with open(FIXTURES) as _f:
    _RECORDED = json.load(_f)

NAMES = sorted(PROGRAMS)


def _live_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "autograd"):  # a stray directory named torch, not PyTorch
        pytest.skip("PyTorch is not installed")
    return torch


def _report(problems):
    return "\n".join(problems[:20])


def test_there_are_at_least_40_programs():
    assert len(PROGRAMS) >= 40
    assert set(_RECORDED["programs"]) == set(PROGRAMS), \
        ("fixtures are stale: run `python tests/functrans_torch/parity_programs.py` with torch "
         "installed")


@pytest.mark.parametrize("name", NAMES)
def test_matches_recorded_pytorch(name):
    got = observe(ft_torch, PROGRAMS[name])
    problems = differences(got, _RECORDED["programs"][name])
    assert not problems, _report(problems)


@pytest.mark.parametrize("name", NAMES)
def test_matches_live_pytorch(name):
    torch = _live_torch()
    want = observe(torch, PROGRAMS[name])
    got = observe(ft_torch, PROGRAMS[name])
    problems = differences(got, want, once_warnings=False)
    assert not problems, _report(problems)


def test_fixtures_were_recorded_from_this_pytorch():
    torch = _live_torch()
    if torch.__version__.split("+")[0] != _RECORDED["torch_version"].split("+")[0]:
        pytest.skip(f"fixtures come from torch {_RECORDED['torch_version']}, "
                    f"this is {torch.__version__}")
    # 3e-7: two float32 ulps, the most that PyTorch's vectorised kernels differ by between
    # CPUs (gelu's erf on AVX2 and on AVX-512); a stale fixture differs by more
    stale = [n for n in NAMES if differences(observe(torch, PROGRAMS[n]),
                                             _RECORDED["programs"][n], rtol=3e-7,
                                             once_warnings=False)]
    assert not stale, f"re-record the fixtures: {stale}"
