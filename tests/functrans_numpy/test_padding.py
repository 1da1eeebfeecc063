"""fnp.pad against numpy (values, dtypes; eager, jit, vmap) and JAX (derivatives)."""

import numpy as np
import pytest
from numpy_checks import derivatives_like_jax, jax_x64, same_as_numpy

import functrans as ft
import functrans.numpy as fnp

_WIDTHS = [1, (1, 2), ((0, 2), (2, 1)), ((2, 0), (3, 0)), ((0, 0), (0, 0))]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", _WIDTHS, ids=str)
def test_pad_matches_numpy_and_jax(mode, width):
    a = np.arange(12.0).reshape(3, 4) ** 1.5
    same_as_numpy(lambda x: fnp.pad(x, width, mode=mode), lambda x: np.pad(x, width, mode=mode),
                   a, vmap=False)
    if np.ndim(width) < 2:  # a 1-d operand takes a scalar or one pair
        same_as_numpy(lambda x: fnp.pad(x, width, mode=mode),
                       lambda x: np.pad(x, width, mode=mode), np.arange(4), vmap=False)
    jnp = jax_x64().numpy
    derivatives_like_jax(lambda x: fnp.pad(x, width, mode=mode) ** 2,
                          lambda x: jnp.pad(x, width, mode=mode) ** 2, a)
    got = ft.vmap(lambda x: fnp.pad(x, 2, mode=mode))(a)
    np.testing.assert_array_equal(got, np.stack([np.pad(r, 2, mode=mode) for r in a]))


def test_pad_constant_values():
    a = np.arange(6.0).reshape(2, 3)
    for cv in (1.5, (1, 2), ((1, 2), (3, 4))):
        same_as_numpy(lambda x: fnp.pad(x, ((1, 2), (2, 1)), constant_values=cv),
                       lambda x: np.pad(x, ((1, 2), (2, 1)), constant_values=cv), a,
                       vmap=False)
    same_as_numpy(lambda x: fnp.pad(x, 2, constant_values=1.7),
                   lambda x: np.pad(x, 2, constant_values=1.7), np.arange(3))   # cast to int
    jnp = jax_x64().numpy
    derivatives_like_jax(lambda x, c: fnp.pad(x, (1, 2), constant_values=c) ** 2,
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
