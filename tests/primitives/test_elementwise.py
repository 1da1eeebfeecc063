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


# points off the real line on both sides of every branch cut these functions have (the real
# axis beyond +-1, the imaginary axis beyond +-i, the negative real axis), none on a cut
_OFF_AXIS = [a + s * b * 1j for a in (-2.5, -0.5, 0.5, 2.5) for b in (0.3, 1.7) for s in (1, -1)]
_OFF_AXIS += [0.3j, -0.3j]
_INVERSES = {
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "arcsinh": np.arcsinh,
    "arccosh": np.arccosh, "arctanh": np.arctanh, "log": np.log, "sqrt": np.sqrt,
    "log1p": np.log1p, "log2": np.log2, "log10": np.log10,
    "power": (lambda z: np.power(z, 0.3 + 0.7j), lambda z: fnp.power(z, 0.3 + 0.7j)),
    "power-in-exponent": (lambda z: np.power(-1.5 + 0.2j, z),
                          lambda z: fnp.power(-1.5 + 0.2j, z)),
}


def _pair(name):
    f = _INVERSES[name]
    return f if isinstance(f, tuple) else (f, getattr(fnp, name))


@pytest.mark.parametrize("name", sorted(_INVERSES))
def test_complex_inverse_functions_match_central_differences(name):
    # holomorphic derivatives to second order against complex central differences of numpy's
    # own function (the principal branch), forward and reverse
    f_np, f = _pair(name)
    d1 = ft.grad(f, holomorphic=True)
    d2 = ft.grad(d1, holomorphic=True)
    for z in map(np.complex128, _OFF_AXIS):
        h = 1e-6
        fd1 = (f_np(z + h) - f_np(z - h)) / (2 * h)
        np.testing.assert_allclose(d1(z), fd1, rtol=1e-7, atol=1e-9, err_msg=str(z))
        np.testing.assert_allclose(ft.jvp(f, (z,), (np.complex128(1),))[1], fd1, rtol=1e-7,
                                   atol=1e-9, err_msg=str(z))
        h = 1e-4
        fd2 = (f_np(z + h) - 2 * f_np(z) + f_np(z - h)) / h**2
        np.testing.assert_allclose(d2(z), fd2, rtol=1e-5, atol=1e-6, err_msg=str(z))


def test_complex_inverse_functions_match_jax_except_acosh_left_of_the_axis():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    jax_names = {"arcsin": jnp.arcsin, "arccos": jnp.arccos, "arctan": jnp.arctan,
                 "arcsinh": jnp.arcsinh, "arccosh": jnp.arccosh, "arctanh": jnp.arctanh,
                 "log": jnp.log, "sqrt": jnp.sqrt}
    for name, f_jax in jax_names.items():
        f = getattr(fnp, name)
        for z in map(np.complex128, _OFF_AXIS):
            ours = ft.grad(f, holomorphic=True)(z)
            theirs = complex(jax.grad(f_jax, holomorphic=True)(z))
            if name == "arccosh" and np.signbit(z.real):
                # JAX's 1/sqrt((z - 1)(z + 1)) takes the other branch of the root for Re z < 0
                # (and -0: the literal -0.3j is -0.0 - 0.3j)
                np.testing.assert_allclose(ours, -theirs, rtol=1e-12)
            else:
                np.testing.assert_allclose(ours, theirs, rtol=1e-12, err_msg=f"{name} {z}")


def test_jax_still_gives_nan_for_pow_at_zero_to_the_zero():
    # the departure above is from this JAX value; if JAX changes it, the note can go
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    with np.errstate(all="ignore"):
        assert np.isnan(float(jax.grad(lambda x: jax.numpy.power(x, 0.0))(0.0)))
