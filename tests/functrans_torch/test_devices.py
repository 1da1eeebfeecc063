"""Devices in functrans.torch as PyTorch's CPU-only build reports them.

Every program of device_programs.py must return what PyTorch 2.13's CPU build returns, or raise
its exception with its message: against the records in device_fixtures.json (always) and a
live PyTorch (when installed and built without CUDA).
"""

import json
import warnings

import pytest
from device_programs import FIXTURES, PROGRAMS, outcome

import functrans.torch as ft_torch

with open(FIXTURES) as _f:
    _RECORDED = json.load(_f)

NAMES = sorted(PROGRAMS)


def _live_cpu_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "cuda"):       # a stray directory named torch, not PyTorch
        pytest.skip("PyTorch is not installed")
    if torch.cuda.is_available() or torch.backends.mps.is_available():
        pytest.skip("this PyTorch has an accelerator; the programs describe a CPU-only build")
    return torch


def test_every_program_is_recorded():
    assert set(_RECORDED["programs"]) == set(PROGRAMS), \
        "fixtures are stale: run `python tests/functrans_torch/device_programs.py`"


@pytest.mark.parametrize("name", NAMES)
def test_matches_recorded_pytorch(name):
    assert outcome(ft_torch, name) == _RECORDED["programs"][name]


@pytest.mark.parametrize("name", NAMES)
def test_matches_live_pytorch(name):
    torch = _live_cpu_torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = outcome(torch, name)
    assert outcome(ft_torch, name) == want


def test_cuda_error_is_an_assertion_error_naming_the_cpu_build():
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
        ft_torch.ones(2).cuda()
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
        ft_torch.ones(2).to("cuda:0", ft_torch.float64)


def test_a_failed_factory_leaves_the_generator_alone():
    ft_torch.manual_seed(0)
    with pytest.raises(AssertionError):
        ft_torch.rand(3, device="cuda")
    assert ft_torch.rand(1).item() == pytest.approx(0.4962566, abs=0, rel=1e-7)


def test_default_device_context_nests_and_restores():
    assert ft_torch.get_default_device() == ft_torch.device("cpu")
    with ft_torch.device("cpu"):
        with ft_torch.device("cpu", 0):
            assert ft_torch.get_default_device() == ft_torch.device("cpu", 0)
        assert ft_torch.get_default_device() == ft_torch.device("cpu")
    ft_torch.set_default_device("cuda")
    try:
        with pytest.raises(AssertionError, match="CUDA"):
            ft_torch.zeros(1)
    finally:
        ft_torch.set_default_device(None)
    assert ft_torch.zeros(1).device == ft_torch.device("cpu")


def test_device_is_immutable_and_pickles():
    import pickle
    d = ft_torch.device("cuda", 1)
    with pytest.raises(AttributeError):
        d.index = 2
    assert pickle.loads(pickle.dumps(d)) == d
