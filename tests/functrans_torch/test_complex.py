"""Complex numbers in functrans.torch, PyTorch's conventions: the programs of
complex_programs.py against recorded PyTorch fixtures always and against a live PyTorch when
installed; gradients of real losses of complex leaves (dL/dx + i dL/dy, the conjugate of JAX's)
against float64 central differences, to second order."""

import json

import numpy as np
import pytest
from complex_programs import FIXTURES, LOSSES, PROGRAMS, Z
from parity_programs import differences, observe

import functrans.torch as ft_torch

with open(FIXTURES) as _f:
    _RECORDED = json.load(_f)

NAMES = sorted(PROGRAMS)


def test_fixtures_cover_every_program():
    assert set(_RECORDED["programs"]) == set(PROGRAMS), \
        ("fixtures are stale: run `python tests/functrans_torch/complex_programs.py` with "
         "torch installed")


@pytest.mark.parametrize("name", NAMES)
def test_matches_recorded_pytorch(name):
    got = observe(ft_torch, PROGRAMS[name])
    problems = differences(got, _RECORDED["programs"][name])
    assert not problems, "\n".join(problems[:20])


@pytest.mark.parametrize("name", NAMES)
def test_matches_live_pytorch(name):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "autograd"):
        pytest.skip("PyTorch is not installed")
    want = observe(torch, PROGRAMS[name])
    got = observe(ft_torch, PROGRAMS[name])
    problems = differences(got, want, once_warnings=False)
    assert not problems, "\n".join(problems[:20])


# --- finite differences ----------------------------------------------------------------------

def _loss_value(loss, z):
    with ft_torch.no_grad():
        return float(loss(ft_torch, ft_torch.tensor(z, dtype=ft_torch.complex128)).item())


def _wirtinger_fd(f, z, eps=1e-6):
    """df/dx + i df/dy of a real f at each element of z (PyTorch's .grad), by central
    differences in float64."""
    out = np.zeros(z.shape, np.complex128)
    for k in range(z.size):
        for step, unit in ((eps, 1.0), (1j * eps, 1j)):
            zp, zm = z.copy(), z.copy()
            zp.flat[k] += step
            zm.flat[k] -= step
            out.flat[k] += unit * (f(zp) - f(zm)) / (2 * eps)
    return out


def _grad(loss, z, create_graph=False):
    x = ft_torch.tensor(z, dtype=ft_torch.complex128, requires_grad=True)
    g, = ft_torch.autograd.grad(loss(ft_torch, x), x, create_graph=create_graph)
    return x, g


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradient_matches_finite_differences(name):
    z = np.array(Z, np.complex128)
    _, g = _grad(LOSSES[name], z)
    want = _wirtinger_fd(lambda v: _loss_value(LOSSES[name], v), z)
    np.testing.assert_allclose(g.detach().numpy(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["abs", "exp_log", "pow", "div", "trig", "sum_mean_prod",
                                  "vdot", "sgn", "matmul", "polar_of_parts", "angle"])
def test_second_derivative_matches_finite_differences(name):
    """The gradient of <w, grad L> (create_graph=True) against central differences of it."""
    z = np.array(Z, np.complex128)
    w = np.array([0.3 - 1j, 1.0, -0.5 + 0.2j, 0.7j])

    def phi(x, g):  # a real functional of the gradient
        return (g.real * w.real + g.imag * w.imag).sum()

    x, g = _grad(LOSSES[name], z, create_graph=True)
    h, = ft_torch.autograd.grad(phi(x, g), x)

    def phi_at(v):
        return float(phi(*_grad(LOSSES[name], v)).item())
    np.testing.assert_allclose(h.numpy(), _wirtinger_fd(phi_at, z, eps=1e-5), rtol=1e-5,
                               atol=1e-5)


def test_backward_of_a_complex_output_is_the_conjugate_jacobian():
    """For holomorphic f, x.grad = g * conj(f'(z)): here f = z**3, f' = 3 z**2."""
    z = np.array(Z, np.complex128)
    g = np.array([1 - 2j, 0.5j, 1.0, -1 + 1j])
    x = ft_torch.tensor(z, requires_grad=True)
    (x ** 3).backward(ft_torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g * np.conj(3 * z ** 2), rtol=1e-12)


def test_gradcheck_refuses_the_jax_convention():
    """A backward giving JAX's cotangent (g f'(z), not g conj(f'(z))) fails gradcheck."""
    class Jax(ft_torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2 * x

    x = ft_torch.tensor(Z[:2], dtype=ft_torch.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match="imaginary part of complex outputs only, Jacobian "
                       "mismatch for output 0 with respect to input 0"):
        ft_torch.autograd.gradcheck(Jax.apply, (x,))


def test_view_as_real_shares_storage_and_version():
    z = ft_torch.zeros(2, dtype=ft_torch.complex128)
    v = ft_torch.view_as_real(z)
    assert np.shares_memory(v.numpy(), z.numpy())
    v[0, 1] = 3.0
    assert z[0].item() == 3j and z._version == v._version == 1
