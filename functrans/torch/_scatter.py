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
from functrans.primitives import shape_ops as S
from functrans.primitives.ad_control import stop_gradient_p
from functrans.torch._dtype import from_numpy, kind
from functrans.torch._indexing import (INDEX_PUT, broadcast_values, check_broadcasts, copy_slices,
                                       fill_where, numpy_index, positions, set_at_positions,
                                       unique_last)
from functrans.torch._ops import _operand, as_tensor
from functrans.torch._record import Op, composite, run
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


def _scatter_sum(n, pos, vals):
    return P.scatter_add(np.zeros(n, vals.dtype), pos, vals, axis=0)


def _add_at(x, src, pos):
    """x with src added at the flat positions pos (both shaped alike)."""
    return S.reshape(P.scatter_add(_flat(x), _flat(pos), _flat(src), axis=0), x.shape)


def _check_bounds(idx, n, dim, error=RuntimeError, low=0):
    bad = idx[(idx < low) | (idx >= n)]
    if bad.size:
        raise error(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} "
                    f"with size {n}")


# --- scatter, scatter_add --------------------------------------------------------------------

def _scatter_fn(x, src, pos, keep, *, shape):
    return set_at_positions(x, _leading(src, shape), pos, keep, shape=shape)


_SCATTER = Op("ScatterBackward0", _scatter_fn, _scatter_fn)
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
    is_tensor = isinstance(value, Tensor)
    if is_tensor and value._value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._value.ndim} dimension(s).")
    return run(_INDEX_FILL[is_tensor], (x, None, value if is_tensor else None),
               (v, hit, value._value if is_tensor else _operand(value, v.dtype)))


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
# Each reduction is composed from gather, scatter_add and select, so its gradient is the one
# those rows give, which is PyTorch's: sum and mean pass the gradient through (mean divided by
# the count), prod gives the product of the other factors, and amax/amin share the gradient
# evenly among the entries equal to the result (the constant masks below, decided eagerly).

@composite("ScatterReduceBackward0")
def _scatter_reduce_fn(x, src, pos, hit, keep_self, aux, *, reduce, ishape, layers):
    n = math.prod(x.shape)
    xf, sf = _flat(x), _flat(_leading(src, ishape))
    zero, one = np.zeros((), x.dtype), np.ones((), x.dtype)
    if reduce in ("sum", "mean"):
        out = E.add(E.select(keep_self, xf, zero), _scatter_sum(n, pos, sf))
        if reduce == "mean":
            out = E.div(out, aux)  # aux: the count of contributors (1 where none)
    else:  # prod
        out = E.select(keep_self, xf, one)
        for k in range(layers):  # aux: each src element's rank among those at its position
            mine = E.eq(aux, np.asarray(k, aux.dtype))
            placed = _scatter_sum(n, pos, E.select(mine, sf, zero))
            reached = _scatter_sum(n, pos, E.select(mine, np.ones(sf.shape, x.dtype), zero))
            out = E.mul(out, E.select(E.gt(reached, zero), placed, one))
    return S.reshape(E.select(hit, out, xf), x.shape)


@composite("ScatterReduceBackward0")
def _scatter_extreme_fn(x, src, pos, hit, result, w_self, w_src, *, ishape):
    # amax, amin: the result itself, plus zero-valued terms whose gradients are the shares
    xf, sf = _flat(x), _flat(_leading(src, ishape))
    live_x = E.mul(E.sub(xf, stop_gradient_p.bind(xf)), w_self)
    live_s = E.mul(E.sub(sf, stop_gradient_p.bind(sf)), w_src)
    out = E.add(E.add(result, live_x), _scatter_sum(math.prod(x.shape), pos, live_s))
    return S.reshape(E.select(hit, out, xf), x.shape)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce: src reduced into input at index along dim ("sum", "prod",
    "mean", "amax" or "amin"; include_self=False leaves input's values out where something
    is scattered)."""
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's aliases
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    s = as_tensor(src)
    x, idx, pos = _scatter_args("scatter_reduce", input, dim, index, s)
    v, sv, pos = x._value, s._value, pos.reshape(-1)
    flat, n, ishape = v.reshape(-1), v.size, tuple(idx.shape or (1,))
    hit = _hit((n,), pos)
    keep_self = ~hit if not include_self else np.ones(n, np.bool_)
    svals = sv[tuple(slice(0, k) for k in ishape)].reshape(-1) if sv.ndim else sv.reshape(-1)
    counts = np.bincount(pos, minlength=n)
    aux, layers = np.zeros((), v.dtype), 0
    if reduce == "mean":
        aux = np.maximum(counts + keep_self.astype(np.int64), 1).astype(v.dtype)
        if v.dtype.kind not in "fc":  # integer mean: PyTorch floors
            total = np.where(keep_self, flat, 0)
            np.add.at(total, pos, svals)
            return wrap(np.where(hit, total // aux, flat).reshape(v.shape).astype(v.dtype))
    elif reduce == "prod":
        order = np.argsort(pos, kind="stable")
        aux = np.empty(pos.size, np.int64)
        aux[order] = np.arange(pos.size) - np.concatenate(([0], np.cumsum(counts)))[pos[order]]
        layers = int(counts.max()) if counts.size else 0
    elif reduce in ("amax", "amin"):
        work = np.result_type(v.dtype, np.float32) if v.dtype.kind != "f" else v.dtype
        result = np.where(keep_self, flat, -np.inf if reduce == "amax" else np.inf).astype(work)
        (np.maximum if reduce == "amax" else np.minimum).at(result, pos, svals)
        result = result.astype(v.dtype)
        # as PyTorch counts them: an input entry equal to the result takes a share even when
        # include_self=False (its own gradient is then zeroed)
        self_is, src_is = hit & (flat == result), svals == result[pos]
        share = self_is.astype(np.int64)
        np.add.at(share, pos, src_is.astype(np.int64))
        share = np.maximum(share, 1).astype(v.dtype)
        return run(_scatter_extreme_fn, (x, s, None, None, None, None, None),
                   (v, sv, pos, hit, result, ((self_is & keep_self) / share).astype(v.dtype),
                    (src_is / share[pos]).astype(v.dtype)), {"ishape": ishape})
    return run(_scatter_reduce_fn, (x, s, None, None, None, None),
               (v, sv, pos, hit, keep_self, aux),
               {"reduce": reduce, "ishape": ishape, "layers": layers})
