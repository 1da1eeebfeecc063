"""fnp.sort, argsort (against numpy and JAX, ties and NaN included) and nonzero, flatnonzero,
argwhere, where(condition) (concrete values, or a static size= under jit)."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp


# --- helpers for the functions added from the jax.numpy probe --------------------------------

def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _same_as_numpy(f, f_np, *args, vmap=True):
    """f eager, under jit and under vmap (over a stack of two argument sets) gives numpy's
    values, shape and dtype."""
    want = f_np(*args)
    for g in (f, ft.jit(f)):
        got = g(*args)
        for a, b in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
            a, b = np.asarray(a), np.asarray(b)
            assert (a.shape, a.dtype) == (b.shape, b.dtype), (a, b)
            np.testing.assert_allclose(a, b, rtol=1e-14, atol=0)
    if vmap:
        twice = [np.stack([a, a[::-1] if np.ndim(a) else a]) for a in args]
        got = ft.tree_util.tree_leaves(ft.vmap(f)(*twice))
        each = [ft.tree_util.tree_leaves(f_np(*[t[k] for t in twice])) for k in range(2)]
        for i, a in enumerate(got):
            b = np.stack([np.asarray(e[i]) for e in each])
            assert (a.shape, a.dtype) == (b.shape, b.dtype), (a, b)
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def _derivatives_like_jax(f, f_jax, *args, argnums=0):
    """jacfwd, jacrev and a second derivative (jacfwd of jacrev) of f equal JAX's."""
    jax = _jax()
    for ft_t, jax_t in ((ft.jacrev, jax.jacrev), (ft.jacfwd, jax.jacfwd)):
        got = ft_t(f, argnums)(*args)
        want = jax_t(f_jax, argnums)(*args)
        for a, b in zip(ft.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
    got = ft.jacfwd(ft.jacrev(f, argnums), argnums)(*args)
    want = jax.jacfwd(jax.jacrev(f_jax, argnums), argnums)(*args)
    for a, b in zip(ft.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)


_A = np.array([[3.0, 1.0, np.nan, 1.0, -2.0, 0.5], [2.0, 2.0, -1.0, 5.0, 0.0, 2.0]])


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_and_argsort_match_numpy(axis):
    _same_as_numpy(lambda x: fnp.sort(x, axis=axis), lambda x: np.sort(x, axis=axis), _A,
                   vmap=axis is not None)
    _same_as_numpy(lambda x: fnp.argsort(x, axis=axis),
                   lambda x: np.argsort(x, axis=axis, kind="stable"), _A, vmap=axis is not None)
    ints = np.array([[3, 1, 1, 2], [0, 0, -1, 7]], np.int32)
    _same_as_numpy(lambda x: fnp.sort(x, axis=axis), lambda x: np.sort(x, axis=axis), ints,
                   vmap=False)
    assert fnp.argsort(ints).dtype == np.int64


@pytest.mark.parametrize("axis", [-1, 0])
def test_descending_and_derivatives_at_ties_match_jax(axis):
    jnp = _jax().numpy
    x = np.array([[3.0, 1.0, 2.0, 1.0], [2.0, 2.0, -1.0, 5.0]])
    for d in (False, True):
        np.testing.assert_array_equal(fnp.argsort(x, axis=axis, descending=d),
                                      jnp.argsort(x, axis=axis, descending=d))
        np.testing.assert_array_equal(fnp.sort(x, axis=axis, descending=d),
                                      jnp.sort(x, axis=axis, descending=d))
        _derivatives_like_jax(lambda v: fnp.sort(v, axis=axis, descending=d) ** 3,
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
    jnp = _jax().numpy
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
