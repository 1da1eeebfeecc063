"""Elementwise rows (functrans/primitives/elementwise.py) beyond the case table: what a rule
refuses."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError
from functrans.test_util import check_grads


@pytest.mark.parametrize("program,closed_form", [
    (lambda z: fnp.abs(z), lambda z: np.conj(z) / np.abs(z)),
    (lambda z: fnp.abs(z) ** 2, lambda z: 2 * np.conj(z)),
    (lambda z: fnp.abs(fnp.maximum(z, 0j)), lambda z: np.conj(z) / np.abs(z))],
    ids=["abs", "abs-squared", "abs-of-max"])
def test_abs_of_a_complex_value_differentiates_as_jax(program, closed_form):
    # JAX's convention: grad of a real f(z), z = x + iy, is df/dx - i df/dy; for |z| that is
    # conj(z)/|z| (the real rule gave 1.0 before |z| of a complex value had its own)
    z = 1 + 2j
    np.testing.assert_allclose(ft.grad(program)(z), closed_form(z), rtol=1e-15)
    # forward mode: the tangent 1 moves z along the real axis, d|z| = Re(conj(z) t)/|z|
    _, t = ft.jvp(program, (np.array(z),), (np.array(1 + 0j),))
    np.testing.assert_allclose(t, np.real(closed_form(z)), rtol=1e-15)
    assert fnp.abs(z) == np.abs(z) and fnp.abs(np.array(z)).dtype == np.float64


def test_abs_of_complex_zero_has_derivative_zero():
    # as JAX's abs rule: |z| is taken as 1 in the quotient conj(z)/|z| where z == 0
    assert ft.grad(fnp.abs)(0j) == 0
    # second order: Re(grad |z|^2) = Re(2 conj(z)) = 2x, whose gradient is 2
    assert ft.grad(lambda z: fnp.real(ft.grad(lambda w: fnp.abs(w) ** 2)(z)))(0.5j) == 2


def test_pow_with_exponent_zero_has_derivative_zero_at_zero():
    # x^0 is 1 for every x (numpy's 0^0 = 1 too), so d/dx is 0 at x = 0 as everywhere, to any
    # order: autograd's and PyTorch's answer; JAX's y x^(y-1) = 0 * inf gives nan there
    f = lambda x: fnp.power(x, 0.0)
    for x in (0.0, -0.0, 2.5):
        assert ft.grad(f)(x) == 0.0
        assert ft.grad(ft.grad(f))(x) == 0.0
    assert ft.grad(lambda z: fnp.real(fnp.power(z, 0j)))(0j) == 0


@pytest.mark.parametrize("x", [2.0, 0.5, 3.0])
def test_pow_hessian_at_exponent_zero_is_the_closed_form(x):
    # f = x^y at y = 0: f_xx = 0, f_xy = 1/x (masking only x == y == 0 keeps it), f_yy = log(x)^2
    h = ft.hessian(lambda x, y: fnp.power(x, y), argnums=(0, 1))(x, 0.0)
    expected = [[0.0, 1 / x], [1 / x, np.log(x) ** 2]]
    np.testing.assert_allclose(np.array(h, dtype=float), expected, rtol=1e-13, atol=1e-15)
    check_grads(lambda x, y: fnp.power(x, y), (x, 0.0), order=2)
