"""The shim's derivatives at the points where PyTorch's convention differs from JAX's, for the
rows that state both (functrans/primitives/activations.py, binary_math.py, norms.py,
reductions.py): the shim
gives PyTorch's (the values below, recorded from torch 2.13, and live PyTorch where installed),
and the functional API on the same row gives JAX's (tests/primitives/test_conventions.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import functrans as ft
import functrans.torch as fttorch
from functrans.primitives import activations as A
from functrans.primitives import binary_math as B
from functrans.primitives import norms as N
from functrans.primitives import reductions as R

nan = math.nan


def _f(lib):
    return lib.nn.functional


# (name, program of the torch API (lib, x) -> scalar, x, PyTorch's gradient, the same function
# on the row with JAX's derivative, JAX's gradient)
CASES = [
    ("elu-nan", lambda lib, x: _f(lib).elu(x).sum(), [nan, 1.0], [1.0, 1.0],
     lambda x: R.reduce_sum(A.elu(x), (0,)), [nan, 1.0]),
    ("selu-nan", lambda lib, x: lib.selu(x).sum(), [nan], [1.0507009873554805],
     lambda x: R.reduce_sum(A.elu(x, 1.6732632423543772, 1.0507009873554805), (0,)), [nan]),
    ("hardswish-nan", lambda lib, x: _f(lib).hardswish(x).sum(), [nan, 1.0], [1.0, 5 / 6],
     lambda x: R.reduce_sum(A.hard_swish(x), (0,)), [nan, 5 / 6]),
    ("norm3-zero", lambda lib, x: lib.norm(x, 3), [0.0, 0.0], [0.0, 0.0],
     lambda x: N.p_norm(x, 3.0, (0,)), [nan, nan]),
    ("cdist3-zero", lambda lib, x: lib.cdist(x.reshape(1, 2), x.reshape(1, 2), 3.0).sum(),
     [1.0, 2.0], [0.0, 0.0], None, None),
    # median() shares its gradient among the entries equal to it, the NaNs when it is NaN:
    # reduce_max's torch_nan rule over those entries (evenly_distribute_backward)
    ("median-ties", lambda lib, x: lib.median(x), [1.0, 3.0, 1.0, 2.0, 1.0],
     [1 / 3, 0.0, 1 / 3, 0.0, 1 / 3], None, None),
    ("median-nan", lambda lib, x: lib.median(x), [nan, 1.0, nan], [0.5, 0.0, 0.5],
     lambda x: R.reduce_max(x[np.array([0, 2])], (0,)), [nan, 0.0, nan]),
    # cdist with p = 1 takes the p_norm row's PyTorch rule: sign(diff), 0 at 0, NaN at NaN
    ("cdist1-nan-zero", lambda lib, x: lib.cdist(x.reshape(1, 3), lib.zeros(1, 3, dtype=x.dtype),
                                                 1.0).sum(),
     [nan, -2.0, 0.0], [nan, -1.0, 0.0], lambda x: N.p_norm(x, 1.0, (0,)), [-1.0, -1.0, 1.0]),
    ("logsumexp-rounded", lambda lib, x: lib.logsumexp(x, 0), [1e17, 1e17], [1.0, 1.0],
     lambda x: R.logsumexp(x, (0,)), [0.5, 0.5]),
    # the binary rows, operands x[0] and x[1]: xlogy's PyTorch rule masks log(y) only where
    # y <= 0 (inf at y = inf) and keeps x / y (nan at 0 / 0); hypot's x / hypot is 0 / 0 at
    # the origin and 0 beside an infinite operand; logaddexp's meets inf - inf
    ("xlogy-zeros", lambda lib, x: lib.xlogy(x[0], x[1]), [0.0, 0.0], [0.0, nan],
     lambda x: B.xlogy(x[0], x[1]), [0.0, 0.0]),
    ("xlogy-inf", lambda lib, x: lib.xlogy(x[0], x[1]), [0.0, math.inf], [math.inf, 0.0],
     lambda x: B.xlogy(x[0], x[1]), [0.0, 0.0]),
    ("xlogy-number", lambda lib, x: lib.xlogy(0.0, x).sum(), [0.0, math.inf], [nan, 0.0],
     lambda x: R.reduce_sum(B.xlogy(np.zeros(2), x), (0,)), [0.0, 0.0]),
    ("logaddexp-inf", lambda lib, x: lib.logaddexp(x[0], x[1]), [math.inf, math.inf],
     [nan, nan], lambda x: B.logaddexp(x[0], x[1]), [0.5, 0.5]),
    ("logaddexp-minus-inf", lambda lib, x: lib.logaddexp(x[0], x[1]), [-math.inf, -math.inf],
     [nan, nan], lambda x: B.logaddexp(x[0], x[1]), [0.5, 0.5]),
    ("hypot-origin", lambda lib, x: lib.hypot(x[0], x[1]), [0.0, 0.0], [nan, nan],
     lambda x: B.hypot(x[0], x[1]), [1.0, 0.0]),
    ("hypot-inf", lambda lib, x: lib.hypot(x[0], x[1]), [math.inf, 1.0], [nan, 0.0],
     lambda x: B.hypot(x[0], x[1]), [nan, nan]),
    ("fmax-tie", lambda lib, x: lib.fmax(x[0], x[1]), [1.0, 1.0], [1.0, 0.0],
     lambda x: B.fmax(x[0], x[1]), [0.0, 1.0]),
    ("fmin-tie", lambda lib, x: lib.fmin(x[0], x[1]), [1.0, 1.0], [1.0, 0.0],
     lambda x: B.fmin(x[0], x[1]), [0.0, 1.0]),
    ("copysign-zero-nan", lambda lib, x: lib.copysign(x, -1.0).sum(), [0.0, nan, 2.0],
     [0.0, nan, -1.0], lambda x: R.reduce_sum(B.copysign(x, np.full(3, -1.0)), (0,)),
     [-1.0, 1.0, -1.0]),
    ("logaddexp2-inf", lambda lib, x: lib.logaddexp2(x[0], x[1]), [math.inf, math.inf],
     [nan, nan], lambda x: B.logaddexp(x[0], x[1]), [0.5, 0.5]),
]


def _shim_grad(program, x):
    t = fttorch.tensor(x, dtype=fttorch.float64, requires_grad=True)
    program(fttorch, t).backward()
    return t.grad.numpy()


@pytest.mark.parametrize("name,program,x,torch_grad,row_fn,jax_grad", CASES,
                         ids=[c[0] for c in CASES])
def test_the_shim_gives_pytorch_and_the_row_gives_jax(name, program, x, torch_grad, row_fn,
                                                      jax_grad):
    np.testing.assert_allclose(_shim_grad(program, x), torch_grad, rtol=1e-15)
    if row_fn is not None:
        with np.errstate(all="ignore"):
            got = ft.grad(row_fn)(np.asarray(x, np.float64))
        np.testing.assert_allclose(got, jax_grad, rtol=1e-15)


@pytest.mark.parametrize("name,program,x,torch_grad", [c[:4] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_pytorch_gives_the_recorded_gradient(name, program, x, torch_grad):
    torch = pytest.importorskip("torch")
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    program(torch, t).backward()
    np.testing.assert_allclose(t.grad.numpy(), torch_grad, rtol=1e-15)


def test_elu_second_derivative_at_zero_is_pytorchs():
    # elu_double_backward tests x < 0: 0 at x = 0, where JAX's (the lower branch's) is alpha
    t = fttorch.tensor([0.0], dtype=fttorch.float64, requires_grad=True)
    g, = fttorch.autograd.grad(fttorch.nn.functional.elu(t, 2.0).sum(), t, create_graph=True)
    assert fttorch.autograd.grad(g.sum(), t)[0].numpy().tolist() == [0.0]
    assert ft.grad(ft.grad(lambda x: A.elu(x, 2.0)))(0.0) == 2.0


# cumprod's second derivative where the operand has two zeros: PyTorch's cumprod_backward takes
# its loop over omitted products under create_graph (the row's torch_zeros_jvp), so no term
# meets the entry it omits; the row's own scan gives NaN at [0, 0, inf] (inf * 0). Recorded
# from torch 2.13: (x, dim, d/dx of the sum of d/dx cumprod(x).sum())
CUMPROD_SECOND = [
    ([0.0, 0.0, math.inf], 0, [math.inf, math.inf, 0.0]),
    ([0.0, 0.0, 3.0, 2.0], 0, [10.0, 10.0, 0.0, 0.0]),
    ([2.0, 0.0, 0.0, 4.0], 0, [1.0, 11.0, 10.0, 0.0]),
    ([[0.0, 0.0, math.inf], [math.inf, 0.0, 0.0]], 1,
     [[math.inf, math.inf, 0.0], [1.0, math.inf, math.inf]]),
]


def _cumprod_second(lib, x, dim):
    t = lib.tensor(x, dtype=lib.float64, requires_grad=True)
    g, = lib.autograd.grad(lib.cumprod(t, dim).sum(), t, create_graph=True)
    return lib.autograd.grad(g.sum(), t)[0].detach().numpy()


@pytest.mark.parametrize("x,dim,want", CUMPROD_SECOND, ids=range(len(CUMPROD_SECOND)))
def test_cumprod_second_derivative_with_two_zeros_is_pytorchs(x, dim, want):
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_cumprod_second(fttorch, x, dim), want)


@pytest.mark.parametrize("x,dim,want", CUMPROD_SECOND, ids=range(len(CUMPROD_SECOND)))
def test_pytorch_gives_the_recorded_cumprod_second_derivative(x, dim, want):
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(_cumprod_second(torch, x, dim), want)


def _cumprod_derivatives(x, w, v):
    """Closed forms along the last axis, by explicit products: the gradient g of
    sum(w * cumprod(x)) (g_k = sum over j >= k of w_j prod(x_i, i <= j, i != k)) and the
    gradient of sum(v * g) (the products leave out both k and m)."""
    n = x.shape[-1]

    def omitting(j, *skip):
        factors = [x[..., i] for i in range(j + 1) if i not in skip]
        return np.prod(factors or [np.ones(x.shape[:-1])], axis=0)

    g = np.stack([sum(w[..., j] * omitting(j, k) for j in range(k, n)) for k in range(n)], -1)
    h = np.stack([sum(v[..., k] * w[..., j] * omitting(j, k, m) for k in range(n) if k != m
                      for j in range(max(k, m), n)) for m in range(n)], -1)
    return g, h


@pytest.mark.parametrize("shape, bounded", [((5,), False), ((3, 6), False), ((5,), True)],
                         ids=["row", "rows", "past the n x n bound"])
def test_cumprod_derivatives_with_zeros_match_closed_forms(shape, bounded, monkeypatch):
    if bounded:     # past OMITTED_MAX entries the row's own rule, not the n x n products
        def omitted(*args):
            raise AssertionError("built the n x n omitted products past OMITTED_MAX")
        monkeypatch.setattr(R, "OMITTED_MAX", 8)
        monkeypatch.setattr(R, "_cumprod_omitted", omitted)
    rng = np.random.default_rng(len(shape))
    x, w, v = (rng.normal(size=shape) for _ in range(3))
    x.reshape(-1, shape[-1])[:, [1, 3]] = 0.0  # two zeros in every row
    t = fttorch.tensor(x, requires_grad=True)
    g, = fttorch.autograd.grad(fttorch.cumprod(t, -1), t, fttorch.tensor(w), create_graph=True)
    h, = fttorch.autograd.grad(g, t, fttorch.tensor(v))
    want_g, want_h = _cumprod_derivatives(x, w, v)
    np.testing.assert_allclose(g.detach().numpy(), want_g, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-12, atol=1e-12)
