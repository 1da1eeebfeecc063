"""Writing at indices: scatter, scatter_add, scatter_reduce, index_add, index_put, index_fill.

Where each element goes is decided eagerly, as flat positions in the input (like indexing in
_indexing), and the recorded node is a scatter (or select) at those positions: the positions
are inputs of the node, so one backward program serves every index of the same shape.
"""

from __future__ import annotations

import numpy as np

from functrans.primitives import elementwise as E
from functrans.primitives import shape_ops as S
from functrans.primitives.ad_control import stop_gradient_p
from functrans.primitives.registry import REGISTRY
from functrans.torch._dtype import from_numpy, kind
from functrans.torch._indexing import (
    INDEX_PUT,
    broadcasts,
    copy_slices,
    numpy_index,
    positions,
    set_at_positions,
    unique_last,
)
from functrans.torch._ops import _operand, as_tensor
from functrans.torch._record import Op, composite, run
from functrans.torch._tensor import Tensor, _dim, wrap


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _flat(x):
    return S.reshape(x, (_size(x.shape),))


def _dim_positions(shape, dim, index) -> np.ndarray:
    """Flat positions, in an array of `shape`, of the elements scatter/gather along `dim` reach
    with `index` (same ndim as shape): index's own coordinates, with `dim` replaced by its
    values."""
    total, stride = np.zeros(index.shape, np.int64), 1
    for k in range(len(shape) - 1, -1, -1):
        coord = index if k == dim else np.arange(index.shape[k], dtype=np.int64).reshape(
            (-1,) + (1,) * (index.ndim - 1 - k))
        total = total + coord * stride
        stride *= shape[k]
    return total


def _hit(n, pos) -> np.ndarray:
    hit = np.zeros(n, np.bool_)
    hit[pos.reshape(-1)] = True
    return hit


def _leading(src, shape):
    """src[:shape[0], :shape[1], ...]: the part of src an index of `shape` reads."""
    if tuple(src.shape) == tuple(shape):
        return src
    return REGISTRY["slice"].bind(src, start_indices=(0,) * len(shape),
                                  limit_indices=tuple(shape), strides=(1,) * len(shape))


def _fill_at(x, value, hit):
    """x with value where the flat mask hit is set."""
    return E.select(S.reshape(hit, x.shape), S.convert_element_type(value, x.dtype), x)


def _add_at(x, src, pos):
    """x with src added at the flat positions pos (both shaped alike)."""
    return S.reshape(REGISTRY["scatter_add"].bind(_flat(x), _flat(pos), _flat(src), axis=0),
                     x.shape)


# --- scatter, scatter_add --------------------------------------------------------------------

def _scatter_fn(x, src, pos, keep, *, shape):
    return set_at_positions(x, _leading(src, shape), pos, keep, shape=shape)


_SCATTER = Op("ScatterBackward0", _scatter_fn, _scatter_fn)
_SCATTER_VALUE = composite("ScatterBackward1")(_fill_at)
_SCATTER_ADD = composite("ScatterAddBackward0")(
    lambda x, src, pos, *, ishape: _add_at(x, _leading(src, ishape), pos))


def _check_index(name, x, dim, index, src=None):
    v = x._value
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    if index.ndim != v.ndim and not (index.ndim <= 1 and v.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self "
                           "tensor")
    if src is not None and src.ndim != index.ndim and not (index.ndim <= 1 and src.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    shape, ishape = v.shape or (1,), index.shape or (1,)
    for k in range(max(v.ndim, 1)):
        if (k != dim and ishape[k] > shape[k]) or \
                (src is not None and ishape[k] > (src.shape or (1,))[k]):
            srcs = f" and to be no larger size than src {list(src.shape)}" if src is not None \
                else ""
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(v.shape)} apart from dimension {dim}{srcs}")
    bad = index[(index < 0) | (index >= shape[dim])]
    if bad.size:
        raise RuntimeError(f"index {bad.reshape(-1)[0]} is out of bounds for dimension {dim} "
                           f"with size {shape[dim]}")


def _scatter_args(name, input, dim, index, src):
    """The input tensor, dim, index array, src (checked) and flat positions of a scatter."""
    x = as_tensor(input)
    idx = as_tensor(index)._value
    v = x._value
    d = _dim(dim, max(v.ndim, 1))
    _check_index(name, x, d, idx, src._value if isinstance(src, Tensor) else None)
    if isinstance(src, Tensor) and src._value.dtype != v.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    pos = _dim_positions(v.shape or (1,), d, idx.reshape(idx.shape or (1,)).astype(np.int64))
    return x, idx, pos


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
        return run(_SCATTER_VALUE, (x, None, None), (v, _operand(src, v.dtype), _hit(v.size, pos)))
    uniq, keep = unique_last(pos)
    return run(_SCATTER, (x, src, None, None), (v, src._value, uniq, keep), {"shape": idx.shape})


def scatter_add(input, dim, index, src):
    """torch.scatter_add: input with src added at index along dim."""
    s = as_tensor(src)
    x, idx, pos = _scatter_args("scatter_add", input, dim, index, s)
    return run(_SCATTER_ADD, (x, s, None), (x._value, s._value, pos), {"ishape": idx.shape})


# --- index_add, index_fill -------------------------------------------------------------------

@composite("IndexAddBackward0")
def _index_add(x, source, pos, *, alpha):
    return _add_at(x, source if alpha == 1 else E.mul(source, np.asarray(alpha, source.dtype)),
                   pos)


def _along_dim_positions(shape, dim, index):
    """Flat positions of x.index_select(dim, index)'s elements in x (of `shape`)."""
    grid = np.arange(_size(shape), dtype=np.int64).reshape(shape)
    return np.take(grid, index, axis=dim) if shape else grid.reshape(1)[index]


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
    if sv.ndim and (sv.shape[d] if d < sv.ndim else 1) != idx.size:
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to "
                           f"source.size(dim): ({sv.shape[d] if d < sv.ndim else 1}), for dim: {d}")
    want = v.shape[:d] + (idx.size,) + v.shape[d + 1:] if v.ndim else (idx.size,)
    if sv.shape != want and not (v.ndim == 0 and sv.size == idx.size):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(v.shape)} "
                           f"source.shape = {list(sv.shape)}")
    n = (v.shape or (1,))[d]
    bad = idx[(idx < 0) | (idx >= n)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension "
                           f"{d} with size {n}")
    pos = _along_dim_positions(v.shape, d, idx.reshape(-1))
    return run(_index_add, (x, s, None), (v, sv, pos), {"alpha": alpha})


_INDEX_FILL = {False: composite("IndexFillBackward0")(_fill_at),
               True: composite("IndexFillBackward1")(_fill_at)}


def index_fill(input, dim, index, value):
    """torch.index_fill: input with value at index along dim."""
    x = as_tensor(input)
    idx = as_tensor(index)._value
    v = x._value
    d = _dim(dim, max(v.ndim, 1))
    n = (v.shape or (1,))[d]
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} "
                         f"with size {n}")
    hit = _hit(v.size, _along_dim_positions(v.shape, d, np.where(idx < 0, idx + n, idx)
                                            .reshape(-1)))
    is_tensor = isinstance(value, Tensor)
    if is_tensor and value._value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._value.ndim} dimension(s).")
    return run(_INDEX_FILL[is_tensor], (x, value if is_tensor else None, None),
               (v, value._value if is_tensor else _operand(value, v.dtype), hit))


# --- index_put -------------------------------------------------------------------------------

@composite("IndexPutBackward0")
def _index_put_accumulate(x, values, pos, *, shape):
    lead = len(values.shape) - len(shape)  # leading unit axes of the values are dropped
    values = S.reshape(values, values.shape[lead:]) if lead > 0 else values
    return _add_at(x, S.broadcast_to(values, shape), pos)


def index_put(input, indices, values, accumulate=False):
    """torch.index_put: input with values at indices (added if accumulate)."""
    x, vals = as_tensor(input), as_tensor(values)
    v, vv = x._value, vals._value
    if not isinstance(indices, tuple | list):
        raise TypeError("index_put(): argument 'indices' must be tuple of Tensors")
    pos = positions(v.shape, numpy_index(tuple(as_tensor(i) for i in indices)))
    if not broadcasts(vv.shape, pos.shape):
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vv.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(pos.shape)}")
    if vv.dtype != v.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{kind(v.dtype)} for the destination and {kind(vv.dtype)} for the "
                           f"source.")
    if not accumulate:
        return copy_slices(x, vals, pos, INDEX_PUT)
    return run(_index_put_accumulate, (x, vals, None), (v, vv, pos), {"shape": pos.shape})


# --- scatter_reduce --------------------------------------------------------------------------
# Each reduction is composed from gather, scatter_add and select, so its gradient is the one
# those rows give, which is PyTorch's: sum and mean pass the gradient through (mean divided by
# the count), prod gives the product of the other factors, and amax/amin share the gradient
# evenly among the entries equal to the result (the constant masks below, decided eagerly).

_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_sum(n, pos, vals):
    return REGISTRY["scatter_add"].bind(np.zeros(n, vals.dtype), pos, vals, axis=0)


@composite("ScatterReduceBackward0")
def _scatter_reduce_fn(x, src, pos, hit, keep_self, aux, *, reduce, ishape, layers):
    n = _size(x.shape)
    xf, sf = _flat(x), _flat(_leading(src, ishape))
    zero, one = np.zeros((), x.dtype), np.ones((), x.dtype)
    base = E.select(keep_self, xf, zero)
    if reduce in ("sum", "mean"):
        out = E.add(base, _scatter_sum(n, pos, sf))
        if reduce == "mean":
            out = E.div(out, aux)  # aux: the count of contributors (1 where none)
    elif reduce == "prod":
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
    out = E.add(E.add(result, live_x), _scatter_sum(_size(x.shape), pos, live_s))
    return S.reshape(E.select(hit, out, xf), x.shape)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """torch.scatter_reduce: src reduced into input at index along dim ("sum", "prod",
    "mean", "amax" or "amin"; include_self=False leaves input's values out of the reduction
    where something is scattered)."""
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's aliases
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    s = as_tensor(src)
    x, idx, pos = _scatter_args("scatter_reduce", input, dim, index, s)
    v, sv, pos = x._value, s._value, pos.reshape(-1)
    n = v.size
    hit = _hit(n, pos)
    keep_self = ~hit if not include_self else np.ones(n, np.bool_)
    svals = sv[tuple(slice(0, k) for k in (idx.shape or (1,)))].reshape(-1) if sv.ndim else \
        sv.reshape(-1)
    counts = np.bincount(pos, minlength=n)
    layers = 0
    if reduce == "mean":
        aux = np.maximum(counts + keep_self.astype(np.int64), 1).astype(v.dtype)
        if v.dtype.kind not in "fc":  # integer mean: PyTorch floors
            total = np.where(keep_self, v.reshape(-1), 0)
            np.add.at(total, pos, svals)
            out = np.where(hit, total // aux, v.reshape(-1)).reshape(v.shape)
            return wrap(out.astype(v.dtype))
    elif reduce == "prod":
        order = np.argsort(pos, kind="stable")
        ranks = np.empty(pos.size, np.int64)
        starts = np.concatenate(([0], np.cumsum(counts)))[pos[order]]
        ranks[order] = np.arange(pos.size) - starts
        aux = ranks
        layers = int(counts.max()) if counts.size else 0
    elif reduce in ("amax", "amin"):
        pick = np.maximum if reduce == "amax" else np.minimum
        flat = v.reshape(-1)
        result = np.where(keep_self, flat, -np.inf if reduce == "amax" else np.inf).astype(
            np.result_type(v.dtype, np.float32) if v.dtype.kind != "f" else v.dtype)
        pick.at(result, pos, svals)
        result = result.astype(v.dtype)
        # as PyTorch counts them: an input entry equal to the result takes a share even when
        # include_self=False (its own gradient is then zeroed)
        self_is = hit & (flat == result)
        src_is = svals == result[pos]
        share = self_is.astype(np.int64)
        np.add.at(share, pos, src_is.astype(np.int64))
        share = np.maximum(share, 1).astype(v.dtype)
        ishape = tuple(idx.shape or (1,))
        return run(_scatter_extreme_fn, (x, s, None, None, None, None, None),
                   (v, sv, pos, hit, result, ((self_is & keep_self) / share).astype(v.dtype),
                    (src_is / share[pos]).astype(v.dtype)), {"ishape": ishape})
    else:
        aux = np.zeros((), v.dtype)
    ishape = idx.shape or (1,)
    op = _scatter_reduce_fn
    params = {"reduce": reduce, "ishape": tuple(ishape), "layers": layers}
    return run(op, (x, s, None, None, None, None), (v, sv, pos, hit, keep_self, aux), params)
