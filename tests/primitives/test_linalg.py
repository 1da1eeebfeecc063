"""dot_general beyond the case table (tests/primitives/cases_linalg.py, whose check_grads run
covers the transpose identity <w, J v> == <J^T w, v> for every layout): the cotangent of an
operand comes out in that operand's own layout when one dot_general can produce it, and each
path of the impl (stacked matmul, blocks of rows, einsum, batched matmul) agrees with numpy's
einsum."""

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.primitives.linalg import _matmul_rows, dot_general_p
from functrans.transforms.jit import jit

SIZES = (2, 5, 4, 1)


def _params(rng):
    return [(rng.standard_normal((m, n)), rng.standard_normal(n))
            for m, n in zip(SIZES[:-1], SIZES[1:])]


def _mlp(params, x):
    for w, b in params[:-1]:
        x = fnp.tanh(x @ w + b)
    w, b = params[-1]
    return (x @ w + b)[..., 0]


def _loss(params, x, y):
    return fnp.mean((_mlp(params, x) - y) ** 2)


def _transposes(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive.name == "transpose"]


@pytest.mark.parametrize("per_example", [False, True], ids=["grad", "vmap(grad)"])
def test_weight_gradients_need_no_transpose(per_example):
    rng = np.random.default_rng(0)
    params, x, y = _params(rng), rng.standard_normal((7, 2)), rng.standard_normal(7)
    g = ft.grad(_loss)
    if per_example:
        g = ft.vmap(g, in_axes=(None, 0, 0))
    closed = ft.make_jaxpr(g)(params, x, y)
    # x @ W has no transpose, so neither has its gradient: W's cotangent x^T @ ct is one
    # dot_general whose result is already (in, out)
    assert not _transposes(closed), str(closed)
    weight_grads = [dw for dw, _ in g(params, x, y)]
    assert all(dw.flags.c_contiguous for dw in weight_grads)
    if not per_example:
        dots = [e for e in closed.jaxpr.eqns if e.primitive.name == "dot_general"
                and e.outvars[0].aval.shape in {w.shape for w, _ in params}]
        assert len(dots) == len(params), str(closed)
    expected = _numpy_grads(params, x, y, per_example)
    for got, want in zip(ft.tree_util.tree_leaves(g(params, x, y)), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _numpy_grads(params, x, y, per_example):
    """Backprop by hand: [dW1, db1, dW2, ...] of the mean loss, or of each example's loss."""
    hs = [x]
    for w, b in params[:-1]:
        hs.append(np.tanh(hs[-1] @ w + b))
    w, b = params[-1]
    n = 1 if per_example else len(x)
    g = 2.0 * ((hs[-1] @ w + b)[:, 0] - y)[:, None] / n
    out = []
    for i in range(len(params) - 1, -1, -1):
        h = hs[i]
        if per_example:
            out[:0] = [h[:, :, None] * g[:, None, :], g]
        else:
            out[:0] = [h.T @ g, g.sum(0)]
        if i:
            g = (g @ params[i][0].T) * (1.0 - h * h)
    return out


def test_batched_matmul_weight_gradient_keeps_the_operand_layout():
    rng = np.random.default_rng(1)
    a, w = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 4, 5))
    closed = ft.make_jaxpr(ft.grad(lambda w: fnp.sum(fnp.sin(fnp.matmul(a, w))), argnums=0))(w)
    assert not _transposes(closed), str(closed)


@pytest.mark.parametrize("spec, shapes, dims", [
    # (..., k) @ (k, n): one stacked matmul
    ("abk,kn->abn", [(5, 3, 4), (4, 6)], (((2,), (0,)), ((), ()))),
    # ... tall enough for blocks of rows (2-d and stacked operands)
    ("ak,kn->an", [(512, 16), (16, 20)], (((1,), (0,)), ((), ()))),
    ("abk,kn->abn", [(128, 3, 24), (24, 16)], (((2,), (0,)), ((), ()))),
    # ... against a weight with several free axes (flattened), short and tall
    ("ak,kbc->abc", [(7, 5), (5, 3, 2)], (((1,), (0,)), ((), ()))),
    ("ak,kbc->abc", [(512, 16), (16, 4, 8)], (((1,), (0,)), ((), ()))),
    ("abk,kcd->abcd", [(64, 8, 16), (16, 3, 20)], (((2,), (0,)), ((), ()))),
    ("abk,k->ab", [(5, 3, 4), (4,)], (((2,), (0,)), ((), ()))),
    # per-batch inner products (the forward Laplacian's sum of squares): einsum
    ("bkc,bkc->bc", [(5, 3, 4), (5, 3, 4)], (((1,), (1,)), ((0, 2), (0, 2)))),
    ("kb,bk->b", [(3, 5), (5, 3)], (((0,), (1,)), ((1,), (0,)))),
    # per-batch outer products, batch dims not leading: einsum
    ("bc,bkc->bck", [(5, 4), (5, 3, 4)], (((), ()), ((0, 1), (0, 2)))),
    ("ib,bj->bij", [(2, 5), (5, 3)], (((), ()), ((1,), (0,)))),
    # a real matrix product per batch entry: transposes and a batched matmul
    ("bik,bkj->bij", [(5, 2, 3), (5, 3, 4)], (((2,), (1,)), ((0,), (0,)))),
])
def test_dot_general_paths_match_einsum(spec, shapes, dims):
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(s) for s in shapes)
    want = np.einsum(spec, a, b)
    got = dot_general_p.impl(a, b, dimension_numbers=dims)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    jitted = jit(lambda a, b: dot_general_p.bind(a, b, dimension_numbers=dims))
    np.testing.assert_allclose(jitted(a, b), want, rtol=1e-13, atol=1e-13)


def test_matmul_rows_takes_any_layout_and_buffer():
    """Tall products run as stacks of row blocks (linalg._matmul_rows): a transposed or
    sliced operand, and jit's reused buffers across calls, give numpy's product."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal((32, 24))
    dims = (((1,), (0,)), ((), ()))
    base = rng.standard_normal((32, 600))
    for a in (base.T, base.T[:512], rng.standard_normal((512, 64))[:, ::2]):
        got = dot_general_p.impl(a, w, dimension_numbers=dims)
        np.testing.assert_allclose(got, a @ w, rtol=1e-13, atol=1e-12)
        for out in (np.empty((512, 24)), np.empty((24, 512)).T):   # a buffer of either order
            assert _matmul_rows(a[:512], w, out=out) is out
            np.testing.assert_allclose(out, a[:512] @ w, rtol=1e-13, atol=1e-12)

    # under jit the product lands in a workspace buffer, then feeds an elementwise tail
    f = jit(lambda a, w: fnp.tanh(a @ w) * 2.0 + a @ w)
    for _ in range(3):
        a = rng.standard_normal((4, 128, 32))
        np.testing.assert_allclose(f(a, w), np.tanh(a @ w) * 2.0 + a @ w,
                                   rtol=1e-13, atol=1e-12)
    compiled = f.lower(a, w).compile()
    assert _matmul_rows in compiled.fn.__globals__.values()
    products = [line for line in compiled.source.splitlines() if "# dot_general" in line]
    assert products and all("out=w" in line for line in products), compiled.source
