"""functrans.numpy products (matmul, @, dot, vdot, inner, outer, tensordot, einsum, trace),
dot_general's rules on random dimension numbers, and fnp.linalg.norm: against numpy, eagerly
and traced, with derivatives against finite differences (and JAX's values at zero)."""

import string
import warnings

import numpy as np
import pytest
from numpy_checks import derivatives_like_jax, jax_x64, same_as_numpy

import functrans as ft
import functrans.numpy as fnp
from functrans.errors import ShapeError
from functrans.primitives.linalg import dot_general
from functrans.test_util import check_grads


def randn(*shapes, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        if np.dtype(dtype) == np.bool_:
            out.append(rng.random(s) > 0.5)
        elif np.issubdtype(dtype, np.integer):
            out.append(rng.integers(-3, 4, s).astype(dtype))
        else:
            out.append(rng.standard_normal(s).astype(dtype))
    return out


def traced(f, *args):
    closed = ft.make_jaxpr(f)(*args)
    ft.check_jaxpr(closed)
    outs = ft.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return outs[0] if len(outs) == 1 else tuple(outs)


def assert_matches(out, ref, rtol=1e-12):
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    if np.issubdtype(ref.dtype, np.inexact):
        np.testing.assert_allclose(out, ref, rtol=rtol, atol=1e-12 if rtol < 1e-8 else 1e-5)
    else:
        np.testing.assert_array_equal(out, ref)


def both(f, g, *args, rtol=1e-12):
    ref = g(*args)
    assert_matches(f(*args), ref, rtol)
    assert_matches(traced(f, *args), ref, rtol)


# --- matmul and @ ----------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)), ((3, 4), (5, 4, 2)), ((5, 2, 3), (5, 3, 4)),
    ((2, 1, 3, 4), (5, 4, 2)), ((1, 2, 3), (4, 3, 2)), ((7, 1, 2, 3), (5, 3, 4)),
    ((3,), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 3), (1, 3, 2)), ((1, 1, 3), (2, 1, 3, 1)),
    ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((0, 2, 3), (3, 1)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
def test_matmul_matches_numpy(sa, sb):
    a, b = randn(sa, sb)
    both(fnp.matmul, np.matmul, a, b)
    both(lambda x, y: x @ y, np.matmul, a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_matmul_dtypes(dtype):
    for sa, sb in [((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((3,), (3,))]:
        a, b = randn(sa, sb, dtype=dtype)
        both(fnp.matmul, np.matmul, a, b, rtol=1e-5)
    a, b = randn((2, 3), (3,))
    both(fnp.matmul, np.matmul, a.astype(np.float32), b)  # promotes like numpy


def test_matmul_operator_with_numpy_on_either_side():
    a, b = randn((2, 3), (3, 4))
    assert_matches(traced(lambda x: a @ x, b), a @ b)
    assert_matches(traced(lambda x: x @ b, a), a @ b)


@pytest.mark.parametrize("sa,sb", [((2, 1, 3, 4), (5, 4, 2)), ((3,), (2, 3, 4)),
                                   ((5, 2, 3), (5, 3, 4)), ((2, 3), (3,))], ids=str)
def test_matmul_grads(sa, sb):
    check_grads(fnp.matmul, randn(sa, sb, seed=1), order=2)


def test_matmul_shape_errors_name_both_shapes():
    a, b = randn((2, 3), (4, 5))
    with pytest.raises(ShapeError, match=r"\(2, 3\) and \(4, 5\)"):
        fnp.matmul(a, b)
    with pytest.raises(ShapeError, match="batch axes"):
        fnp.matmul(*randn((2, 2, 3), (3, 3, 4)))
    with pytest.raises(ShapeError, match="at least 1-d"):
        fnp.matmul(np.float64(2.0), b)


def test_batched_matmul_does_not_materialise_broadcasts():
    a, b = randn((6, 1, 3, 4), (5, 4, 2))
    closed = ft.make_jaxpr(fnp.matmul)(a, b)
    names = [e.primitive.name for e in closed.eqns]
    assert "broadcast_in_dim" not in names and names.count("dot_general") == 1, str(closed)


# --- dot, vdot, inner, outer, tensordot, trace -----------------------------------------------

@pytest.mark.parametrize("sa,sb", [((), ()), ((), (3,)), ((3,), (3,)), ((2, 3), (3,)),
                                   ((2, 3), (3, 4)), ((2, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)),
                                   ((2, 3, 4), (4,))], ids=str)
def test_dot_matches_numpy(sa, sb):
    a, b = randn(sa, sb)
    both(fnp.dot, np.dot, a, b)


@pytest.mark.parametrize("sa,sb", [((), ()), ((3,), (3,)), ((2, 3), (4, 3)),
                                   ((2, 3, 4), (5, 4)), ((0, 4), (3, 4))], ids=str)
def test_inner_outer_vdot_match_numpy(sa, sb):
    a, b = randn(sa, sb)
    both(fnp.inner, np.inner, a, b)
    both(fnp.outer, np.outer, a, b)
    a, b = randn((2, 3), (3, 2))
    both(fnp.vdot, np.vdot, a, b)
    with pytest.raises(ShapeError, match="sizes"):
        fnp.vdot(a, randn((5,))[0])


@pytest.mark.parametrize("sa,sb,axes", [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (4, 5), 0), ((2, 3), (3, 4), 1),
    ((2, 3, 4), (4, 5, 2), ((0, 2), (2, 0))), ((3, 4), (4, 3), ([1, 0], [0, 1])),
    ((2, 3), (2, 5), (0, 0)), ((2, 3, 4), (4, 3), ((-1, 1), (0, -1))),
], ids=str)
def test_tensordot_matches_numpy(sa, sb, axes):
    a, b = randn(sa, sb)
    both(lambda x, y: fnp.tensordot(x, y, axes), lambda x, y: np.tensordot(x, y, axes), a, b)
    check_grads(lambda x, y: fnp.tensordot(x, y, axes), (a, b), order=1)


def test_tensordot_errors():
    a, b = randn((2, 3), (4, 5))
    with pytest.raises(ShapeError, match="not aligned"):
        fnp.tensordot(a, b, 1)
    with pytest.raises(ValueError, match="shape-mismatch"):
        fnp.tensordot(a, b, ((0, 1), (0,)))


@pytest.mark.parametrize("shape,kw", [
    ((3, 3), {}), ((3, 4), {"offset": 1}), ((4, 3), {"offset": -2}), ((3, 4), {"offset": 5}),
    ((2, 3, 4), {"axis1": 1, "axis2": 2}), ((2, 3, 3), {"axis1": -1, "axis2": 1}),
    ((4, 2, 4), {"axis1": 2, "axis2": 0, "offset": 1}), ((0, 3), {}),
], ids=str)
def test_trace_matches_numpy(shape, kw):
    a, = randn(shape)
    both(lambda x: fnp.trace(x, **kw), lambda x: np.trace(x, **kw), a)
    ai = a.astype(np.int8)
    both(lambda x: fnp.trace(x, **kw), lambda x: np.trace(x, **kw), ai)
    if a.size:
        check_grads(lambda x: fnp.trace(x, **kw), (a,), order=1)


# --- einsum ----------------------------------------------------------------------------------

EINSUM_TABLE = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("iij->ji", [(2, 2, 3)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]),
    ("i,i->", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]),
    ("ij,ij->ij", [(2, 1), (2, 3)]), ("i,i", [(1,), (3,)]), ("bA", [(2, 3)]),
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]), ("i,j,k->", [(2,), (3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("iji->j", [(2, 3, 2)]), ("...", [(3,)]),
    ("i...->...", [(3, 4)]), ("ab,cd->", [(2, 3), (4, 5)]), ("ii,i->i", [(3, 3), (3,)]),
    ("ij,kj->ik", [(0, 3), (4, 3)]), ("ij,jk->ik", [(2, 0), (0, 4)]), ("", [()]),
    (",->", [(), ()]), ("i,->i", [(3,), ()]), ("iii->i", [(2, 2, 2)]),
    ("ba,ab->", [(3, 2), (2, 3)]), ("...i,...i->...", [(2, 3), (3,)]),
    ("i j , j k -> i k", [(2, 3), (3, 4)]), ("abc,cd,db->ad", [(2, 3, 4), (4, 5), (5, 3)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("ij,ji->", [(3, 3), (3, 3)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_TABLE, ids=[s for s, _ in EINSUM_TABLE])
def test_einsum_matches_numpy(subscripts, shapes):
    ops = randn(*shapes, seed=len(shapes))
    both(lambda *xs: fnp.einsum(subscripts, *xs), lambda *xs: np.einsum(subscripts, *xs), *ops)
    if all(np.size(o) for o in ops):
        check_grads(lambda *xs: fnp.einsum(subscripts, *xs), ops, order=1)


def test_einsum_ints_and_second_order():
    a, b = randn((2, 3), (3, 4), dtype=np.int32)
    both(lambda x, y: fnp.einsum("ij,jk->ik", x, y), lambda x, y: np.einsum("ij,jk->ik", x, y),
         a, b)
    check_grads(lambda x, y: fnp.einsum("ij,jk,ki->", x, y, x[:, :2]),
                randn((2, 3), (3, 2)), order=2)
    check_grads(lambda x: fnp.einsum("ii->i", x), randn((3, 3)), order=2)


@pytest.mark.parametrize("subscripts,shapes,match", [
    ("ij,jk->ik", [(2, 3), (4, 5)], "sizes"),
    ("ii->i", [(2, 3)], "sizes 2 and 3"),
    ("ij->k", [(2, 3)], "appears in no operand"),
    ("ij->ii", [(2, 3)], "more than once"),
    ("ij,jk", [(2, 3)], "operands"),
    ("ijk", [(2, 3)], "subscripts"),
    ("...ij->ij", [(5, 2, 3)], "'...'"),
    ("i1->i", [(3, 3)], "invalid subscript"),
])
def test_einsum_errors(subscripts, shapes, match):
    with pytest.raises(ValueError, match=match):
        fnp.einsum(subscripts, *randn(*shapes))


# --- dot_general on random dimension numbers -------------------------------------------------

def _random_dimension_numbers(rng):
    na, nb = int(rng.integers(0, 4)), int(rng.integers(0, 4))
    k = int(rng.integers(0, min(na, nb) + 1))
    pa, pb = [int(i) for i in rng.permutation(na)[:k]], [int(i) for i in rng.permutation(nb)[:k]]
    nbatch = int(rng.integers(0, k + 1))
    sa, sb = list(rng.integers(1, 4, na)), list(rng.integers(1, 4, nb))
    for i, j in zip(pa, pb):
        sb[j] = sa[i]
    dn = ((tuple(pa[nbatch:]), tuple(pb[nbatch:])), (tuple(pa[:nbatch]), tuple(pb[:nbatch])))
    return tuple(sa), tuple(sb), dn


def _einsum_reference(a, b, dn):
    (lc, rc), (lb, rb) = dn
    la = list(string.ascii_letters[:a.ndim])
    lr = list(string.ascii_letters[26:26 + b.ndim])
    for i, j in zip((*lc, *lb), (*rc, *rb)):
        lr[j] = la[i]
    out = [la[i] for i in lb] + [la[i] for i in range(a.ndim) if i not in lc + lb] + \
        [lr[j] for j in range(b.ndim) if j not in rc + rb]
    return np.einsum(f"{''.join(la)},{''.join(lr)}->{''.join(out)}", a, b)


def test_dot_general_random_dimension_numbers():
    rng = np.random.default_rng(7)
    for _ in range(40):
        sa, sb, dn = _random_dimension_numbers(rng)
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)

        def f(x, y):
            return dot_general(x, y, dn)

        both(f, lambda x, y: _einsum_reference(x, y, dn), a, b)
        check_grads(f, (a, b), order=1)
        for in_axes in ((0, None), (None, 0), (0, 0)):
            A = np.stack([a, 2 * a]) if in_axes[0] == 0 else a
            B = np.stack([b, b + 1]) if in_axes[1] == 0 else b
            ref = np.stack([_einsum_reference(A[i] if in_axes[0] == 0 else A,
                                              B[i] if in_axes[1] == 0 else B, dn)
                            for i in range(2)])
            np.testing.assert_allclose(ft.vmap(f, in_axes=in_axes)(A, B), ref, atol=1e-12)


def test_dot_general_rejects_bad_dimension_numbers():
    a, b = randn((2, 3), (3, 4))
    for dn in [(((2,), (0,)), ((), ())), (((1,), (0,)), ((1,), (0,))),
               (((1, 1), (0, 0)), ((), ())), (((-1,), (0,)), ((), ()))]:
        with pytest.raises(ShapeError, match="dot_general"):
            ft.make_jaxpr(lambda x, y: dot_general(x, y, dn))(a, b)


# --- norm ------------------------------------------------------------------------------------

VECTOR_ORDS = [None, 2, 1, -1, 3, 0.5, np.inf, -np.inf, 0, -2.5]
MATRIX_ORDS = [None, "fro", 1, -1, np.inf, -np.inf]


def test_norm_matches_numpy():
    x, = randn((3, 4))
    v = x[0]
    for ord in VECTOR_ORDS:
        both(lambda y: fnp.linalg.norm(y, ord), lambda y: np.linalg.norm(y, ord), v)
        for axis in (0, 1, -1):
            for keepdims in (False, True):
                both(lambda y: fnp.linalg.norm(y, ord, axis, keepdims),
                     lambda y: np.linalg.norm(y, ord, axis, keepdims), x)
    for ord in MATRIX_ORDS:
        both(lambda y: fnp.linalg.norm(y, ord), lambda y: np.linalg.norm(y, ord), x)
        for axis in ((0, 1), (1, 0)):
            for keepdims in (False, True):
                both(lambda y: fnp.linalg.norm(y, ord, axis, keepdims),
                     lambda y: np.linalg.norm(y, ord, axis, keepdims), x)
    t, = randn((2, 3, 4))
    both(lambda y: fnp.linalg.norm(y), lambda y: np.linalg.norm(y), t)
    both(lambda y: fnp.linalg.norm(y, keepdims=True), lambda y: np.linalg.norm(y, keepdims=True),
         t)
    both(lambda y: fnp.linalg.norm(y, 1, axis=(2, 0)), lambda y: np.linalg.norm(y, 1, (2, 0)), t)
    both(lambda y: fnp.linalg.norm(y), lambda y: np.linalg.norm(y), np.arange(6).reshape(2, 3))
    both(lambda y: fnp.linalg.norm(y), lambda y: np.linalg.norm(y), x.astype(np.float32))
    both(lambda y: fnp.linalg.vector_norm(y, axis=(0, 2), ord=3),
         lambda y: np.linalg.vector_norm(y, axis=(0, 2), ord=3), t)
    both(lambda y: fnp.linalg.matrix_norm(y, ord=np.inf),
         lambda y: np.linalg.matrix_norm(y, ord=np.inf), t)


def test_norm_errors():
    x, = randn((2, 3, 4))
    with pytest.raises(ValueError, match="axis="):
        fnp.linalg.norm(x, ord=1)
    with pytest.raises(ValueError, match="axis="):
        fnp.linalg.norm(x, ord="nuc")
    with pytest.raises(ValueError, match="invalid norm order"):
        fnp.linalg.norm(x[0, 0], ord="fro")


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
def test_vector_norm_grads(ord):
    x = np.array([[0.7, -1.3, 0.4, 2.1], [-0.5, 0.9, -1.7, 0.3]])
    if ord == 0:
        _, t = ft.jvp(lambda y: fnp.linalg.norm(y, ord, axis=1), (x,), (x,))
        np.testing.assert_array_equal(t, [0.0, 0.0])
        return
    check_grads(lambda y: fnp.linalg.norm(y, ord, axis=1), (x,), order=2)


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm_grads(ord):
    x = np.array([[0.7, -1.3, 0.4, 2.1], [-0.5, 0.9, -1.7, 0.3], [1.1, 0.2, -0.6, -0.8]])
    check_grads(lambda y: fnp.linalg.norm(y, ord), (x,), order=2)


# JAX's gradients at the all-zero input (jax 0.10, x64), pinned so this runs without JAX.
JAX_GRAD_AT_ZERO_VECTOR = {None: np.nan, 2: np.nan, 1: 1.0, np.inf: 1 / 6, -np.inf: 1 / 3,
                           0: 0.0}
JAX_GRAD_AT_ZERO_MATRIX = {None: np.nan, "fro": np.nan, 1: 1 / 6, -1: 1 / 3, np.inf: 0.25,
                           -np.inf: 0.5}


def _quiet_grad(f, x):
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ft.grad(f)(x)


def test_norm_gradient_at_zero_matches_jax():
    for ord, val in JAX_GRAD_AT_ZERO_VECTOR.items():
        g = _quiet_grad(lambda y: fnp.linalg.norm(y, ord), np.zeros(3))
        np.testing.assert_array_equal(g, np.full(3, val), err_msg=f"vector ord={ord}")
    for ord, val in JAX_GRAD_AT_ZERO_MATRIX.items():
        g = _quiet_grad(lambda y: fnp.linalg.norm(y, ord), np.zeros((2, 3)))
        np.testing.assert_allclose(g, np.full((2, 3), val), err_msg=f"matrix ord={ord}")
    # a zero row does not poison the other rows, and the p-norm is finite at zero entries
    g = _quiet_grad(lambda y: fnp.sum(fnp.linalg.norm(y, axis=1)),
                    np.array([[0.0, 0.0], [3.0, 4.0]]))
    np.testing.assert_allclose(g[1], [0.6, 0.8])
    g = ft.grad(lambda y: fnp.linalg.norm(y, 3))(np.array([0.0, 1.0, 2.0]))
    np.testing.assert_allclose(g, [0.0, 1 / 9 ** (2 / 3), 4 / 9 ** (2 / 3)])


def test_norm_parity_with_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    with jax.enable_x64(True):
        x = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0]])
        for ord in VECTOR_ORDS:
            g = _quiet_grad(lambda y: fnp.sum(fnp.linalg.norm(y, ord, axis=1)), x)
            jg = jax.grad(lambda y: jnp.sum(jnp.linalg.norm(y, ord, axis=1)))(x)
            jg = np.asarray(jg)
            if ord in (-1, 3, 0.5, -2.5):
                # documented: the p-norm's guarded powers give 0 at an all-zero row, where
                # JAX has nan; everywhere JAX is finite the two agree
                assert np.all(np.isnan(jg[0])) and np.all(g[0] == 0), ord
                g, jg = g[1:], jg[1:]
            np.testing.assert_allclose(g, jg, err_msg=f"ord={ord}")
        for ord in MATRIX_ORDS:
            for y in (np.zeros((2, 3)), x):
                g = _quiet_grad(lambda z: fnp.linalg.norm(z, ord), y)
                jg = jax.grad(lambda z: jnp.linalg.norm(z, ord))(y)
                np.testing.assert_allclose(g, np.asarray(jg), err_msg=f"ord={ord}")


@pytest.mark.parametrize("sa,sb", [((2,), (3,)), ((2, 3), (4,)), ((2, 1, 3), (3, 2)),
                                   ((), (2,)), ((2, 2), ())])
def test_kron_matches_numpy_and_jax(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    same_as_numpy(fnp.kron, np.kron, a, b, vmap=bool(sa and sb))
    same_as_numpy(fnp.kron, np.kron, np.arange(2), np.arange(3), vmap=False)
    jnp = jax_x64().numpy
    derivatives_like_jax(fnp.kron, jnp.kron, a, b, argnums=(0, 1))


@pytest.mark.parametrize("sa,sb,kw", [
    ((3,), (3,), {}), ((4, 3), (3,), {}), ((2,), (2,), {}), ((3, 2), (2,), {}),
    ((2,), (3,), {}), ((3,), (2,), {}), ((3, 4), (4, 3), dict(axisa=0)),
    ((3, 4), (3, 4), dict(axis=0)), ((4, 3), (4, 3), dict(axisc=0))], ids=str)
def test_cross_matches_numpy_and_jax(sa, sb, kw):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=sa), rng.normal(size=sb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # numpy 2 on 2-vectors
        want = np.cross(a, b, **kw)
        got = fnp.cross(a, b, **kw)
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
        np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_allclose(ft.jit(lambda a, b: fnp.cross(a, b, **kw))(a, b), want,
                                   rtol=1e-14)
        jnp = jax_x64().numpy
        derivatives_like_jax(lambda a, b: fnp.cross(a, b, **kw),
                              lambda a, b: jnp.cross(a, b, **kw), a, b, argnums=(0, 1))
    with pytest.raises(ValueError, match="dimension must be 2 or 3"):
        fnp.cross(np.ones(4), np.ones(3))


@pytest.mark.parametrize("n, m", [(7, 3), (3, 7), (5, 5), (6, 1), (1, 1), (8, 4)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_matches_numpy(n, m, mode):
    a, v = randn(n, m, seed=n * 10 + m)
    assert_matches(fnp.convolve(a, v, mode), np.convolve(a, v, mode))
    assert_matches(traced(lambda x, y: fnp.convolve(x, y, mode), a, v), np.convolve(a, v, mode))
    assert_matches(ft.jit(lambda x, y: fnp.convolve(x, y, mode))(a, v), np.convolve(a, v, mode))
    check_grads(lambda x, y: fnp.convolve(x, y, mode), (a, v), order=2)


def test_convolve_vmaps_and_checks_its_input():
    a, v = randn((3, 6), 2, seed=4)
    assert_matches(ft.vmap(fnp.convolve, in_axes=(0, None))(a, v),
                   np.stack([np.convolve(row, v) for row in a]))
    with pytest.raises(ShapeError, match="1-d"):
        fnp.convolve(a, v)
    with pytest.raises(ShapeError, match="empty"):
        fnp.convolve(np.zeros(0), v)
    with pytest.raises(ValueError, match="mode"):
        fnp.convolve(v, v, mode="circular")
