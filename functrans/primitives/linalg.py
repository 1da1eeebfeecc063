"""dot_general: the one contraction primitive behind matmul, dot, einsum, tensordot, outer."""

from __future__ import annotations

import math

import numpy as np

from functrans.backend import xp
from functrans.core.avals import CONCRETE_ARRAY_TYPES, ShapedArray, ndim_of
from functrans.core.symbolic import Zero, is_undefined
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.elementwise import add_tangents, mul
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import reshape, transpose


def dot_general(lhs, rhs, dimension_numbers):
    """XLA's dot_general: contract the `dimension_numbers` axes, batch over the batch axes."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn)


def _free(ndim, *used):
    used = {i for u in used for i in u}
    return [i for i in range(ndim) if i not in used]


def _argsort(seq) -> list:
    """np.argsort of a short sequence of distinct ints, without numpy's call overhead."""
    return sorted(range(len(seq)), key=seq.__getitem__)


BLOCK_ROWS = 16        # rows per block of a tall product (see _matmul_rows)
BLOCK_MIN_ROWS = 256   # below this, one product is as fast
BLOCK_MIN_WIDTH = 16   # k and n: thinner products lose by blocking


def _blocks(lhs_shape, rhs_shape) -> bool:
    """Whether (..., k) @ (k, ..., n) with these shapes runs faster in blocks of rows."""
    if len(rhs_shape) < 2 or len(lhs_shape) < 2:
        return False
    rows = math.prod(lhs_shape[:-1])
    return rows >= BLOCK_MIN_ROWS and rows % BLOCK_ROWS == 0 \
        and rhs_shape[0] >= BLOCK_MIN_WIDTH and rhs_shape[-1] >= BLOCK_MIN_WIDTH


def _matmul_rows(lhs, rhs, out=None):
    """(..., k) @ (k, *mid, n) -> (..., *mid, n) as products of (k, n) matrices: one per entry
    of `mid`, each written in place into its strided slice of the result, and tall operands
    (_blocks) in blocks of BLOCK_ROWS rows. numpy runs a stack as one BLAS call per matrix;
    OpenBLAS takes matrices this small through kernels that skip packing. On a 2-core Xeon:
    (1024, 64) @ (64, 64) 0.141 -> 0.109 ms, (1024, 2, 64) @ (64, 64) 0.316 -> 0.222 ms, and
    (1024, 64) @ (64, 8, 64) 1.14 ms as one (64, 512) product -> 0.86 ms. Non-contiguous
    operands of a tall product take unblocked calls."""
    k, n = rhs.shape[0], rhs.shape[-1]
    rows, m = math.prod(lhs.shape[:-1]), math.prod(rhs.shape[1:-1])
    shape = (*lhs.shape[:-1], *rhs.shape[1:])
    if out is None:
        out = xp.empty(shape, np.result_type(lhs.dtype, rhs.dtype))
    elif not out.flags.c_contiguous:
        out[...] = _matmul_rows(lhs, rhs)
        return out
    if _blocks(lhs.shape, rhs.shape) and type(lhs) in CONCRETE_ARRAY_TYPES and \
            lhs.flags.c_contiguous:
        lhs2 = lhs.reshape(rows // BLOCK_ROWS, BLOCK_ROWS, k)
        out2 = out.reshape(rows // BLOCK_ROWS, BLOCK_ROWS, m, n)
    else:
        lhs2, out2 = lhs.reshape(1, rows, k), out.reshape(1, rows, m, n)
    if rhs.ndim == 2:
        xp.matmul(lhs2, rhs, out=out2[:, :, 0, :])
    else:   # (m, 1, k, n) against (1, blocks, b, k) -> (m, blocks, b, n): a view of out;
        # the (k, n) matrices contiguous (strided ones made the products 1.5x slower)
        rhs3 = xp.ascontiguousarray(xp.moveaxis(rhs.reshape(k, m, n), 1, 0))[:, None]
        xp.matmul(lhs2[None], rhs3, out=xp.moveaxis(out2, 2, 0))
    return out


_matmul_rows.writes_out = True   # jit's generated code may pass it a buffer (`out=`)


def _matmul(lhs, rhs):
    if rhs.ndim > 2 or _blocks(lhs.shape, rhs.shape):
        return _matmul_rows(lhs, rhs)
    return xp.matmul(lhs, rhs)


def _dot_general_impl(lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = xp.asarray(lhs), xp.asarray(rhs)
    if not lb:
        if lhs.ndim >= 2 and rhs.ndim >= 1 and lc == (lhs.ndim - 1,) and rc == (0,):
            return _matmul(lhs, rhs)        # (..., k) @ (k, ...): the leading axes a stack
        if lhs.ndim == 2 and rhs.ndim == 2 and lc == (0,) and rc == (0,):
            return xp.matmul(lhs.T, rhs)
        if lhs.ndim == 2 and rhs.ndim == 2 and lc == (1,) and rc == (1,):
            return xp.matmul(lhs, rhs.T)
        return xp.tensordot(lhs, rhs, axes=(list(lc), list(rc)))
    lf = _free(lhs.ndim, lc, lb)
    rf = _free(rhs.ndim, rc, rb)
    lfs = [lhs.shape[i] for i in lf]
    rfs = [rhs.shape[i] for i in rf]
    m, n = int(np.prod(lfs, dtype=np.int64)), int(np.prod(rfs, dtype=np.int64))
    k = int(np.prod([lhs.shape[i] for i in lc], dtype=np.int64))
    if k == 1 or m * n == 1:
        # an outer or inner product per batch entry (a sum of squares over the directions of
        # a forward Laplacian, say): einsum runs it in place, where matmul would transpose
        # both operands and loop over many 1-wide products
        ls = [0] * lhs.ndim
        rs = [0] * rhs.ndim
        for j, (a, b) in enumerate(zip((*lb, *lc), (*rb, *rc))):
            ls[a] = rs[b] = j
        top = len(lb) + len(lc)
        for j, a in enumerate(lf):
            ls[a] = top + j
        for j, b in enumerate(rf):
            rs[b] = top + len(lf) + j
        out_subs = [*range(len(lb)), *range(top, top + len(lf) + len(rf))]
        return xp.einsum(lhs, ls, rhs, rs, out_subs)
    # batch dims: bring both to (batch..., free..., contract...) and use matmul
    l = xp.transpose(lhs, (*lb, *lf, *lc))
    r = xp.transpose(rhs, (*rb, *rc, *rf))
    bshape = l.shape[:len(lb)]
    out = xp.matmul(l.reshape(*bshape, m, k), r.reshape(*bshape, k, n))
    return out.reshape(*bshape, *lfs, *rfs)


def _check_dims(side, aval, contract, batch):
    used = (*contract, *batch)
    if any(not isinstance(d, int | np.integer) or not 0 <= d < aval.ndim for d in used) or \
            len(set(used)) != len(used):
        raise ShapeError(
            f"dot_general: the {side} operand has shape {aval.shape}, but its contracting "
            f"dimensions {tuple(contract)} and batch dimensions {tuple(batch)} must be distinct "
            f"axes in range(0, {aval.ndim}) (non-negative; normalise negative axes first).")


def _dot_general_abstract(lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    _check_dims("left", lhs, lc, lb)
    _check_dims("right", rhs, rc, rb)
    if lhs.dtype != rhs.dtype:
        raise DTypeError(f"dot_general: operand dtypes {lhs.dtype.name} and {rhs.dtype.name} "
                         "differ; promote first (functrans.numpy does).")
    if len(lc) != len(rc) or len(lb) != len(rb) or \
            any(lhs.shape[a] != rhs.shape[b] for a, b in zip((*lc, *lb), (*rc, *rb))):
        raise ShapeError(
            f"dot_general: shapes {lhs.shape} and {rhs.shape} do not agree on contracting "
            f"dimensions {lc} / {rc} or batch dimensions {lb} / {rb}. For matmul, the last "
            "axis of the left operand must equal the second-to-last axis of the right one.")
    shape = ([lhs.shape[i] for i in lb] + [lhs.shape[i] for i in _free(lhs.ndim, lc, lb)]
             + [rhs.shape[i] for i in _free(rhs.ndim, rc, rb)])
    return ShapedArray(shape, lhs.dtype)


def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield list(range(start, start + len(x)))
        start += len(x)


def _transpose_lhs(ct, x_aval, y, dimension_numbers, swap_ans=False):
    """The cotangent of operand x of dot_general(x, y) (of dot_general(y, x) when `swap_ans`):
    ct contracted with y over y's free axes, one more dot_general."""
    (xc, yc), (xb, yb) = dimension_numbers
    x_kept = _free(x_aval.ndim, xc, xb)
    y_kept = _free(ndim_of(y), yc, yb)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(xb, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(xb, x_kept, y_kept)
    # the product's axes are batch, then the free axes of its left operand, then of its right:
    # x's free axes (from ct) and x's contracted ones (from y, in y's order). Put first the
    # operand that makes that x's own order, so no transpose follows (the weight gradient
    # x^T @ ct of x @ W comes out (in, out), as W is, not as a transposed (out, in) view)
    xc_sorted_by_y = [xc[i] for i in _argsort(yc)]
    ct_first = [*xb, *x_kept, *xc_sorted_by_y]
    y_first = [*xb, *xc_sorted_by_y, *x_kept]
    in_order = sorted(ct_first)
    if ct_first != in_order and y_first == in_order:
        return dot_general(y, ct, ((tuple(y_kept), tuple(ans_y)), (tuple(yb), tuple(ans_batch))))
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(yb)))
    return transpose(dot_general(ct, y, dims), tuple(_argsort(ct_first)))


def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined(lhs) and is_undefined(rhs):
        raise TypeError("dot_general: both operands are linear inputs; the product is bilinear, "
                        "not linear.")
    if is_undefined(lhs):
        return [_transpose_lhs(ct, lhs.aval, rhs, dimension_numbers), None]
    swapped = ((rc, lc), (rb, lb))
    return [None, _transpose_lhs(ct, rhs.aval, lhs, swapped, swap_ans=True)]


def _dot_general_jvp(primals, tangents, *, dimension_numbers):
    lhs, rhs = primals
    tl, tr = tangents
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dimension_numbers)
    a = Zero(None) if type(tl) is Zero else dot_general_p.bind(
        tl, rhs, dimension_numbers=dimension_numbers)
    b = Zero(None) if type(tr) is Zero else dot_general_p.bind(
        lhs, tr, dimension_numbers=dimension_numbers)
    return out, add_tangents(a, b)


def _skip(dims, bdim):
    """Axes of the unbatched operand renumbered for the operand with a batch axis at `bdim`."""
    return tuple(d + (d >= bdim) for d in dims)


def _outer_product(lhs, rhs, ld, rd, lb, rb):
    """A contraction-free dot_general of two batched operands as one broadcasting multiply:
    (batch, lhs batch dims, lhs free, 1...) * (batch, rhs batch dims, 1..., rhs free). numpy
    writes the product directly instead of running a matmul with an inner dimension of 1."""
    lf, rf = _free(lhs.ndim, (ld, *lb)), _free(rhs.ndim, (rd, *rb))
    lhs = transpose(lhs, (ld, *lb, *lf))
    rhs = transpose(rhs, (rd, *rb, *rf))
    n = 1 + len(lb)
    lhs = reshape(lhs, lhs.shape + (1,) * len(rf))
    rhs = reshape(rhs, rhs.shape[:n] + (1,) * len(lf) + rhs.shape[n:])
    return mul(lhs, rhs)


def _dot_general_batch(vals, dims, *, dimension_numbers):
    # No operand is moved: a batch axis of both operands becomes a batch dimension of the
    # contraction; a batch axis of one operand is one more free dimension of it, so an
    # unbatched weight against a batched activation stays one matmul over the merged batch.
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = vals
    ld, rd = dims
    if ld is not None and rd is not None:
        lc, lb, rc, rb = _skip(lc, ld), _skip(lb, ld), _skip(rc, rd), _skip(rb, rd)
        if not lc:
            return _outer_product(lhs, rhs, ld, rd, lb, rb), 0
        return dot_general(lhs, rhs, ((lc, rc), ((ld, *lb), (rd, *rb)))), 0
    if ld is not None:
        lc, lb = _skip(lc, ld), _skip(lb, ld)
        out = len(lb) + _free(ndim_of(lhs), lc, lb).index(ld)
        return dot_general(lhs, rhs, ((lc, rc), (lb, rb))), out
    rc, rb = _skip(rc, rd), _skip(rb, rd)
    n_lhs_free = ndim_of(lhs) - len(lc) - len(lb)
    out = len(lb) + n_lhs_free + _free(ndim_of(rhs), rc, rb).index(rd)
    return dot_general(lhs, rhs, ((lc, rc), (lb, rb))), out


def _fast_matmul(in_avals, out_avals, params):
    # (..., k) @ (k[, n]) called directly: numpy's matmul takes the leading axes as a stack,
    # faster than tensordot's reshape and copy, and writes into an `out=` buffer
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lhs, rhs = in_avals
    if not lb and lhs.ndim >= 2 and rhs.ndim >= 1 and lc == (lhs.ndim - 1,) and rc == (0,):
        if rhs.ndim > 2 or _blocks(lhs.shape, rhs.shape):
            return _matmul_rows, (), {}
        return xp.matmul, (), {}
    return None


def _matmul_transposed_rows(lhs, rhs):
    """lhs @ rhs.T for a tall lhs: in blocks of rows against a contiguous copy of rhs.T (the
    products against a transposed operand take OpenBLAS's slower path: (1024, 64) by
    (64, 64) 0.19 -> 0.16 ms on one core)."""
    return _matmul_rows(lhs, xp.ascontiguousarray(rhs.T))


# a long contraction (lhs.T @ rhs, both tall) in this many slices: 8 BLAS products and their
# sum beat one (1024 x 64 by 1024 x 64: 0.20 -> 0.17 ms on one core)
SLICES = 8


def _matmul_sliced_contraction(lhs, rhs):
    """lhs.T @ rhs for tall 2-D operands, the contraction cut into SLICES products summed."""
    k, m, n = lhs.shape[0], lhs.shape[1], rhs.shape[1]
    parts = xp.matmul(xp.transpose(lhs.reshape(SLICES, k // SLICES, m), (0, 2, 1)),
                      rhs.reshape(SLICES, k // SLICES, n))
    return parts.sum(axis=0)


def _fused_matmul(in_avals, out_avals, params):
    # jit's fast backend only: the blocks may round differently from numpy's one call
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lhs, rhs = in_avals
    if lb or lhs.ndim != 2 or rhs.ndim != 2:
        return None
    if lc == (1,) and rc == (1,) and _blocks(lhs.shape, rhs.shape[::-1]):
        return _matmul_transposed_rows, (), {}
    k = lhs.shape[0]
    if lc == (0,) and rc == (0,) and k >= BLOCK_MIN_ROWS and k % (SLICES * BLOCK_ROWS) == 0 \
            and min(lhs.shape[1], rhs.shape[1]) >= BLOCK_MIN_WIDTH:
        return _matmul_sliced_contraction, (), {}
    return None


dot_general_p = define(
    "dot_general", impl=_dot_general_impl, abstract=_dot_general_abstract,
    jvp=_dot_general_jvp, transpose=_dot_general_transpose, batch=_dot_general_batch,
    props=("linear", "bilinear"),
    facts=dict(fast_impl=_fast_matmul, fused_impl=_fused_matmul, fresh_result=True,
               contraction=lambda params: params["dimension_numbers"]),
    torch_name="MmBackward0")
