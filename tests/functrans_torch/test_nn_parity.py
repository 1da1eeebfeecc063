"""functrans.torch.nn against PyTorch 2.x on the programs of torch_nn_programs.py: values, .grad
contents, state_dict keys, reprs, warnings and error messages must match, against the records in
torch_nn_fixtures.json (always) and a live PyTorch (when installed)."""

import json

import pytest
from torch_nn_programs import FIXTURES, PROGRAMS, SEEDED, TOLERANCES
from parity_programs import differences, observe

import functrans.torch as ft_torch

with open(FIXTURES) as _f:
    _RECORDED = json.load(_f)

NAMES = sorted(PROGRAMS)

def _live_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "autograd"):
        pytest.skip("PyTorch is not installed")
    return torch


def test_fixtures_cover_every_program():
    assert set(_RECORDED["programs"]) == set(PROGRAMS), \
        ("fixtures are stale: run `python tests/functrans_torch/torch_nn_programs.py` with torch "
         "installed")
    assert set(_RECORDED["seeded"]) == set(SEEDED)


@pytest.mark.parametrize("name", NAMES)
def test_nn_matches_recorded_pytorch(name):
    problems = differences(observe(ft_torch, PROGRAMS[name]), _RECORDED["programs"][name],
                           rtol=TOLERANCES.get(name, 2e-6))
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", NAMES)
def test_nn_matches_live_pytorch(name):
    torch = _live_torch()
    want = observe(torch, PROGRAMS[name])
    problems = differences(observe(ft_torch, PROGRAMS[name]), want,
                           rtol=TOLERANCES.get(name, 2e-6), once_warnings=False)
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_seeded_init_gives_pytorch_weights(name):
    problems = differences(observe(ft_torch, SEEDED[name]), _RECORDED["seeded"][name])
    assert not problems, "\n".join(problems[:20])
