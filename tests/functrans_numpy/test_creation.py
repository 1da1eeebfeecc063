"""functrans.numpy creation functions against numpy: values, shapes and dtypes, eagerly and
staged (make_jaxpr + check_jaxpr + eval_jaxpr)."""

import numpy as np
import pytest
from numpy_checks import derivatives_like_jax, jax_x64, same_as_numpy

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ConcretizationTypeError
from functrans.test_util import check_grads


def same(actual, expected):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    np.testing.assert_allclose(actual, expected, rtol=1e-14, atol=1e-14)


def staged(f, *args):
    closed = ft.make_jaxpr(f)(*args)
    ft.check_jaxpr(closed)
    return ft.tree_util.tree_unflatten(closed.out_tree, closed(*args))


DTYPES = [None, np.float32, np.int32, np.bool_, np.complex128, "int64", float, int]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), 0, 3, (2, 0), (2, 3), [1, 2, 1]])
@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_constant_fillers(name, shape, dtype):
    out = getattr(fnp, name)(shape, dtype)
    expected = getattr(np, name)(shape, dtype)
    assert isinstance(out, np.ndarray)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    if name != "empty":
        same(out, expected)


@pytest.mark.parametrize("dtype", [None, np.float32, np.int8, bool])
@pytest.mark.parametrize("fill", [0, 2.5, True, -3])
def test_full(fill, dtype):
    same(fnp.full((2, 3), fill, dtype), np.full((2, 3), fill, dtype))
    same(fnp.full(4, fill, dtype), np.full(4, fill, dtype))


def test_full_with_traced_fill_value_is_differentiable():
    out = staged(lambda v: fnp.full((2, 3), v), np.float32(1.5))
    same(out, np.full((2, 3), 1.5, np.float32))
    assert float(ft.grad(lambda v: fnp.sum(fnp.full((2, 3), v)))(1.5)) == 6.0


LIKE_INPUTS = [np.zeros(()), np.ones((2, 3), np.float32), np.arange(4, dtype=np.int16),
               np.zeros((0, 2), bool)]


@pytest.mark.parametrize("a", LIKE_INPUTS, ids=lambda a: f"{a.dtype}{list(a.shape)}")
@pytest.mark.parametrize("kw", [{}, {"dtype": np.float64}, {"shape": (3, 1)},
                                {"dtype": np.int32, "shape": 2}])
def test_like_functions_eager_and_on_tracers(a, kw):
    for name, args in [("zeros_like", ()), ("ones_like", ()), ("full_like", (7,)),
                       ("empty_like", ())]:
        expected = getattr(np, name)(a, *args, **kw)
        fn = getattr(fnp, name)
        if name != "empty_like":
            same(fn(a, *args, **kw), expected)
            same(staged(lambda x: fn(x, *args, **kw), a), expected)
        out = staged(lambda x: fn(x, *args, **kw), a)
        assert out.shape == expected.shape and out.dtype == expected.dtype


def test_zeros_like_of_a_tracer_is_a_broadcast_constant():
    closed = ft.make_jaxpr(lambda x: fnp.zeros_like(x))(np.ones((2, 3)))
    assert [e.primitive.name for e in closed.eqns] == ["broadcast_in_dim"]
    # under eager jvp the result is concrete
    out, t = ft.jvp(lambda x: x + fnp.ones_like(x), (np.ones(2),), (np.ones(2),))
    same(np.asarray(out), np.full(2, 2.0))
    same(np.asarray(t), np.ones(2))


@pytest.mark.parametrize("args,kw", [
    ((5,), {}), ((2, 7), {}), ((1, 2, 0.25), {}), ((5, 0, -1), {}), ((3,), {"dtype": float}),
    ((0,), {}), ((1.5, 4), {}), ((2, 10, 3), {"dtype": np.int8}), ((np.int32(4),), {}),
])
def test_arange(args, kw):
    same(fnp.arange(*args, **kw), np.arange(*args, **kw))


def test_arange_rejects_traced_bounds():
    with pytest.raises(ConcretizationTypeError, match="static"):
        ft.make_jaxpr(lambda n: fnp.arange(n))(np.int64(3))


LINSPACE = [
    ((0, 1), {}), ((0, 1, 5), {}), ((2, -3, 4), {"endpoint": False}), ((0, 1, 1), {}),
    ((0, 1, 0), {}), ((1, 2, 1), {"endpoint": False}), ((0, 10, 6), {"retstep": True}),
    ((0, 10, 6), {"dtype": np.int32}), ((0, 1, 3), {"dtype": np.float32}),
    ((np.array([0.0, 1.0]), np.array([1.0, 3.0]), 4), {}),
    ((np.array([0.0, 1.0]), 5.0, 3), {"axis": 1}),
    ((np.zeros((2, 1)), np.ones(3), 3), {"axis": -1, "retstep": True}),
]


@pytest.mark.parametrize("args,kw", LINSPACE)
def test_linspace_matches_numpy(args, kw):
    expected = np.linspace(*args, **kw)
    out = fnp.linspace(*args, **kw)
    if kw.get("retstep"):
        same(out[0], expected[0])
        np.testing.assert_allclose(out[1], expected[1])
    else:
        same(out, expected)


@pytest.mark.parametrize("args,kw", LINSPACE[1:])
def test_linspace_with_traced_endpoints(args, kw):
    start, stop, *rest = args
    start, stop = np.asarray(start, np.float64), np.asarray(stop, np.float64)
    expected = np.linspace(start, stop, *rest, **kw)
    out = staged(lambda a, b: fnp.linspace(a, b, *rest, **kw), start, stop)
    if kw.get("retstep"):
        np.testing.assert_allclose(out[0], expected[0], rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(out[1], expected[1], rtol=1e-14)
    else:
        np.testing.assert_allclose(out, expected, rtol=1e-14, atol=1e-14)
        assert np.asarray(out).dtype == expected.dtype


def test_linspace_is_differentiable_in_its_endpoints():
    def f(a, b):
        return fnp.linspace(a, b, 5) * fnp.linspace(b, a, 5, endpoint=False)
    check_grads(f, (np.asarray(0.3), np.asarray(-1.2)), order=2)
    # d/da sum(linspace(a, b, 5)) = sum(1 - t_k) with t_k = k/4
    g = ft.grad(lambda a: fnp.sum(fnp.linspace(a, 2.0, 5)))(0.0)
    assert np.isclose(float(g), 2.5)


@pytest.mark.parametrize("N,M,k", [(3, None, 0), (3, 4, 1), (4, 2, -1), (0, None, 0),
                                   (3, 3, 5), (2, 5, -3)])
@pytest.mark.parametrize("dtype", [float, np.int32, bool])
def test_eye_and_identity(N, M, k, dtype):
    same(fnp.eye(N, M, k, dtype), np.eye(N, M, k, dtype))
    same(fnp.eye(N, M, k=k, dtype=dtype), np.eye(N, M, k=k, dtype=dtype))
    same(fnp.identity(N, dtype), np.identity(N, dtype))
    same(fnp.eye(N), np.eye(N))


@pytest.mark.parametrize("obj", [3, 2.5, [1, 2], [[1.0, 2.0], [3.0, 4.0]], (True, False),
                                 np.arange(6).reshape(2, 3), [], 1 + 2j])
@pytest.mark.parametrize("dtype", [None, np.float32, np.int64])
def test_array_and_asarray(obj, dtype):
    if dtype is not None and isinstance(obj, complex):
        return
    same(fnp.array(obj, dtype), np.array(obj, dtype))
    same(fnp.asarray(obj, dtype), np.asarray(obj, dtype))
    same(fnp.array(obj, dtype, ndmin=3), np.array(obj, dtype, ndmin=3))


def test_array_copies_and_asarray_does_not():
    a = np.arange(3.0)
    assert not np.shares_memory(fnp.array(a), a)
    b = fnp.asarray(a)  # numpy's asarray makes no copy: an Array view of the same memory
    assert np.shares_memory(b, a) and isinstance(b, fnp.ndarray)
    assert fnp.asarray(b) is b and not np.shares_memory(fnp.array(b), b)


def test_array_of_a_list_of_tracers_stacks_them():
    def f(x, y):
        return fnp.array([[x, y], [y, 2.0]])
    x, y = np.asarray(1.5), np.asarray(-2.0)
    same(staged(f, x, y), np.array([[1.5, -2.0], [-2.0, 2.0]]))
    check_grads(f, (x, y), order=2)
    rows = staged(lambda v: fnp.asarray([v, v * 2.0, v]), np.arange(3.0))
    same(rows, np.array([np.arange(3.0), 2 * np.arange(3.0), np.arange(3.0)]))
    same(staged(lambda v: fnp.array([v, v], dtype=np.float32), np.ones(2)),
         np.ones((2, 2), np.float32))


@pytest.mark.parametrize("k", [-4, -1, 0, 2, 5])
def test_triu_tril_diag_match_numpy(k):
    a = np.arange(1.0, 13.0).reshape(3, 4)
    same_as_numpy(lambda x: fnp.triu(x, k), lambda x: np.triu(x, k), a)
    same_as_numpy(lambda x: fnp.tril(x, k), lambda x: np.tril(x, k), a)
    same_as_numpy(lambda x: fnp.tril(x, k), lambda x: np.tril(x, k), np.arange(3))  # 1-d
    same_as_numpy(lambda x: fnp.triu(x, k), lambda x: np.triu(x, k), np.ones((2, 3, 2)))
    same_as_numpy(lambda x: fnp.diag(x, k), lambda x: np.diag(x, k), a)
    for v in (np.arange(3), np.arange(1.0, 2.0), np.zeros(0)):
        same_as_numpy(lambda x: fnp.diag(x, k), lambda x: np.diag(x, k), v)
    same_as_numpy(lambda x: fnp.diagflat(x, k), lambda x: np.diagflat(x, k), a[:2, :2])


def test_diag_keeps_infinities_and_derivatives_match_jax():
    jnp = jax_x64().numpy
    v = np.array([np.inf, 2.0, -1.0])
    assert np.array_equal(fnp.diag(v, -1), np.diag(v, -1))   # no 0 * inf
    v = np.array([1.0, 2.0, -1.0])
    a = np.arange(12.0).reshape(3, 4)
    for k in (-1, 0, 2):
        derivatives_like_jax(lambda x: fnp.diag(x, k) ** 2, lambda x: jnp.diag(x, k) ** 2, v)
        derivatives_like_jax(lambda x: fnp.diag(x, k) ** 2, lambda x: jnp.diag(x, k) ** 2, a)
        derivatives_like_jax(lambda x: fnp.triu(x, k) ** 2, lambda x: jnp.triu(x, k) ** 2, a)
        derivatives_like_jax(lambda x: fnp.tril(x, k) ** 2, lambda x: jnp.tril(x, k) ** 2, a)


def test_triangles_and_diag_refuse_bad_ranks():
    with pytest.raises(ValueError, match="at least 1-d"):
        fnp.triu(np.float64(1.0))
    with pytest.raises(ValueError, match="1-d or 2-d.*diagonal"):
        fnp.diag(np.ones((2, 2, 2)))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_matches_numpy(indexing, sparse):
    for xs in [(np.arange(2),), (np.arange(2), np.arange(3.0)),
               (np.arange(2.0), np.arange(3.0), np.ones((2, 2)))]:
        got = fnp.meshgrid(*xs, indexing=indexing, sparse=sparse)
        want = np.meshgrid(*xs, indexing=indexing, sparse=sparse)
        assert type(got) is type(want) and len(got) == len(want)
        for a, b in zip(got, want):
            assert (a.shape, a.dtype) == (b.shape, b.dtype)
            np.testing.assert_array_equal(a, b)
    x, y = np.arange(2.0), np.arange(3.0)
    f = lambda x, y: fnp.meshgrid(x, y, indexing=indexing, sparse=sparse)  # noqa: E731
    same_as_numpy(f, lambda x, y: np.meshgrid(x, y, indexing=indexing, sparse=sparse), x, y)
    jnp = jax_x64().numpy
    derivatives_like_jax(lambda x, y: f(x, y)[0] * f(x, y)[1],
                          lambda x, y: (lambda g: g[0] * g[1])(
                              jnp.meshgrid(x, y, indexing=indexing, sparse=sparse)),
                          x, y, argnums=(0, 1))
    with pytest.raises(ValueError, match="'xy' or 'ij'"):
        fnp.meshgrid(x, indexing="yx")
