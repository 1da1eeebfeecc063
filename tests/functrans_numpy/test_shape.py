"""functrans.numpy shape functions against numpy.

Each case is written once as `fn(m, *arrays)` and run with m = numpy (the reference) and
m = functrans.numpy, eagerly and staged (make_jaxpr + check_jaxpr + eval_jaxpr), for several
dtypes and for 0-d and size-0 inputs; derivatives against finite differences; vmap against a
loop of numpy calls.
"""

import numpy as np
import pytest
from numpy.exceptions import AxisError

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ConcretizationTypeError, ShapeError
from functrans.test_util import check_grads
from functrans.tree_util import tree_flatten, tree_unflatten


def same(actual, expected, exact=True):
    la, ta = tree_flatten(actual)
    le, te = tree_flatten(expected)
    assert len(la) == len(le), (actual, expected)
    for x, y in zip(la, le):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        assert x.dtype == y.dtype, (x.dtype, y.dtype)
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def staged(f, *args):
    closed = ft.make_jaxpr(f)(*args)
    ft.check_jaxpr(closed)
    return tree_unflatten(closed.out_tree, closed(*args))


def sample(rng, shape, dtype):
    x = rng.standard_normal(shape) * 3
    if dtype == np.bool_:
        return x > 0
    if np.issubdtype(dtype, np.complexfloating):
        return (x + 1j * rng.standard_normal(shape)).astype(dtype)
    return x.astype(dtype)


C = []


NO_GRAD = set()  # cases whose output is not smooth in float64 (casts to float32 or int)


def case(name, shapes, exact=True):
    def register(fn):
        C.append(pytest.param(fn, shapes, exact, id=name))
        return fn
    return register


# reshaping
case("reshape-infer", [(3, 4)])(lambda m, a: m.reshape(a, (-1, 2)))
case("reshape-0d", [(1, 1)])(lambda m, a: m.reshape(a, ()))
case("reshape-int", [(2, 3)])(lambda m, a: m.reshape(a, 6))
case("reshape-size0", [(0, 3)])(lambda m, a: m.reshape(a, (3, 0, 1)))
case("method-reshape-varargs", [(3, 4)])(lambda m, a: a.reshape(2, -1))
case("method-reshape-tuple", [(3, 4)])(lambda m, a: a.reshape((4, 3)))
case("ravel", [(2, 3, 2)])(lambda m, a: m.ravel(a))
case("ravel-0d", [()])(lambda m, a: m.ravel(a))
case("method-ravel-flatten", [(2, 3)])(lambda m, a: (a.ravel(), a.flatten()))
case("astype", [(2, 3)])(lambda m, a: (m.astype(a, np.complex64), a.astype(np.float64)
                                       if a.dtype.kind != "c" else a.astype(np.complex128)))
case("astype-narrowing", [(2, 3)])(lambda m, a: (m.astype(a, np.float32), a.astype(np.int32))
                                   if a.dtype.kind != "c" else m.astype(a, np.complex64))
NO_GRAD.update({"astype", "astype-narrowing"})
# permuting axes
case("transpose", [(2, 3, 4)])(lambda m, a: m.transpose(a))
case("transpose-axes", [(2, 3, 4)])(lambda m, a: m.transpose(a, (1, 0, 2)))
case("transpose-negative", [(2, 3, 4)])(lambda m, a: m.transpose(a, (-1, 0, 1)))
case("transpose-0d", [()])(lambda m, a: m.transpose(a))
case("method-T", [(2, 3)])(lambda m, a: a.T)
case("method-transpose", [(2, 3, 4)])(lambda m, a: (a.transpose(2, 0, 1), a.transpose((1, 2, 0)),
                                                     a.transpose()))
case("permute_dims", [(2, 3, 4)])(lambda m, a: m.permute_dims(a, (2, 1, 0)))
case("swapaxes", [(2, 3, 4)])(lambda m, a: (m.swapaxes(a, 0, 2), a.swapaxes(-1, 1)))
case("moveaxis", [(2, 3, 4)])(lambda m, a: (m.moveaxis(a, 0, -1), m.moveaxis(a, (0, 1), (2, 0))))
case("moveaxis-size0", [(2, 0, 4)])(lambda m, a: m.moveaxis(a, 1, 0))
# adding and removing unit axes
case("squeeze", [(1, 3, 1)])(lambda m, a: (m.squeeze(a), m.squeeze(a, 2), m.squeeze(a, (0, -1)),
                                           a.squeeze()))
case("squeeze-0d", [()])(lambda m, a: m.squeeze(a))
case("expand_dims", [(2, 3)])(lambda m, a: (m.expand_dims(a, 0), m.expand_dims(a, -1),
                                            m.expand_dims(a, (0, 3))))
case("expand_dims-0d", [()])(lambda m, a: m.expand_dims(a, (0, 1)))
case("broadcast_to", [(3, 1)])(lambda m, a: m.broadcast_to(a, (2, 3, 4)))
case("broadcast_to-0d", [()])(lambda m, a: m.broadcast_to(a, 3))
case("broadcast_to-size0", [(1, 2)])(lambda m, a: m.broadcast_to(a, (0, 2)))
case("broadcast_arrays", [(3, 1), (1, 4), ()])(lambda m, a, b, c: m.broadcast_arrays(a, b, c))
case("atleast", [(), (3,), (2, 3)])(lambda m, a, b, c: (
    m.atleast_1d(a), m.atleast_1d(a, b), m.atleast_2d(a, b, c), m.atleast_3d(a, b, c)))
# joining
case("concatenate", [(2, 3), (4, 3)])(lambda m, a, b: m.concatenate([a, b]))
case("concatenate-axis1", [(2, 1), (2, 3), (2, 0)])(
    lambda m, a, b, c: m.concatenate((a, b, c), axis=-1))
case("concatenate-axis-none", [(2, 2), (3,), ()])(
    lambda m, a, b, c: m.concatenate([a, b, m.reshape(c, (1,))], axis=None))
case("concatenate-one", [(2, 3)])(lambda m, a: m.concatenate([a], axis=1))
case("concat", [(2,), (3,)])(lambda m, a, b: m.concat([a, b]))
case("stack", [(2, 3), (2, 3)])(lambda m, a, b: (m.stack([a, b]), m.stack([a, b, a], axis=-1),
                                                 m.stack((a, b), 1)))
case("stack-0d", [(), ()])(lambda m, a, b: m.stack([a, b]))
case("stack-size0", [(0, 2), (0, 2)])(lambda m, a, b: m.stack([a, b], 1))
case("hstack", [(3,), (2,), (2, 3), (2, 1)])(
    lambda m, a, b, c, d: (m.hstack([a, b]), m.hstack((c, d))))
case("vstack", [(3,), (3,), (2, 3)])(lambda m, a, b, c: (m.vstack([a, b]), m.vstack([a, c])))
case("dstack", [(3,), (3,), (1, 3)])(lambda m, a, b, c: m.dstack([a, b, c]))
case("column_stack", [(3,), (3, 2)])(lambda m, a, b: m.column_stack([a, b, a]))
case("hstack-0d", [(), ()])(lambda m, a, b: m.hstack([a, b]))
# splitting
case("split-sections", [(6, 2)])(lambda m, a: m.split(a, 3))
case("split-indices", [(5, 2)])(lambda m, a: m.split(a, [1, -1]))
case("split-out-of-range", [(5,)])(lambda m, a: m.split(a, [2, 10, 3]))
case("array_split", [(2, 7)])(lambda m, a: m.array_split(a, 4, axis=1))
case("array_split-more-than-size", [(2,)])(lambda m, a: m.array_split(a, 3))
case("hvd-split", [(2, 4, 2)])(lambda m, a: (m.hsplit(a, 2), m.vsplit(a, [1]), m.dsplit(a, 2)))
case("hsplit-1d", [(4,)])(lambda m, a: m.hsplit(a, 2))
# tiling, repeating, reversing
case("tile", [(2, 3)])(lambda m, a: (m.tile(a, 2), m.tile(a, (2, 1, 3)), m.tile(a, (0, 2))))
case("tile-0d", [()])(lambda m, a: m.tile(a, (2, 3)))
case("repeat", [(2, 3)])(lambda m, a: (m.repeat(a, 2), m.repeat(a, 3, axis=1),
                                       m.repeat(a, [1, 0, 2], axis=-1), a.repeat(2, 0),
                                       m.repeat(a, [2], axis=0), m.repeat(a, 0, axis=0)))
case("repeat-0d", [()])(lambda m, a: m.repeat(a, 3))
case("flip", [(2, 3, 4)])(lambda m, a: (m.flip(a), m.flip(a, 1), m.flip(a, (0, -1)),
                                        m.fliplr(a), m.flipud(a)))
case("flip-0d", [()])(lambda m, a: m.flip(a))
case("roll", [(3, 4)])(lambda m, a: (m.roll(a, 2), m.roll(a, -1, 1), m.roll(a, (1, 2), (0, 1)),
                                     m.roll(a, 5, axis=0), m.roll(a, (1, 1), (1, 1))))
case("roll-size0", [(0, 3)])(lambda m, a: (m.roll(a, 1), m.roll(a, 1, 0)))
case("diagonal", [(3, 4)])(lambda m, a: (m.diagonal(a), m.diagonal(a, 1), m.diagonal(a, -2),
                                         m.diagonal(a, 7), a.diagonal(), m.diagonal(a, 0, 1, 0)))
case("diagonal-3d", [(2, 3, 4)])(lambda m, a: (m.diagonal(a, 0, 2, 0), m.diagonal(a, 1, 1, 2)))
case("trace", [(3, 4)], exact=False)(lambda m, a: (m.trace(a), m.trace(a, 1), m.trace(a, -1)))
case("trace-3d", [(2, 3, 3)], exact=False)(lambda m, a: m.trace(a, 0, 1, 2))

DTYPES = [np.float64, np.float32, np.int32, np.bool_, np.complex128]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fn,shapes,exact", C)
def test_matches_numpy_eager_and_staged(fn, shapes, exact, dtype):
    rng = np.random.default_rng(0)
    args = [sample(rng, s, dtype) for s in shapes]
    expected = fn(np, *args)
    same(fn(fnp, *args), expected, exact)
    same(staged(lambda *xs: fn(fnp, *xs), *args), expected, exact)


@pytest.mark.parametrize("fn,shapes,exact", [c for c in C if c.id not in NO_GRAD])
def test_derivatives_match_finite_differences(fn, shapes, exact):
    rng = np.random.default_rng(1)
    args = [sample(rng, s, np.float64) for s in shapes]
    check_grads(lambda *xs: fn(fnp, *xs), args, order=1)


@pytest.mark.parametrize("fn,shapes,exact", C)
def test_vmap_matches_a_loop(fn, shapes, exact):
    rng = np.random.default_rng(2)
    args = [sample(rng, (2, *s), np.float64) for s in shapes]
    expected = [fn(np, *[a[k] for a in args]) for k in range(2)]
    expected = ft.tree_util.tree_map(lambda *xs: np.stack(xs), *expected)
    same(ft.vmap(lambda *xs: fn(fnp, *xs))(*args), expected, exact)


@pytest.mark.parametrize("pair", [(np.float32, np.int64), (np.int8, np.bool_),
                                  (np.int32, np.float32), (np.complex64, np.float64)])
@pytest.mark.parametrize("name", ["concatenate", "stack", "hstack", "vstack"])
def test_joining_promotes_like_numpy(name, pair):
    a, b = np.ones(3, pair[0]), np.zeros(3, pair[1])
    expected = getattr(np, name)([a, b])
    same(getattr(fnp, name)([a, b]), expected)
    same(staged(lambda x, y: getattr(fnp, name)([x, y]), a, b), expected)


def test_concatenate_and_stack_dtype_argument():
    a, b = np.ones(2, np.int32), np.zeros(2, np.int32)
    same(fnp.concatenate([a, b], dtype=np.float32), np.concatenate([a, b], dtype=np.float32))
    same(fnp.stack([a, b], dtype=float), np.stack([a, b], dtype=float))


def test_shape_ndim_size():
    a = np.zeros((2, 3))
    assert fnp.shape(a) == (2, 3) and fnp.ndim(a) == 2 and fnp.size(a) == 6
    assert fnp.size(a, 1) == 3 and fnp.shape(3.0) == ()

    def f(x):
        assert fnp.shape(x) == (2, 3) and fnp.ndim(x) == 2 and fnp.size(x, -1) == 3
        return x
    ft.make_jaxpr(f)(a)


def test_one_equation_per_primitive():
    closed = ft.make_jaxpr(lambda a, b: fnp.concatenate([a, b, a], axis=1))(np.ones((2, 1)),
                                                                          np.ones((2, 3)))
    assert [e.primitive.name for e in closed.eqns] == ["concatenate"]
    closed = ft.make_jaxpr(lambda a: fnp.flip(a, 0))(np.ones((2, 3)))
    assert [e.primitive.name for e in closed.eqns] == ["rev"]


@pytest.mark.parametrize("call,exc,phrase", [
    (lambda: fnp.reshape(np.ones((2, 3)), (4, 2)), ShapeError, "(4, 2)"),
    (lambda: fnp.reshape(np.ones((2, 3)), (-1, -1)), ValueError, "one unknown"),
    (lambda: fnp.reshape(np.ones((2, 3)), (-1, 4)), ShapeError, "size 6"),
    (lambda: fnp.concatenate([np.ones((2, 3)), np.ones((3, 2))]), ShapeError, "(3, 2)"),
    (lambda: fnp.concatenate([np.ones(()), np.ones(())]), ValueError, "stack"),
    (lambda: fnp.stack([np.ones(2), np.ones(3)]), ShapeError, "same shape"),
    (lambda: fnp.stack([]), ValueError, "at least one array"),
    (lambda: fnp.split(np.ones(5), 2), ValueError, "array_split"),
    (lambda: fnp.squeeze(np.ones((1, 2)), 1), ValueError, "size not equal to one"),
    (lambda: fnp.broadcast_to(np.ones(3), (2, 4)), ShapeError, "(2, 4)"),
    (lambda: fnp.broadcast_arrays(np.ones(3), np.ones(4)), ShapeError, "(3,)"),
    (lambda: fnp.transpose(np.ones((2, 3)), (0,)), ValueError, "permutation"),
    (lambda: fnp.moveaxis(np.ones((2, 3)), 2, 0), AxisError, "out of bounds"),
    (lambda: fnp.expand_dims(np.ones(2), 3), AxisError, "out of bounds"),
    (lambda: fnp.swapaxes(np.ones(2), 0, 1), AxisError, "out of bounds"),
    (lambda: fnp.repeat(np.ones(3), [1, 2]), ValueError, "cannot be broadcast"),
    (lambda: fnp.repeat(np.ones(3), -1), ValueError, "negative"),
    (lambda: fnp.diagonal(np.ones(3)), ValueError, "two dimensions"),
])
def test_errors_name_the_problem(call, exc, phrase):
    with pytest.raises(exc, match=None) as info:
        call()
    assert phrase in str(info.value), str(info.value)


def test_traced_repeats_are_rejected_with_the_fix():
    with pytest.raises(ConcretizationTypeError, match="concrete repeats"):
        ft.make_jaxpr(lambda x, r: fnp.repeat(x, r))(np.ones(3), np.array([1, 2, 0]))
