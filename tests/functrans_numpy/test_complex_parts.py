"""fnp.real, fnp.imag, fnp.conj / conjugate: numpy's values for complex and real input, copies
never aliasing the caller's array, and JAX's derivatives for real input (real and conj the
identity, imag zero). Complex input is value level except real (a conversion, as lax's)."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import DTypeError

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


def test_traced_complex_parts_name_the_fix():
    for name in ("imag", "conj"):
        with pytest.raises(DTypeError, match="outside the transformed function"):
            ft.jit(getattr(fnp, name))(Z)
