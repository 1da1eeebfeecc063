"""ravel_pytree: round trips, dtypes, and use inside transforms."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ShapeError
from functrans.flatten_util import ravel_pytree
from functrans.tree_util import tree_leaves, tree_structure


def test_round_trip_and_order():
    tree = {"b": np.arange(3.0), "a": [np.ones((2, 2)), (np.array(5.0),)]}
    flat, unravel = ravel_pytree(tree)
    # dict keys sorted, as tree_flatten orders them
    np.testing.assert_array_equal(flat, [1, 1, 1, 1, 5, 0, 1, 2])
    back = unravel(flat)
    assert tree_structure(back) == tree_structure(tree)
    for x, y in zip(tree_leaves(back), tree_leaves(tree)):
        np.testing.assert_array_equal(x, y)
        assert np.shape(x) == np.shape(y)


def test_mixed_dtypes_promote_and_come_back():
    tree = (np.ones(2, np.float32), np.arange(2, dtype=np.float64))
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float64
    back = unravel(flat + 0.5)
    assert back[0].dtype == np.float32 and back[1].dtype == np.float64
    np.testing.assert_array_equal(back[1], [0.5, 1.5])


def test_empty_tree_and_wrong_length():
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and unravel(flat) == {}
    _, unravel = ravel_pytree([np.ones(3)])
    with pytest.raises(ShapeError, match=r"\(3,\)"):
        unravel(np.ones(4))


def test_inside_grad_and_vmap():
    tree = {"w": np.array([[1.0, 2.0], [3.0, 4.0]]), "b": np.array([0.5, -1.0])}

    def f(t):
        flat, _ = ravel_pytree(t)
        return fnp.sum(flat * flat * flat)

    g = ft.grad(f)(tree)
    for k in tree:
        np.testing.assert_allclose(g[k], 3 * tree[k] ** 2)
    _, unravel = ravel_pytree(tree)
    vecs = np.arange(12.0).reshape(2, 6)
    out = ft.vmap(lambda v: unravel(v)["w"].sum())(vecs)
    # leaves in key order: b (entries 0-1), then w (entries 2-5)
    np.testing.assert_allclose(out, [2 + 3 + 4 + 5, 8 + 9 + 10 + 11])
