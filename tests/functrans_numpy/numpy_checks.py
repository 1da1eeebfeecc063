"""Checks shared by the tests of functrans.numpy functions: values, shapes and dtypes against
numpy (eager, under jit and under vmap), derivatives against JAX."""

import numpy as np
import pytest

import functrans as ft


def jax_x64():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def same_as_numpy(f, f_np, *args, vmap=True):
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


def derivatives_like_jax(f, f_jax, *args, argnums=0):
    """jacfwd, jacrev and a second derivative (jacfwd of jacrev) of f equal JAX's."""
    jax = jax_x64()
    for ft_t, jax_t in ((ft.jacrev, jax.jacrev), (ft.jacfwd, jax.jacfwd)):
        got = ft_t(f, argnums)(*args)
        want = jax_t(f_jax, argnums)(*args)
        for a, b in zip(ft.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
    got = ft.jacfwd(ft.jacrev(f, argnums), argnums)(*args)
    want = jax.jacfwd(jax.jacrev(f_jax, argnums), argnums)(*args)
    for a, b in zip(ft.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
