"""fnp.real, fnp.imag, fnp.conj / conjugate, fnp.angle: numpy's values for complex and real
input, copies never aliasing the caller's array, and JAX's derivatives (real and conj the
identity for real input, imag zero; for complex input the real, imag and conj rows, whose
transposes give grad(f) = df/dx - i df/dy for a real f of z = x + iy)."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError
from functrans.test_util import check_grads

Z = np.array([1 + 2j, -3.5 - 0.25j, 0j, np.inf - 1j, 2 + np.nan * 1j])
X = np.array([1.5, -2.0, 0.0, -0.0, np.inf])


@pytest.mark.parametrize("name", ["real", "imag", "conj", "conjugate"])
@pytest.mark.parametrize("x", [Z, Z.astype(np.complex64), X, X.astype(np.float32),
                               np.arange(3), 2.5, 1 - 1j], ids=str)
def test_values_and_dtypes_equal_numpy(name, x):
    got, want = getattr(fnp, name)(x), getattr(np, name)(x)
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    if isinstance(x, np.ndarray):
        assert not np.shares_memory(np.asarray(got), x)


def test_real_of_complex_under_jit_and_vmap():
    np.testing.assert_array_equal(ft.jit(fnp.real)(Z), Z.real)
    np.testing.assert_array_equal(ft.vmap(fnp.real)(Z), Z.real)


def test_derivatives_for_real_input_are_jaxs():
    # d real(x)/dx = 1, d conj(x)/dx = 1, d imag(x)/dx = 0 for real x (as jax.grad gives)
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(fnp.real(x) ** 2))(x), 2 * x)
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(fnp.conj(x) * 3))(x), 3.0)
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(fnp.imag(x) + x))(x), 1.0)
    assert ft.jvp(fnp.imag, (x,), (x,))[1].tolist() == [0.0, 0.0, 0.0]


def test_matches_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    for name in ("real", "imag", "conj", "conjugate"):
        for x in (Z, X):
            np.testing.assert_array_equal(getattr(fnp, name)(x), getattr(jnp, name)(x))
        f_ft = lambda x, n=name: fnp.sum(getattr(fnp, n)(x) * x)
        f_jax = lambda x, n=name: jnp.sum(getattr(jnp, n)(x) * x)
        np.testing.assert_allclose(ft.grad(f_ft)(X[:3]), jax.grad(f_jax)(X[:3]), rtol=1e-15)


def test_complex_parts_under_jit_and_vmap():
    for name in ("real", "imag", "conj", "angle"):
        want = getattr(np, name)(Z[:3])
        np.testing.assert_array_equal(ft.jit(getattr(fnp, name))(Z[:3]), want)
        np.testing.assert_array_equal(ft.vmap(getattr(fnp, name))(Z[:3]), want)


def test_tracer_methods_give_the_parts():
    z = np.array([1 + 2j, -0.5 + 0.25j])
    np.testing.assert_array_equal(ft.jit(lambda z: z.real + z.imag)(z), z.real + z.imag)
    np.testing.assert_array_equal(ft.jit(lambda z: z.conj() * z.conjugate())(z), np.conj(z) ** 2)


def test_derivatives_for_complex_input_are_the_closed_forms():
    # f real: grad f = df/dx - i df/dy
    z = np.array([1 + 2j, -0.5 + 0.25j])
    x, y = z.real, z.imag
    grad = lambda f: ft.grad(lambda z: fnp.sum(f(z)))(z)
    np.testing.assert_array_equal(grad(fnp.real), np.ones(2, complex))
    np.testing.assert_array_equal(grad(fnp.imag), -1j * np.ones(2))
    np.testing.assert_allclose(grad(lambda z: fnp.real(z) * fnp.imag(z)), y - 1j * x)
    np.testing.assert_allclose(grad(lambda z: fnp.real(fnp.conj(z) * z)), 2 * x - 2j * y)
    # angle = atan2(y, x): d/dx = -y/r^2, d/dy = x/r^2
    np.testing.assert_allclose(grad(fnp.angle), (-y - 1j * x) / (x * x + y * y), rtol=1e-15)
    np.testing.assert_allclose(fnp.angle(z, deg=True), np.angle(z, deg=True), rtol=1e-15)


def test_derivatives_match_central_differences_to_second_order():
    # complex input (the pairing Re(conj(c) y) in reverse mode) and real input
    z = np.array([1 + 2j, -0.5 + 0.25j, -2.0 - 1.5j])
    for f in (fnp.angle, lambda w: fnp.real(w) * fnp.imag(w) ** 2,
              lambda w: fnp.conj(w) * w[::-1], lambda w: fnp.angle(w, deg=True) * fnp.real(w)):
        check_grads(f, (z,), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: fnp.angle(x + 0j * x) + fnp.real(x) ** 2, (z.real,), order=2)
