"""`x[idx]`, `x.at[idx]` and take against numpy: a fixed table of index expressions and
hypothesis-drawn ones, eagerly and staged; gradients through indexing against closed forms and
finite differences; traced (vmapped) indices; JAX parity for out-of-range traced indices."""

import numpy as np
import pytest
from numpy_checks import derivatives_like_jax, jax_x64

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ConcretizationTypeError
from functrans.numpy._indexing import _IndexHelper, getitem
from functrans.test_util import check_grads
from functrans.tree_util import tree_unflatten

hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")


def same(actual, expected):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_array_equal(actual, expected)


def staged(f, *args):
    closed = ft.make_jaxpr(f)(*args)
    ft.check_jaxpr(closed)
    return tree_unflatten(closed.out_tree, closed(*args))


def at(x):
    """x.at for numpy arrays too (tracers have it as a property)."""
    return _IndexHelper(x)


def positions(shape, idx):
    """Flat positions numpy selects with x[idx]: the closed form of indexing's transpose."""
    return np.arange(int(np.prod(shape))).reshape(shape)[idx]


X = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
M = X[:, :, 0, 0] > 20  # a concrete (2, 3) mask

INDICES = [
    0, -1, 1, (0, 1), (1, -1, 2, -5), (Ellipsis,), (), Ellipsis, None, (None, None),
    slice(None), slice(1, None), slice(None, None, -1), (slice(None), slice(None, None, 2)),
    (slice(None), slice(-1, 0, -1)), (Ellipsis, slice(4, 0, -3)), (slice(5, 1), 0),
    (slice(-100, 100), slice(None, None, 7)), (0, Ellipsis, 1), (Ellipsis, None),
    (None, 0, Ellipsis, None, 2), (slice(None), None, 1),
    [0, 1, 0], np.array([1, -2]), ([[0], [1]],), (slice(None), [2, 0, 2, 1]),
    (slice(None), [0, 2], [1, 3]), ([0, 1], slice(None), [1, 2]), (0, slice(None), [1, 2]),
    (Ellipsis, [1, 0]), (slice(None), [0, 1], None, [0, 1]), (slice(None), [0, 1], Ellipsis, [3]),
    ([1, 0], [[0], [2]], slice(1, 3), [4, 0]), (np.array([], int),), ([],),
    (np.int64(1), np.array(2)), (1, [0, 2], Ellipsis, -1), (Ellipsis, [[1, 2], [0, 0]], 3),
    True, False, (0, True), (slice(None), [0, 1], True, [0, 1]), (None, False, Ellipsis),
    M, (M,), (M, 1), (slice(None), M[0] | True), (Ellipsis, X[0, 0, 0] > 2),
    (M, slice(None, None, -1)), (np.zeros(2, bool),), X > 50, (0, M[0], [1, 2]),
    # tuples inside the index tuple are sequences: x[(0, 1, 0), (2, 2, 1)]
    ((0, 1, 0), (2, 2, 1)), (slice(None), (0, 2), ((1,), (3,))),
]


@pytest.mark.parametrize("idx", INDICES, ids=lambda i: repr(i).replace(" ", "")[:40])
def test_getitem_matches_numpy(idx):
    expected = X[idx]
    same(getitem(X, idx), expected)
    same(staged(lambda x: x[idx], X), expected)


@pytest.mark.parametrize("idx", INDICES, ids=lambda i: repr(i).replace(" ", "")[:40])
def test_grad_through_getitem(idx):
    rng = np.random.default_rng(0)
    w = rng.standard_normal(np.shape(X[idx]))
    g = ft.grad(lambda x: fnp.sum(x[idx] * w))(X)
    pos = positions(X.shape, idx)
    expected = np.bincount(np.ravel(pos), np.ravel(w), minlength=X.size).reshape(X.shape)
    np.testing.assert_allclose(g, expected, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("idx", [(slice(None), [0, 2, 0]), (1, slice(None, None, -2)),
                                 ([1, 0], None, [2, 2]), (M, [[1], [3]])],
                         ids=lambda i: repr(i).replace(" ", "")[:40])
def test_getitem_derivatives_to_second_order(idx):
    x = np.random.default_rng(1).standard_normal(X.shape)
    check_grads(lambda x: x[idx] * x[idx], (x,), order=2)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex128])
def test_getitem_keeps_dtype(dtype):
    x = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    for idx in [(1,), (slice(None, None, -1), [0, 0]), (x.real > 0 if dtype != np.bool_ else x,)]:
        same(staged(lambda a: a[idx], x), x[idx])


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (0, 2, 1)])
def test_getitem_on_0d_and_empty(shape):
    x = np.zeros(shape)
    for idx in [(), Ellipsis, None, (Ellipsis, None), (None, Ellipsis, None)] + \
            ([slice(None), (slice(None, None, -1),), np.zeros(shape[0], bool), [], (0,)[:0]]
             if shape else [True, False]):
        same(staged(lambda a: a[idx], x), x[idx])
    if len(shape) > 1:
        same(staged(lambda a: a[:, []], x), x[:, []])


# --- hypothesis: random index expressions ----------------------------------------------------

@st.composite
def index_problem(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=4)))
    adv_shape = draw(st.sampled_from([(), (2,), (3,), (2, 1), (1, 3)]))
    entries, axis = [], 0
    while axis < len(shape) and draw(st.integers(0, 5)) > 0:
        d = shape[axis]
        kinds = ["slice", "none", "mask"] + (["int", "array", "array"] if d else ["emptyarray"])
        if axis + 1 < len(shape):
            kinds.append("mask2")
        kind = draw(st.sampled_from(kinds))
        if kind == "int":
            entries.append(draw(st.integers(-d, d - 1)))
        elif kind == "slice":
            bound = st.none() | st.integers(-d - 2, d + 2)
            step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2, -3]))
            entries.append(slice(draw(bound), draw(bound), step))
        elif kind == "none":
            entries.append(None)
            continue
        elif kind == "array":
            sh = draw(st.sampled_from([adv_shape, adv_shape[-1:], ()]))
            vals = draw(st.lists(st.integers(-d, d - 1), min_size=int(np.prod(sh)),
                                 max_size=int(np.prod(sh))))
            arr = np.array(vals, dtype=np.int64).reshape(sh)
            entries.append(arr.tolist() if draw(st.booleans()) and sh else arr)
        elif kind == "emptyarray":
            entries.append(np.zeros(0, np.int64))
        elif kind == "mask":
            entries.append(np.array(draw(st.lists(st.booleans(), min_size=d, max_size=d)),
                                    dtype=bool))
        else:  # a 2-d mask over this axis and the next
            n = d * shape[axis + 1]
            bits = draw(st.lists(st.booleans(), min_size=n, max_size=n))
            entries.append(np.array(bits, dtype=bool).reshape(d, shape[axis + 1]))
            axis += 1
        axis += 1
    if draw(st.booleans()):  # put an Ellipsis somewhere, standing for the axes skipped
        k = draw(st.integers(0, len(entries)))
        entries.insert(k, Ellipsis)
    idx = entries[0] if len(entries) == 1 and draw(st.booleans()) else tuple(entries)
    return shape, idx


@hypothesis.settings(max_examples=150, deadline=None, derandomize=True)
@hypothesis.given(index_problem())
def test_random_index_expressions_match_numpy(problem):
    shape, idx = problem
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    try:
        expected = x[idx]
    except IndexError:
        with pytest.raises(IndexError):
            staged(lambda a: a[idx], x)
        return
    same(getitem(x, idx), expected)
    same(staged(lambda a: a[idx], x), expected)
    w = np.cos(np.arange(expected.size)).reshape(expected.shape)
    g = ft.grad(lambda a: fnp.sum(a[idx] * w))(x)
    pos = positions(shape, idx)
    np.testing.assert_allclose(
        g, np.bincount(np.ravel(pos), np.ravel(w), minlength=x.size).reshape(shape))


# --- traced indices --------------------------------------------------------------------------

def test_traced_integer_index_is_one_gather():
    closed = ft.make_jaxpr(lambda x, i: x[i])(np.ones((4, 3)), np.array([0, 2]))
    assert [e.primitive.name for e in closed.eqns][-1] == "gather"
    assert "gather" in str(closed)


@pytest.mark.parametrize("i", [2, -1, -4, 3, 0])
def test_traced_scalar_index_wraps_negatives(i):
    x = np.arange(12.0).reshape(4, 3)
    same(staged(lambda x, i: x[i], x, np.int64(i)), x[i])
    same(staged(lambda x, i: x[:, i - 1], x, np.int64(i % 3)), x[:, i % 3 - 1])


def test_traced_index_from_argmax_like_computation():
    x = np.array([[3.0, 9.0, 1.0], [7.0, 2.0, 8.0]])

    def f(x):
        i = fnp.sum(fnp.asarray(x[:, 1] > 5.0).astype(np.int64))  # a traced int
        return x[i, ::-1]
    same(staged(f, x), x[1, ::-1])
    g = ft.grad(lambda x: fnp.sum(f(x) * np.array([1.0, 2.0, 3.0])))(x)
    np.testing.assert_array_equal(g, [[0, 0, 0], [3, 2, 1]])


@pytest.mark.parametrize("idx_fn,shape", [
    (lambda x, i: x[i], (3,)),
    (lambda x, i: x[i, ::-1], (2, 2)),
    (lambda x, i: x[:, i], (2,)),
    (lambda x, i: x[i, i], ()),
    (lambda x, i: x[i, [0, 2]], (2,)),
    (lambda x, i: x[[1, 0], :, i], (1, 2)),
    (lambda x, i: x[None, ..., i], (2,)),
])
def test_vmap_over_index_operand_and_both(idx_fn, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 3))
    idx = rng.integers(-3, 3, (5, *shape))
    xs = rng.standard_normal((5, 3, 4, 3))
    out = ft.vmap(idx_fn, in_axes=(None, 0))(x, idx)  # only the index batched
    same(out, np.stack([idx_fn(x, i) for i in idx]))
    out = ft.vmap(idx_fn)(xs, idx)  # operand and index batched
    same(out, np.stack([idx_fn(a, i) for a, i in zip(xs, idx)]))
    out = ft.vmap(idx_fn, in_axes=(0, None))(xs, idx[0])  # only the operand
    same(out, np.stack([idx_fn(a, idx[0]) for a in xs]))


def test_out_of_range_traced_indices_clamp_like_jax():
    jnp = pytest.importorskip("jax.numpy")
    x = np.arange(20.0).reshape(4, 5)
    i = np.array([-7, -5, -1, 0, 3, 4, 9])
    j = np.array([6, -9, 2, -1, 5, 0, 4])
    for f in [lambda x, i, j: x[i], lambda x, i, j: x[i, j], lambda x, i, j: x[1:, j],
              lambda x, i, j: x[i, 1:, None][:, ::-1]]:
        expected = np.asarray(f(jnp.asarray(x), jnp.asarray(i), jnp.asarray(j)), np.float64)
        same(staged(f, x, i, j), expected)  # (jax computes in float32: values are exact)


def test_concrete_out_of_range_index_raises_like_numpy():
    x = np.ones((3, 4))
    for idx in [3, (0, -5), ([0, 3],), (slice(None), [4]), (1, [[0], [-5]])]:
        with pytest.raises(IndexError, match="out of bounds"):
            staged(lambda a: a[idx], x)


@pytest.mark.parametrize("idx,phrase", [
    ((0, 0, 0), "too many indices"),
    ((Ellipsis, 0, Ellipsis), "single ellipsis"),
    (1.5, "valid indices"),
    ("a", "valid indices"),
    (np.array([1.0]), "astype(int)"),
    (([0, 1], [0, 1, 2]), "could not be broadcast"),
    (np.ones((2, 4), bool), "does not match"),
    (np.ones(2, bool), "does not match"),
    (((slice(None),), 0), "valid indices"),
])
def test_bad_indices_raise_index_error(idx, phrase):
    with pytest.raises(IndexError) as info:
        staged(lambda a: a[idx], np.ones((3, 4)))
    assert phrase in str(info.value)
    with pytest.raises(IndexError):
        np.ones((3, 4))[idx]


def test_traced_boolean_mask_raises_with_the_fix():
    with pytest.raises(ConcretizationTypeError) as info:
        ft.make_jaxpr(lambda x: x[x > 0])(np.ones((2, 3)))
    msg = str(info.value)
    assert "bool[2,3]" in msg and "where" in msg


def test_boolean_mask_of_an_eager_jvp_value_is_concrete():
    x = np.array([1.0, -2.0, 3.0])
    g = ft.grad(lambda x: fnp.sum(x[x > 0] * x[x > 0]))(x)
    np.testing.assert_array_equal(g, [2.0, 0.0, 6.0])


# --- take ------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", [None, "clip", "wrap"])
def test_take(axis, mode):
    x = np.arange(12.0).reshape(3, 4)
    i = np.array([[0, -1], [2, 1]]) if mode is None else np.array([5, -7, 2])
    kw = {} if mode is None else {"mode": mode}
    expected = np.take(x, i, axis=axis, **kw)
    same(fnp.take(x, i, axis=axis, **kw), expected)
    same(staged(lambda x: fnp.take(x, i, axis=axis, **kw), x), expected)
    if mode is None:
        same(staged(lambda x, i: fnp.take(x, i, axis=axis), x, i), expected)
        same(staged(lambda x, i: x.take(i, axis), x, i), expected)


@pytest.mark.parametrize("axis,ishape", [(0, (2, 4)), (1, (3, 1)), (-1, (3, 6)), (None, (5,)),
                                         (1, (1, 2))])
def test_take_along_axis(axis, ishape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    n = x.size if axis is None else x.shape[axis]
    i = rng.integers(-n, n, ishape)
    expected = np.take_along_axis(x, i, axis)
    same(fnp.take_along_axis(x, i, axis), expected)
    same(staged(lambda x, i: fnp.take_along_axis(x, i, axis), x, i), expected)
    w = rng.standard_normal(expected.shape)
    g = ft.grad(lambda x: fnp.sum(fnp.take_along_axis(x, i, axis) * w))(x)
    full = np.zeros(x.size)
    np.add.at(full, np.take_along_axis(np.arange(x.size).reshape(x.shape), i, axis).ravel(),
              w.ravel())
    np.testing.assert_allclose(g, full.reshape(x.shape), rtol=1e-14)


# --- functional updates: x.at[idx] -----------------------------------------------------------

UPDATES = [
    (1, 5.0), ((0, slice(None, None, 2)), np.array([1.0, 2.0])), (slice(None), 7.0),
    ([0, 0, 2], np.array([[1.0], [2.0], [3.0]])), ((slice(None), [1, 1, 3]), 4.0),
    (np.array([[True, False, True, False]] * 3), np.arange(6.0)), ((Ellipsis, -1), -1.0),
    ((None, 1), np.ones((1, 4))), (([2, 0], [1, 1]), np.array([8.0, 9.0])),
    ((slice(None), [0, 0]), np.array([[1.0, 2.0]] * 3)),
]


@pytest.mark.parametrize("idx,v", UPDATES, ids=lambda a: repr(a).replace(" ", "")[:30])
def test_at_set_add_get_match_numpy(idx, v):
    x = np.arange(12.0).reshape(3, 4)
    expected_set = x.copy()
    expected_set[idx] = v
    expected_add = x.copy()
    np.add.at(expected_add, idx, np.broadcast_to(v, x[idx].shape) if np.ndim(v) else v)
    same(at(x)[idx].set(v), expected_set)
    same(staged(lambda a: a.at[idx].set(v), x), expected_set)
    same(staged(lambda a, b: a.at[idx].set(b), x, np.asarray(v)), expected_set)
    same(at(x)[idx].add(v), expected_add)
    same(staged(lambda a, b: a.at[idx].add(b), x, np.asarray(v)), expected_add)
    same(staged(lambda a: a.at[idx].subtract(v), x), 2 * x - expected_add)
    same(staged(lambda a: a.at[idx].get(), x), x[idx])


@pytest.mark.parametrize("idx,v", UPDATES[:6], ids=lambda a: repr(a).replace(" ", "")[:30])
def test_at_updates_are_differentiable(idx, v):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    v = rng.standard_normal(np.shape(v))
    check_grads(lambda a, b: at(a)[idx].set(b * a[0, 0]), (x, v), order=2)
    check_grads(lambda a, b: at(a)[idx].add(b * b), (x, v), order=2)


def test_at_with_traced_indices():
    x = np.arange(6.0)
    i = np.array([4, -1, 1])
    expected_add = x.copy()
    np.add.at(expected_add, i, 10.0)
    same(staged(lambda a, i: a.at[i].add(10.0), x, i), expected_add)
    expected_set = x.copy()
    expected_set[i] = np.array([7.0, 8.0, 9.0])
    same(staged(lambda a, i: a.at[i].set(np.array([7.0, 8.0, 9.0])), x, i), expected_set)
    # repeated traced indices writing one value: exact
    same(staged(lambda a, i: a.at[i].set(3.0), x, np.array([2, 2, 0])),
         np.array([3.0, 1.0, 3.0, 3.0, 4.0, 5.0]))
    # integer operands
    xi = np.arange(6)
    expected = xi.copy()
    expected[[1, 1, 3]] = 9
    same(staged(lambda a, i: a.at[i].set(9), xi, np.array([1, 1, 3])), expected)
    ft.vmap(lambda a, i: a.at[i].add(1.0))(np.zeros((2, 3)), np.array([0, 2]))
    same(ft.vmap(lambda a, i: a.at[i].add(1.0))(np.zeros((2, 3)), np.array([0, 2])),
         np.array([[1.0, 0, 0], [0, 0, 1.0]]))


def test_at_last_concrete_duplicate_wins_and_gets_the_gradient():
    x = np.zeros(3)
    v = np.array([1.0, 2.0, 3.0])
    same(at(x)[[1, 1, 1]].set(v), np.array([0.0, 3.0, 0.0]))
    g = ft.grad(lambda v: fnp.sum(at(x)[[1, 1, 1]].set(v)))(v)
    np.testing.assert_array_equal(g, [0.0, 0.0, 1.0])


def test_at_rejects_updates_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"\(3,\)"):
        at(np.zeros((2, 4)))[0].set(np.ones(3))


_AT_METHODS = ["multiply", "divide", "power", "min", "max"]


@pytest.mark.parametrize("method", _AT_METHODS)
def test_at_methods_match_jax_with_repeated_concrete_and_traced_indices(method):
    jnp = jax_x64().numpy
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    i = np.array([1, 3, 1, 0, -1])
    v = np.array([2.0, 3.0, 5.0, 0.5, 1.5])
    want = getattr(jnp.asarray(x).at[i], method)(v)
    for f in (lambda x, v: getattr(x.at[i], method)(v),
              lambda x, v: getattr(x.at[fnp.asarray(i) + 0], method)(v)):   # traced indices
        np.testing.assert_allclose(ft.jit(f)(x, v), want, rtol=1e-14)
        np.testing.assert_allclose(ft.vmap(f, in_axes=(None, 0))(x, np.stack([v, v])),
                                   np.stack([want, want]), rtol=1e-14)
    # 2-d operand with a slice index, integer dtype
    xi = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(
        ft.jit(lambda x: getattr(x.at[1:, ::2], method)(2))(xi),
        getattr(jnp.asarray(xi).at[1:, ::2], method)(2))


@pytest.mark.parametrize("method", _AT_METHODS)
def test_at_method_derivatives_match_jax(method):
    jnp = jax_x64().numpy
    x = np.array([2.0, 0.5, 3.0, 4.0])
    iu = np.array([0, 2, 3])
    v = np.array([2.0, 1.5, 0.5])
    kw = dict(unique_indices=True) if method in ("multiply", "divide", "power") else {}
    derivatives_like_jax(lambda x, v: getattr(x.at[iu], method)(v),
                          lambda x, v: getattr(jnp.asarray(x).at[iu], method)(v, **kw),
                          x, v, argnums=(0, 1))


@pytest.mark.parametrize("method", ["min", "max"])
def test_at_min_max_share_the_derivative_at_ties_like_jax(method):
    jnp = jax_x64().numpy
    x = np.array([2.0, 2.0, 3.0, 4.0])
    i = np.array([0, 0, 1, 2])
    v = np.array([2.0, 2.0, 2.0, 3.0])
    derivatives_like_jax(lambda x, v: getattr(x.at[i], method)(v),
                          lambda x, v: getattr(jnp.asarray(x).at[i], method)(v),
                          x, v, argnums=(0, 1))
    derivatives_like_jax(lambda x, v: getattr(x.at[fnp.asarray(i) + 0], method)(v),
                          lambda x, v: getattr(jnp.asarray(x).at[i], method)(v),
                          x, v, argnums=(0, 1))


def test_at_multiply_with_repeated_indices_matches_finite_differences():
    # JAX refuses this derivative (scatter_mul needs unique indices); the product rule holds
    i = np.array([1, 1, 0])
    args = [np.array([1.5, -2.0, 3.0]), np.array([0.5, 2.0, -1.0])]
    check_grads(lambda x, v: _IndexHelper(x)[i].multiply(v), args, order=2, modes=("fwd", "rev"))
