"""The gradients of functrans.torch's compositions (logaddexp, hypot, xlogy, logit, ...,
cosine_similarity) against float64 central differences (autograd.gradcheck and gradgradcheck),
at ordinary points and near the special ones (ties, zeros, domain ends). Their values, node
names and PyTorch's conventions at the special points themselves are parity programs
(parity_ops_programs.py)."""

from __future__ import annotations

import numpy as np
import pytest

import functrans.torch as torch
from functrans.torch.autograd import gradcheck, gradgradcheck


def _leaf(values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


# (name, function, inputs): points near ties (x ~ y), zeros and the ends of the domain, a
# finite-difference step (1e-6) away from the special point itself
_NEAR = 1e-4
CASES = [
    ("logaddexp", torch.logaddexp, ([0.3, -2., 5., 1.], [0.5, -2. + _NEAR, -30., 1.])),
    ("logaddexp2", torch.logaddexp2, ([0.3, -2., 5.], [0.5, -2. + _NEAR, -30.])),
    ("hypot", torch.hypot, ([3., -1e-3, 0.2, 1.], [4., 2e-3, -0.2 + _NEAR, 1e-5])),
    ("xlogy", torch.xlogy, ([0.3, -2., _NEAR, 4.], [0.5, 2., 3., _NEAR])),
    ("xlogy scalar", lambda t: torch.xlogy(t, 2.5), ([0.3, -_NEAR],)),
    ("erfc", torch.erfc, ([-3., 0., _NEAR, 4.],)),
    ("logit", torch.logit, ([_NEAR, 0.3, 0.5, 1 - _NEAR],)),
    ("logit eps", lambda t: torch.logit(t, 0.2), ([0.1, 0.2 + _NEAR, 0.5, 0.9],)),
    ("deg2rad", torch.deg2rad, ([30., -45.],)),
    ("rad2deg", torch.rad2deg, ([0.3, -1.2],)),
    ("sinc", torch.sinc, ([_NEAR, -0.5, 1.3, 2.],)),
    ("copysign", torch.copysign, ([0.3, -2., _NEAR], [-1., -3., 4.])),
    ("fmax", torch.fmax, ([0.3, -2., 1.], [0.5, -2. + 1e-3, float("nan")])),
    ("fmin", torch.fmin, ([0.3, -2., 1.], [0.5, -2. + 1e-3, float("nan")])),
    ("frac", torch.frac, ([0.3, -2.5, 7.25],)),
    ("nansum", lambda t: torch.nansum(t, 0), ([[1., float("nan")], [2., 3.]],)),
    ("nanmean", lambda t: torch.nanmean(t, 1), ([[1., float("nan"), 4.], [2., 3., 5.]],)),
    ("cummax", lambda t: torch.cummax(t, 1).values, ([[1., 3., 2.], [0., -1., 5.]],)),
    ("cummin", lambda t: torch.cummin(t, 0).values, ([[1., 3., 2.], [0., 4., 1.]],)),
    ("kron", torch.kron, ([[1., 2.], [3., 4.]], [0.5, -1.])),
    ("cross", lambda a, b: torch.cross(a, b, dim=1), ([[1., 2., 3.]], [[0., -1., 4.]])),
    ("dist", torch.dist, ([1., 2., 3.], [1. + _NEAR, 0., 2.])),
    ("dist 3", lambda a, b: torch.dist(a, b, 3), ([1., 2., 3.], [0.5, 0., 2.])),
    ("dist inf", lambda a, b: torch.dist(a, b, float("inf")), ([1., 2., 3.], [0.5, 0., 2.])),
    ("cosine_similarity", torch.cosine_similarity, ([[1., 2., 3.], [_NEAR, 0., 0.]],
                                                    [[0., -1., 4.], [1., 2., 3.]])),
    ("pairwise_distance", torch.nn.functional.pairwise_distance,
     ([[1., 2.], [0., 0.]], [[3., -1.], [_NEAR, 0.]])),
    ("block_diag", lambda a, b: torch.block_diag(a, b), ([[1., 2.]], [[3.], [4.]])),
    ("diag_embed", lambda t: torch.diag_embed(t, -1, 0, 2), ([[1., 2.], [3., 4.]],)),
    ("cartesian_prod", torch.cartesian_prod, ([1., 2.], [3., 4., 5.])),
    ("column_stack", lambda a, b: torch.column_stack([a, b]), ([1., 2.], [[3.], [4.]])),
    ("dstack", lambda a, b: torch.dstack([a, b]), ([1., 2.], [3., 4.])),
]
SMOOTH = {"logaddexp", "logaddexp2", "hypot", "xlogy", "xlogy scalar", "erfc", "logit",
          "sinc", "kron", "cross", "dist", "dist 3", "cosine_similarity", "pairwise_distance"}


@pytest.mark.parametrize("name,fn,values", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_finite_differences(name, fn, values):
    assert gradcheck(fn, tuple(_leaf(v) for v in values))


@pytest.mark.parametrize("name,fn,values", [c for c in CASES if c[0] in SMOOTH],
                         ids=[c[0] for c in CASES if c[0] in SMOOTH])
def test_second_derivatives_match_finite_differences(name, fn, values):
    assert gradgradcheck(fn, tuple(_leaf(v) for v in values))


def test_closed_forms_at_the_special_points():
    """PyTorch's values there, which the parity programs also record: d/dx sinc(0) = 0, the
    gradient of dist at zero distance is 0, fmax's tie goes to input, logit(eps) keeps the
    gradient at the clamp's ends, xlogy's x-derivative is 0 where x = 0 and y <= 0."""
    x = _leaf([0.])
    torch.sinc(x).backward()
    assert x.grad.tolist() == [0.]
    a, b = _leaf([1., 2.]), _leaf([1., 2.])
    torch.dist(a, b).backward()
    assert a.grad.tolist() == [0., 0.] and b.grad.tolist() == [0., 0.]
    a, b = _leaf([1.]), _leaf([1.])
    torch.fmax(a, b).backward()
    assert (a.grad.item(), b.grad.item()) == (1., 0.)
    p = _leaf([0.2, 0.8, 0.1])
    torch.logit(p, 0.2).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), [1 / 0.16, 1 / 0.16, 0.])
    x, y = _leaf([0., 0., 2.]), _leaf([-1., 3., 0.5])
    torch.xlogy(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0., np.log(3.), np.log(0.5)])
    np.testing.assert_allclose(y.grad.numpy(), [0., 0., 4.])


def test_heaviside_has_no_derivative():
    x = _leaf([1., -1.])
    out = torch.heaviside(x, torch.tensor([0.5], dtype=torch.float64))
    assert type(out.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="heaviside"):
        out.sum().backward()
