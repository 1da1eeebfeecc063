"""fnp.sort, argsort (against numpy and JAX, ties and NaN included) and nonzero, flatnonzero,
argwhere, where(condition) (concrete values, or a static size= under jit)."""

import numpy as np
import pytest
from numpy_checks import derivatives_like_jax, jax_x64, same_as_numpy

import functrans as ft
import functrans.numpy as fnp

_A = np.array([[3.0, 1.0, np.nan, 1.0, -2.0, 0.5], [2.0, 2.0, -1.0, 5.0, 0.0, 2.0]])


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_and_argsort_match_numpy(axis):
    same_as_numpy(lambda x: fnp.sort(x, axis=axis), lambda x: np.sort(x, axis=axis), _A,
                   vmap=axis is not None)
    same_as_numpy(lambda x: fnp.argsort(x, axis=axis),
                   lambda x: np.argsort(x, axis=axis, kind="stable"), _A, vmap=axis is not None)
    ints = np.array([[3, 1, 1, 2], [0, 0, -1, 7]], np.int32)
    same_as_numpy(lambda x: fnp.sort(x, axis=axis), lambda x: np.sort(x, axis=axis), ints,
                   vmap=False)
    assert fnp.argsort(ints).dtype == np.int64


@pytest.mark.parametrize("axis", [-1, 0])
def test_descending_and_derivatives_at_ties_match_jax(axis):
    jnp = jax_x64().numpy
    x = np.array([[3.0, 1.0, 2.0, 1.0], [2.0, 2.0, -1.0, 5.0]])
    for d in (False, True):
        np.testing.assert_array_equal(fnp.argsort(x, axis=axis, descending=d),
                                      jnp.argsort(x, axis=axis, descending=d))
        np.testing.assert_array_equal(fnp.sort(x, axis=axis, descending=d),
                                      jnp.sort(x, axis=axis, descending=d))
        derivatives_like_jax(lambda v: fnp.sort(v, axis=axis, descending=d) ** 3,
                              lambda v: jnp.sort(v, axis=axis, descending=d) ** 3, x)
    # argsort is integer: no derivative, and taking along it carries the tangents
    np.testing.assert_allclose(
        ft.grad(lambda v: fnp.sum(fnp.take_along_axis(v, fnp.argsort(v), -1)
                                  * np.arange(4.0)))(x[0]),
        [3.0, 0.0, 2.0, 1.0])


def test_sort_methods_and_errors():
    x = np.array([2.0, -1.0, 0.5])
    assert ft.jit(lambda v: v.sort())(x).tolist() == [-1.0, 0.5, 2.0]
    assert ft.jit(lambda v: v.argsort())(x).tolist() == [1, 2, 0]
    with pytest.raises(NotImplementedError, match="order="):
        fnp.sort(x, order="f")
    with pytest.raises(ValueError, match="axis=None"):
        fnp.sort(np.float64(1.0))


def test_nonzero_argwhere_where_on_concrete_values_match_numpy():
    m = _A > 0.7
    for got, want in ((fnp.nonzero(m), np.nonzero(m)), (fnp.where(m), np.where(m)),
                      ((fnp.argwhere(m),), (np.argwhere(m),)),
                      ((fnp.flatnonzero(_A),), (np.flatnonzero(_A),)),
                      ((fnp.argwhere(np.float64(2.0)),), (np.argwhere(np.float64(2.0)),))):
        for a, b in zip(got, want):
            assert (a.shape, a.dtype) == (b.shape, b.dtype)
            np.testing.assert_array_equal(a, b)
    # a concrete value under grad (eager) is fine
    ft.grad(lambda v: fnp.sum(v[fnp.nonzero(v > 0)]))(np.array([1.0, -1.0]))


def test_nonzero_under_jit_needs_size_and_then_matches_jax():
    jnp = jax_x64().numpy
    m = _A > 0.7
    for f in (fnp.nonzero, fnp.argwhere, fnp.flatnonzero, fnp.where):
        with pytest.raises(TypeError, match="size="):
            ft.jit(f)(m)
    for size, fill in ((3, None), (9, -1), (9, (5, 7))):
        got = ft.jit(lambda c: fnp.nonzero(c, size=size, fill_value=fill))(m)
        want = jnp.nonzero(m, size=size, fill_value=fill)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(fnp.nonzero(m, size=size, fill_value=fill)[1], want[1])
    got = ft.jit(lambda v: fnp.argwhere(v, size=4))(_A)
    np.testing.assert_array_equal(got, jnp.argwhere(_A, size=4))
    got = ft.vmap(lambda v: fnp.flatnonzero(v, size=4, fill_value=-1))(_A)
    np.testing.assert_array_equal(got, np.stack([jnp.flatnonzero(r, size=4, fill_value=-1)
                                                 for r in _A]))
