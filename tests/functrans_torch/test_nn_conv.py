"""functrans.torch's convolutions, pools and pad against PyTorch 2.x on the programs of
nn_conv_programs.py (values, grad_fn names, gradients, reprs, errors), recorded in
nn_conv_fixtures.json (always) and live (when PyTorch is installed); and their gradients
against float64 finite differences (functrans.torch's gradcheck and gradgradcheck)."""

import json

import numpy as np
import pytest
from nn_conv_programs import FIXTURES, PROGRAMS, SEEDED, TOLERANCES
from parity_programs import differences, observe

import functrans.torch as ft_torch

F = ft_torch.nn.functional

with open(FIXTURES) as _f:
    _RECORDED = json.load(_f)


def test_fixtures_cover_every_program():
    assert set(_RECORDED["programs"]) == set(PROGRAMS), \
        "fixtures are stale: run `python tests/functrans_torch/nn_conv_programs.py` with torch"
    assert set(_RECORDED["seeded"]) == set(SEEDED)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_recorded_pytorch(name):
    problems = differences(observe(ft_torch, PROGRAMS[name]), _RECORDED["programs"][name],
                           rtol=TOLERANCES.get(name, 2e-6))
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_seeded_weights_are_pytorchs(name):
    problems = differences(observe(ft_torch, SEEDED[name]), _RECORDED["seeded"][name])
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", sorted(PROGRAMS) + sorted(SEEDED))
def test_matches_live_pytorch(name):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "autograd"):
        pytest.skip("PyTorch is not installed")
    fn = PROGRAMS.get(name) or SEEDED[name]
    problems = differences(observe(ft_torch, fn), observe(torch, fn),
                           rtol=TOLERANCES.get(name, 2e-6), once_warnings=False)
    assert not problems, "\n".join(problems[:20])


def _leaf(*shape, seed=0):
    values = np.random.default_rng(seed).normal(size=shape)
    return ft_torch.tensor(values, dtype=ft_torch.float64, requires_grad=True)


GRADCHECKS = {
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2),
                                        groups=2), ((1, 4, 5, 6), (4, 2, 2, 2), (4,))),
    "conv2d_same": (lambda x, w: F.conv2d(x, w, padding="same"), ((2, 2, 4, 4), (3, 2, 2, 3))),
    "conv1d": (lambda x, w: F.conv1d(x, w, stride=2, padding=2), ((2, 3, 7), (2, 3, 3))),
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), ((2, 2, 5, 6),)),
    "max_pool1d": (lambda x: F.max_pool1d(x, 2, dilation=2), ((2, 7),)),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                          count_include_pad=False), ((1, 2, 5, 6),)),
    "avg_pool1d": (lambda x: F.avg_pool1d(x, 2, 1, 1), ((2, 3, 5),)),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (3, 2)), ((1, 2, 5, 7),)),
    "adaptive_avg_pool1d": (lambda x: F.adaptive_avg_pool1d(x, 3), ((2, 5),)),
    "pad_reflect": (lambda x: F.pad(x, (2, 1, 1, 0), mode="reflect"), ((1, 2, 3, 4),)),
    "pad_circular": (lambda x: F.pad(x, (1, 2), mode="circular"), ((2, 2, 4),)),
}


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradients_match_finite_differences(name):
    fn, shapes = GRADCHECKS[name]
    inputs = tuple(_leaf(*s, seed=k) for k, s in enumerate(shapes))
    assert ft_torch.autograd.gradcheck(fn, inputs)
    assert ft_torch.autograd.gradgradcheck(fn, inputs)


def test_max_pool_gradient_goes_to_the_first_maximum_of_a_window():
    x = ft_torch.tensor([[[[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 1.0, 3.0]]]], requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]]]]


def test_conv_result_does_not_alias_the_input():
    x = ft_torch.ones(1, 1, 3, 3)
    y = F.conv2d(x, ft_torch.ones(1, 1, 1, 1))
    assert not np.shares_memory(y.numpy(), x.numpy())
    z = F.pad(x, (0, 0))
    assert not np.shares_memory(z.numpy(), x.numpy())
