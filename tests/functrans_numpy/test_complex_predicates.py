"""iscomplexobj, isrealobj, iscomplex, isreal and real_if_close against numpy, traced and not,
and their derivatives (real_if_close's is real's or the identity's)."""

from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ConcretizationTypeError

VALUES = [np.array([1.0, -2.0]), np.array([1.0 + 2j, 3.0 + 0j]), np.array(2.5 + 0j),
          np.array([1.0 + 1e-20j, 2.0]), np.array([1, 2]), 3.0, 1j]


@pytest.mark.parametrize("x", VALUES, ids=repr)
def test_values_equal_numpy(x):
    for name in ("iscomplexobj", "isrealobj"):
        assert getattr(fnp, name)(x) == getattr(np, name)(x), name
    for name in ("iscomplex", "isreal"):
        np.testing.assert_array_equal(getattr(fnp, name)(x), getattr(np, name)(x))
    got, want = fnp.real_if_close(x), np.real_if_close(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_tol_in_machine_epsilons_or_absolute():
    x = np.array([1.0 + 1e-10j])
    for tol in (100, 1e6, 1e-9, 1e-11):
        assert fnp.real_if_close(x, tol).dtype == np.real_if_close(x, tol).dtype


def test_results_never_alias_the_input():
    x = np.array([1.0, 2.0])
    assert not np.shares_memory(fnp.real_if_close(x), x)


def test_traced_type_tests_are_static():
    def f(x):
        assert fnp.iscomplexobj(x) and not fnp.isrealobj(x)
        return fnp.real(fnp.sum(fnp.where(fnp.iscomplex(x), x * x, x)))
    z = np.array([1.0 + 1j, 2.0 + 0j])
    np.testing.assert_allclose(ft.jit(f)(z), f(z))
    # JAX's convention, df/dx - i df/dy: Re(z^2) gives 2z at z = 1 + i; Re(z) gives 1 at 2
    np.testing.assert_allclose(ft.grad(f)(z), [2 + 2j, 1.0])


def test_real_if_close_derivatives():
    z = np.array([2.0 + 1e-20j, -1.0 + 0j])
    g = ft.grad(lambda z: fnp.sum(fnp.real_if_close(z) ** 2))(z)
    np.testing.assert_allclose(g, 2 * z.real)            # through real: Re part only
    w = np.array([2.0 + 1j])
    g = ft.grad(lambda z: fnp.real(fnp.sum(fnp.real_if_close(z) ** 2)))(w)
    np.testing.assert_allclose(g, 2 * w)                 # the identity: Re(z^2) gives 2z
    with pytest.raises(ConcretizationTypeError, match="jit"):
        ft.jit(fnp.real_if_close)(w)
