"""fnp.pad against numpy (values, dtypes; eager, jit, vmap) and JAX (derivatives)."""

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


_WIDTHS = [1, (1, 2), ((0, 2), (2, 1)), ((2, 0), (3, 0)), ((0, 0), (0, 0))]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", _WIDTHS, ids=str)
def test_pad_matches_numpy_and_jax(mode, width):
    a = np.arange(12.0).reshape(3, 4) ** 1.5
    _same_as_numpy(lambda x: fnp.pad(x, width, mode=mode), lambda x: np.pad(x, width, mode=mode),
                   a, vmap=False)
    if np.ndim(width) < 2:  # a 1-d operand takes a scalar or one pair
        _same_as_numpy(lambda x: fnp.pad(x, width, mode=mode),
                       lambda x: np.pad(x, width, mode=mode), np.arange(4), vmap=False)
    jnp = _jax().numpy
    _derivatives_like_jax(lambda x: fnp.pad(x, width, mode=mode) ** 2,
                          lambda x: jnp.pad(x, width, mode=mode) ** 2, a)
    got = ft.vmap(lambda x: fnp.pad(x, 2, mode=mode))(a)
    np.testing.assert_array_equal(got, np.stack([np.pad(r, 2, mode=mode) for r in a]))


def test_pad_constant_values():
    a = np.arange(6.0).reshape(2, 3)
    for cv in (1.5, (1, 2), ((1, 2), (3, 4))):
        _same_as_numpy(lambda x: fnp.pad(x, ((1, 2), (2, 1)), constant_values=cv),
                       lambda x: np.pad(x, ((1, 2), (2, 1)), constant_values=cv), a,
                       vmap=False)
    _same_as_numpy(lambda x: fnp.pad(x, 2, constant_values=1.7),
                   lambda x: np.pad(x, 2, constant_values=1.7), np.arange(3))   # cast to int
    jnp = _jax().numpy
    _derivatives_like_jax(lambda x, c: fnp.pad(x, (1, 2), constant_values=c) ** 2,
                          lambda x, c: jnp.pad(x, (1, 2), constant_values=c) ** 2,
                          a, 0.5, argnums=(0, 1))


def test_pad_errors_name_the_argument():
    a = np.arange(3.0)
    with pytest.raises(NotImplementedError, match="mode='mean'"):
        fnp.pad(a, 1, mode="mean")
    with pytest.raises(NotImplementedError, match="larger than"):
        fnp.pad(a, 3, mode="reflect")
    with pytest.raises(ValueError, match="non-negative"):
        fnp.pad(a, -1)
    with pytest.raises(ValueError, match="pad_width"):
        fnp.pad(a, ((1, 2, 3),))
    with pytest.raises(TypeError, match="pad_width must be concrete"):
        ft.jit(lambda w: fnp.pad(a, w))(1)
    with pytest.raises(TypeError, match="reflect_type|unsupported keyword"):
        fnp.pad(a, 1, mode="edge", constant_values=2)
