"""Writing at indices: scatter, scatter_add, scatter_reduce, index_add, index_put, index_fill.

As in _indexing, where each element goes is decided eagerly, as flat positions that are an
input of the node (a scatter or select at those positions), so one backward program serves
every index of the same shape.
"""

from __future__ import annotations

import math

import numpy as np

from functrans.primitives import elementwise as E
from functrans.primitives import indexing as P
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.primitives.ad_control import stop_gradient_p
from functrans.torch._dtype import from_numpy, kind
from functrans.torch._indexing import (INDEX_PUT, broadcast_values, check_broadcasts, copy_slices,
                                       fill, fill_where, numpy_index, positions,
                                       set_at_positions, unique_last)
from functrans.torch._ops import _operand, as_tensor
from functrans.torch._record import composite, run
from functrans.torch._tensor import Tensor, _dim, wrap


def _flat(x):
    return S.reshape(x, (math.prod(x.shape),))


def _hit(shape, pos) -> np.ndarray:
    """The mask, shaped `shape`, of the flat positions pos."""
    hit = np.zeros(math.prod(shape), np.bool_)
    hit[pos.reshape(-1)] = True
    return hit.reshape(shape)


def _leading(src, shape):
    """src[:shape[0], :shape[1], ...]: the part of src an index of `shape` reads."""
    if tuple(src.shape) == tuple(shape):
        return src
    return S.slice_p.bind(src, start_indices=(0,) * len(shape), limit_indices=tuple(shape),
                          strides=(1,) * len(shape))


def _add_at(x, src, pos):
    """x with src added at the flat positions pos (both shaped alike)."""
    return S.reshape(P.scatter_add(_flat(x), _flat(pos), _flat(src), axis=0), x.shape)


def _check_bounds(idx, n, dim, error=RuntimeError, low=0):
    bad = idx[(idx < low) | (idx >= n)]
    if bad.size:
        raise error(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} "
                    f"with size {n}")


# --- scatter, scatter_add --------------------------------------------------------------------

_SCATTER = composite("ScatterBackward0")(lambda x, src, pos, keep, *, shape: set_at_positions(
    x, _leading(src, shape), pos, keep, shape=shape))
_SCATTER_VALUE = composite("ScatterBackward1")(fill_where)
_SCATTER_ADD = composite("ScatterAddBackward0")(
    lambda x, src, pos, *, ishape: _add_at(x, _leading(src, ishape), pos))


def _scatter_args(name, input, dim, index, src):
    """The input tensor, index array and flat positions of a scatter (all checked)."""
    x = as_tensor(input)
    index = as_tensor(index)._value
    v = x._value
    d = _dim(dim, max(v.ndim, 1))
    s = src._value if isinstance(src, Tensor) else None
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    if index.ndim != v.ndim and not (index.ndim <= 1 and v.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    if s is not None and s.ndim != index.ndim and not (index.ndim <= 1 and s.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    shape, ishape = v.shape or (1,), index.shape or (1,)
    for k in range(max(v.ndim, 1)):
        if (k != d and ishape[k] > shape[k]) or \
                (s is not None and ishape[k] > (s.shape or (1,))[k]):
            srcs = "" if s is None else f" and to be no larger size than src {list(s.shape)}"
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(v.shape)} apart from dimension {d}{srcs}")
    _check_bounds(index, shape[d], d)
    if s is not None and s.dtype != v.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    grids = list(np.indices(ishape, sparse=True))  # index's own coordinates, but along d
    grids[d] = index.reshape(ishape).astype(np.int64)
    return x, index, positions(shape, tuple(grids))


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """torch.scatter: input with src (or value) written at index along dim."""
    if reduce is not None:
        raise NotImplementedError("functrans.torch: scatter(reduce=...) is not provided; use "
                                  "scatter_add, or scatter_reduce's formula composed from "
                                  "gather and masked ops")
    src = value if src is None else src
    x, idx, pos = _scatter_args("scatter", input, dim, index, src)
    v = x._value
    if not isinstance(src, Tensor):
        return run(_SCATTER_VALUE, (x, None, None), (v, _hit(v.shape, pos),
                                                     _operand(src, v.dtype)))
    uniq, keep = unique_last(pos)
    return run(_SCATTER, (x, src, None, None), (v, src._value, uniq, keep), {"shape": idx.shape})


def scatter_add(input, dim, index, src):
    """torch.scatter_add: input with src added at index along dim."""
    s = as_tensor(src)
    x, idx, pos = _scatter_args("scatter_add", input, dim, index, s)
    return run(_SCATTER_ADD, (x, s, None), (x._value, s._value, pos), {"ishape": idx.shape})


# --- index_add, index_fill, index_put ------------------------------------------------------

_INDEX_ADD = composite("IndexAddBackward0")(lambda x, source, pos, *, alpha: _add_at(
    x, source if alpha == 1 else E.mul(source, np.asarray(alpha, source.dtype)), pos))


def _along_dim(shape, dim, index):
    """Flat positions of x.index_select(dim, index)'s elements in x (of `shape`)."""
    return positions(shape or (1,), (slice(None),) * dim + (index.reshape(-1),))


def index_add(input, dim, index, source, *, alpha=1):
    """torch.index_add: input with alpha * source added at index along dim."""
    x, s = as_tensor(input), as_tensor(source)
    idx = as_tensor(index)._value
    v, sv = x._value, s._value
    d = _dim(dim, max(v.ndim, 1))
    if idx.ndim > 1:
        raise IndexError("index_add_(): Index is supposed to be a vector")
    if idx.dtype.kind not in "iu":
        raise IndexError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                         f"{from_numpy(idx.dtype)}")
    if sv.dtype != v.dtype:
        raise RuntimeError(f"index_add_(): self ({kind(v.dtype)}) and source "
                           f"({kind(sv.dtype)}) must have the same scalar type")
    n_src = sv.shape[d] if d < sv.ndim else 1
    if sv.ndim and n_src != idx.size:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({n_src}), for dim: {d}")
    want = v.shape[:d] + (idx.size,) + v.shape[d + 1:] if v.ndim else (idx.size,)
    if sv.shape != want and not (v.ndim == 0 and sv.size == idx.size):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(v.shape)} "
                           f"source.shape = {list(sv.shape)}")
    _check_bounds(idx, (v.shape or (1,))[d], d)
    return run(_INDEX_ADD, (x, s, None), (v, sv, _along_dim(v.shape, d, idx)), {"alpha": alpha})


_INDEX_FILL = {t: composite(f"IndexFillBackward{int(t)}")(fill_where) for t in (False, True)}


def index_fill(input, dim, index, value):
    """torch.index_fill: input with value at index along dim."""
    x = as_tensor(input)
    idx = as_tensor(index)._value
    v = x._value
    d = _dim(dim, max(v.ndim, 1))
    n = (v.shape or (1,))[d]
    _check_bounds(idx, n, d, IndexError, -n)
    hit = _hit(v.shape, _along_dim(v.shape, d, np.where(idx < 0, idx + n, idx)))
    if isinstance(value, Tensor) and value._value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._value.ndim} dimension(s).")
    return fill(_INDEX_FILL, x, hit, value)


_INDEX_PUT_ADD = composite("IndexPutBackward0")(
    lambda x, values, pos, *, shape: _add_at(x, broadcast_values(values, shape, x.dtype), pos))


def index_put(input, indices, values, accumulate=False):
    """torch.index_put: input with values at indices (added if accumulate)."""
    x, vals = as_tensor(input), as_tensor(values)
    v, vv = x._value, vals._value
    if not isinstance(indices, tuple | list):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors")
    pos = positions(v.shape, numpy_index(tuple(as_tensor(i) for i in indices)))
    check_broadcasts(vv.shape, pos.shape)
    if vv.dtype != v.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{kind(v.dtype)} for the destination and {kind(vv.dtype)} for the "
                           f"source.")
    if not accumulate:
        return copy_slices(x, vals, pos, INDEX_PUT)
    return run(_INDEX_PUT_ADD, (x, vals, None), (v, vv, pos), {"shape": pos.shape})


# --- scatter_reduce --------------------------------------------------------------------------
# The values meeting at each written position are gathered into one row (input's value, then
# src's in order, padded with the reduction's identity), and the row reduced by the reduction
# row of the table, so the gradient is that row's under PyTorch's convention: sum and mean pass
# it through (mean divided by the count), prod gives prod / x (the other factors where there
# are zeros), amax and amin share it evenly among the entries equal to the result.

_REDUCE_ROWS = {"sum": R.reduce_sum, "mean": R.reduce_sum, "prod": R.reduce_prod,
                "amax": R.reduce_max, "amin": R.reduce_min}


@composite("ScatterReduceBackward0")
def _scatter_reduce_fn(x, src, rows, targets, hit, count, *, reduce, ishape):
    xf, sf = _flat(x), _flat(_leading(src, ishape))
    identity = np.asarray(_identity(reduce, np.dtype(x.dtype)), x.dtype).reshape(1)
    # an input value left out (include_self=False) but equal to the result still counts among
    # amax's ties, as PyTorch counts them, with no gradient of its own
    table = S.concatenate([xf, sf, identity, stop_gradient_p.bind(xf)], 0)
    out = _REDUCE_ROWS[reduce](S.reshape(P.gather(table, _flat(rows), axis=0), rows.shape), (1,))
    if reduce == "mean":
        out = E.div(out, count)
    placed = P.scatter_add(np.zeros(xf.shape[0], out.dtype), targets, out, axis=0)
    return S.reshape(E.select(hit, placed, xf), x.shape)


def _identity(reduce, dtype):
    if reduce not in ("amax", "amin"):
        return 1 if reduce == "prod" else 0
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    return -big if reduce == "amax" else big


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce: src reduced into input at index along dim ("sum", "prod",
    "mean", "amax" or "amin"; include_self=False leaves input's values out where something
    is scattered)."""
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's aliases
    if reduce not in _REDUCE_ROWS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    s = as_tensor(src)
    x, idx, pos = _scatter_args("scatter_reduce", input, dim, index, s)
    v, sv, pos = x._value, s._value, pos.reshape(-1)
    n, ishape = v.size, tuple(idx.shape or (1,))
    m = pos.size
    targets, group, counts = np.unique(pos, return_inverse=True, return_counts=True)
    order, starts = np.argsort(group, kind="stable"), np.cumsum(counts) - counts
    rank = np.empty(m, np.int64)  # each src element's place in its target's row
    rank[order] = np.arange(m) - starts[group[order]]
    # one row per target of indices into [x (n), src (m), the identity, x held constant (n)]
    rows = np.full((targets.size, 1 + (int(counts.max()) if m else 0)), n + m, np.int64)
    rows[group, 1 + rank] = n + np.arange(m)
    svals = sv[tuple(slice(0, k) for k in ishape)].reshape(-1) if sv.ndim else sv.reshape(-1)
    if include_self:
        rows[:, 0] = targets
    elif reduce in ("amax", "amin") and m:
        best = (np.maximum if reduce == "amax" else np.minimum).reduceat(svals[order], starts)
        ties = v.reshape(-1)[targets] == best
        rows[ties, 0] = n + m + 1 + targets[ties]
    count = (counts + int(include_self)).astype(v.dtype)
    if reduce == "mean" and v.dtype.kind not in "fc":  # integer mean: PyTorch floors
        total = v.reshape(-1) * int(include_self)
        np.add.at(total, pos, svals)
        out = v.reshape(-1).copy()
        out[targets] = total[targets] // count
        return wrap(out.reshape(v.shape))
    return run(_scatter_reduce_fn, (x, s, None, None, None, None),
               (v, sv, rows, targets, _hit((n,), targets), count),
               {"reduce": reduce, "ishape": ishape})
