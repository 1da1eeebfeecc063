"""Indexing: x[idx] (basic indexing gives views, advanced indexing copies), x[idx] = v (one
CopySlices node), gather, index_select, masked ops, sort, median, take, nonzero.

Which elements are read (or written) is decided eagerly, as flat positions that are an input
of the node, so one backward program serves every index of the same shape.
"""

from __future__ import annotations

import math

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from functrans.primitives import indexing as P
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.torch._grad_mode import MODE
from functrans.torch._ops import _operand, as_tensor
from functrans.torch._record import Op, composite, run
from functrans.torch._reductions import at_indices, return_type, under_convention, with_indices
from functrans.torch._shape import contiguous, expand, flatten, reshape, unsqueeze, view
from functrans.torch._tensor import Tensor, _dim, wrap
from functrans.torch._views import as_view, gather_flat

def numpy_index(idx) -> tuple:
    """x[idx]'s index as numpy takes it: tensors as arrays, boolean masks as their nonzero()
    arrays, and a trailing Ellipsis, so that numpy returns a 0-d view (PyTorch's x[i] is one),
    not a scalar copy."""
    out = []
    for i in idx if isinstance(idx, tuple) else (idx,):
        i = i._value if isinstance(i, Tensor) else i
        if i is None or i is Ellipsis:
            out.append(i)
        elif isinstance(i, slice):
            out.append(slice(*(None if v is None else int(getattr(v, "_value", v))
                               for v in (i.start, i.stop, i.step))))
            if out[-1].step is not None and out[-1].step <= 0:
                raise ValueError("step must be greater than zero")
        elif isinstance(i, bool | np.bool_ | int | np.integer):
            out.append(bool(i) if isinstance(i, bool | np.bool_) else int(i))
        else:
            arr = np.asarray(i)
            if arr.dtype == np.bool_:
                out.extend(np.nonzero(arr) if arr.ndim else (bool(arr),))
                continue
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int64)
            if arr.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            out.append(arr)
    return tuple(out) if any(i is Ellipsis for i in out) else (*out, Ellipsis)


def positions(shape, idx) -> np.ndarray:
    """The row-major flat positions, in an array of `shape`, of the elements `x[idx]` selects
    (shaped like `x[idx]`), at a cost of the size of the result, not of x."""
    nd = len(shape)
    if nd == 0:
        return np.asarray(np.zeros((), np.int64)[idx])
    total, stride = None, 1
    for k in range(nd - 1, -1, -1):
        grid = (np.arange(shape[k], dtype=np.int64) * stride).reshape((-1,) + (1,) * (nd - 1 - k))
        term = np.broadcast_to(grid, shape)[idx]
        total = term if total is None else total + term
        stride *= shape[k]
    return np.asarray(total)


# x[idx]: basic indexing gives numpy's view (what PyTorch returns), advanced a copy
_GETITEM_OPS = {name: Op(name, lambda x, pos, *, idx: x[idx], gather_flat, forward_params=("idx",))
                for name in ("SelectBackward0", "SliceBackward0", "IndexBackward0",
                             "UnsqueezeBackward0", "AliasBackward0", "MaskedSelectBackward0")}


def _getitem_name(np_idx):
    if any(isinstance(i, bool | np.ndarray) for i in np_idx):
        return "IndexBackward0"
    for i in reversed(np_idx):
        if isinstance(i, int):
            return "SelectBackward0"
        if isinstance(i, slice) and i != slice(None):
            return "SliceBackward0"
        if i is None:
            return "UnsqueezeBackward0"
    return "AliasBackward0"


def getitem(input, idx, name=None):
    x = as_tensor(input)
    np_idx = numpy_index(idx)
    pos = positions(x._value.shape, np_idx) if x._requires_grad and MODE.enabled else None
    out = run(_GETITEM_OPS[name or _getitem_name(np_idx)], (x, None), (x._value, pos),
              {"idx": np_idx})
    return as_view(x, out, lambda t: getitem(t, np_idx))


def broadcast_values(v, shape, dtype):
    """v as the values written at an index of `shape`: its leading axes dropped (numpy drops
    leading unit axes), converted to dtype and broadcast to shape."""
    lead = len(v.shape) - len(shape)
    v = S.reshape(v, v.shape[lead:]) if lead > 0 else v
    return S.broadcast_to(S.convert_element_type(v, dtype), shape)


def set_at_positions(x, v, pos, keep, *, shape):
    """x with the elements at flat positions `pos` (unique) replaced by those of v (broadcast
    to `shape`) at flat indices `keep`."""
    n = math.prod(x.shape)
    vb = broadcast_values(v, shape, x.dtype)
    vals = P.gather(S.reshape(vb, (math.prod(shape),)), keep, axis=0)
    placed = P.scatter_add(np.zeros(n, x.dtype), pos, vals, axis=0)
    hit = E.gt(P.scatter_add(np.zeros(n, np.int64), pos, np.ones(pos.shape, np.int64), axis=0),
               np.zeros((), np.int64))
    return S.reshape(E.select(hit, placed, S.reshape(x, (n,))), x.shape)


_COPY_SLICES = Op("CopySlices", set_at_positions, set_at_positions)
INDEX_PUT = Op("IndexPutBackward0", set_at_positions, set_at_positions)


def unique_last(pos):
    """Unique flat positions and, for each, the last update aimed at it (numpy's rule)."""
    flat = pos.reshape(-1)
    uniq, first_from_end = np.unique(flat[::-1], return_index=True)
    return uniq.astype(np.int64), (flat.size - 1 - first_from_end).astype(np.int64)


def drop_leading_units(shape: tuple) -> tuple:
    """A value's shape as PyTorch writes it at an index: its leading unit axes dropped."""
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def check_broadcasts(shape, target):
    """PyTorch's error unless values of `shape` broadcast to `target` (leading unit axes of
    the values dropped)."""
    shape = drop_leading_units(tuple(shape))
    try:
        if np.broadcast_shapes(shape, target) == target:
            return
    except ValueError:
        pass
    raise RuntimeError(f"shape mismatch: value tensor of shape {list(shape)} cannot be "
                       f"broadcast to indexing result of shape {list(target)}")


def copy_slices(base, value, pos, op=_COPY_SLICES):
    """base with the elements at flat positions `pos` replaced by value (one CopySlices node):
    the out-of-place form of x[idx] = value and of an in-place op on a view."""
    is_tensor = isinstance(value, Tensor)
    vv = value._value if is_tensor else np.asarray(_operand(value, base._value.dtype))
    target = tuple(np.shape(pos))
    check_broadcasts(np.shape(vv), target)
    uniq, keep = unique_last(np.asarray(pos))
    return run(op, (base, value if is_tensor else None, None, None), (base._value, vv, uniq, keep),
               {"shape": target})


def setitem_out_of_place(x, idx, value):
    """x with x[idx] replaced by value, as a new tensor (one CopySlices node)."""
    return copy_slices(x, value, positions(x._value.shape, numpy_index(idx)))


_GATHER = at_indices("GatherBackward0")


def gather(input, dim, index):
    """torch.gather (also take_along_dim): values of input at index along dim."""
    x = as_tensor(input)
    idx = as_tensor(index)._value
    d = _dim(dim, x._value.ndim)
    if idx.ndim != x._value.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    return run(_GATHER, (x, None), (x._value, idx.astype(np.int64)), {"dim": d})


take_along_dim = gather


# --- sort, argsort, topk: indices decided eagerly, values one gather along dim -------------

_SORT, _TOPK = at_indices("SortBackward0"), at_indices("TopkBackward0")
_SortResult, _TopkResult = return_type("sort"), return_type("topk")


def _order(v, dim, descending):
    """(dim, stable order along dim); descending keeps equal entries in order and puts NaN
    first, as PyTorch does (NaN counts as the largest value), and as jax.numpy's argsort."""
    if v.ndim == 0:
        return 0, np.zeros((), np.int64)
    d = _dim(dim, v.ndim)
    return d, fnp.argsort(v, axis=d, descending=descending)


def sort(input, dim=-1, descending=False, stable=False):
    """torch.sort: input sorted along dim, as a (values, indices) pair."""
    x = as_tensor(input)
    d, idx = _order(x._value, dim, descending)
    return with_indices(_SortResult, _SORT, x, idx, d)


def argsort(input, dim=-1, descending=False, stable=False):
    """torch.argsort: the indices that sort input along dim."""
    return wrap(_order(as_tensor(input)._value, dim, descending)[1])


def topk(input, k, dim=-1, largest=True, sorted=True):
    """torch.topk: the k largest (or smallest) elements along dim, as (values, indices)."""
    x = as_tensor(input)
    v = x._value
    d = _dim(dim, max(v.ndim, 1))
    if not 0 <= k <= (v.shape[d] if v.ndim else 1):
        raise RuntimeError("selected index k out of range")
    d, idx = _order(v, d, largest)
    idx = np.take(idx, np.arange(k), axis=d) if v.ndim else idx
    return with_indices(_TopkResult, _TOPK, x, idx, d)


_INDEX_SELECT = composite("IndexSelectBackward0")(
    lambda x, index, *, dim: fnp.take(x, index, axis=dim))


def index_select(input, dim, index):
    """torch.index_select: the entries of input at index along dim."""
    x = as_tensor(input)
    idx = as_tensor(index)._value.astype(np.int64)
    return run(_INDEX_SELECT, (x, None), (x._value, idx), {"dim": _dim(dim, x._value.ndim)})


def fill_where(x, mask, value):
    """x with value where mask is set."""
    return E.select(mask, S.convert_element_type(value, x.dtype), x)


def fill(ops, x, mask, value):
    """x with value where mask (an array) is set: ops[True] for a tensor value, else ops[False]."""
    if isinstance(value, Tensor):
        return run(ops[True], (x, None, value), (x._value, mask, value._value))
    return run(ops[False], (x, None, None), (x._value, mask, _operand(value, x._value.dtype)))


_MASKED_FILL = {t: composite(f"MaskedFillBackward{int(t)}")(fill_where) for t in (False, True)}


def masked_fill(input, mask, value):
    """torch.masked_fill: input with value where mask is True."""
    return fill(_MASKED_FILL, as_tensor(input), as_tensor(mask)._value.astype(np.bool_), value)


def masked_select(input, mask):
    """torch.masked_select: the elements of input where mask is True, as a 1-d tensor."""
    x = as_tensor(input)
    m = as_tensor(mask)._value.astype(np.bool_)
    m = np.broadcast_to(m, np.broadcast_shapes(m.shape, x._value.shape))
    if m.shape != x._value.shape:
        x = expand(x, m.shape)
    return getitem(x, wrap(m), "MaskedSelectBackward0")


def select(input, dim, index):
    """torch.select: a view of input at index along dim, that dimension removed."""
    x = as_tensor(input)
    idx = [slice(None)] * x._value.ndim
    idx[_dim(dim, x._value.ndim)] = index
    return getitem(x, tuple(idx))


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element repeated: an int count as PyTorch records it (unsqueeze, expand, a
    contiguous copy, a view), a tensor of counts as an index_select."""
    if repeats is None:  # torch.repeat_interleave(counts): arange(n) repeated by counts
        counts = as_tensor(input)._value
        return wrap(np.repeat(np.arange(counts.size, dtype=np.int64), counts.reshape(-1)))
    x = as_tensor(input)
    x, d = (flatten(x), 0) if dim is None else (x, _dim(dim, max(x._value.ndim, 1)))
    x = reshape(x, (1,)) if x._value.ndim == 0 else x
    n = x._value.shape[d]
    if isinstance(repeats, Tensor):
        counts = repeats._value.reshape(-1)
        counts = np.broadcast_to(counts, (n,)) if counts.size == 1 else counts
        if counts.size and counts.min() < 0:
            raise RuntimeError("repeats can not be negative")
        if counts.size != n:
            raise RuntimeError("repeats must have the same size as input along dim")
        return index_select(x, d, wrap(np.repeat(np.arange(n, dtype=np.int64), counts)))
    r = int(repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    shp = x._value.shape
    e = expand(unsqueeze(x, d + 1), shp[:d + 1] + (r,) + shp[d + 1:])
    return view(contiguous(e), shp[:d] + (shp[d] * r,) + shp[d + 1:])


def take(input, index):
    """torch.take: the elements of the flattened input at index."""
    return getitem(reshape(as_tensor(input), (-1,)), as_tensor(index))


def nonzero(input, *, as_tuple=False):
    """torch.nonzero: the indices of the nonzero elements, one row each (or a tuple)."""
    nz = np.nonzero(as_tensor(input)._value)
    if as_tuple:
        return tuple(wrap(a.astype(np.int64)) for a in nz)
    return wrap(np.stack(nz, axis=-1).astype(np.int64) if nz else np.zeros((0, 0), np.int64))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """torch.isin: whether each of `elements` is in `test_elements` (a bool tensor)."""
    e, t = (getattr(a, "_value", a) for a in (elements, test_elements))
    return wrap(np.isin(np.asarray(e), np.asarray(t), invert=invert))


# --- median, nanmedian: the lower middle value, indices decided eagerly ----------------------

def _median_all(x, ties):
    # the maximum of the entries equal to the median (the NaNs when it is NaN), so its gradient
    # is shared evenly among them by reduce_max's torch_nan rule (evenly_distribute_backward)
    return R.reduce_max(P.gather(S.reshape(x, (math.prod(x.shape),)), ties, axis=0), (0,))


def _median_ops(name):
    """(the op over every element, whose value is the entry at `at` itself, -0.0 included;
    the op with dim)."""
    op = Op(f"{name.title()}Backward0", lambda x, ties, *, at: x.reshape(-1)[at], _median_all,
            forward_params=("at",))
    return under_convention("torch_nan", op), at_indices(f"{name.title()}Backward1")


_MEDIAN_OPS = {name: _median_ops(name) for name in ("median", "nanmedian")}
_MedianResult = return_type("median")


def _median_index(v, d, skip_nan):
    """Per slice along d: the index of the lower middle value, or of the first NaN (with
    `skip_nan`: the lower middle of the non-NaN values, NaNs sorting last)."""
    order = np.argsort(v, axis=d, kind="stable")
    n = v.shape[d]
    nans = np.isnan(v).sum(axis=d, keepdims=True) if v.dtype.kind in "fc" else \
        np.zeros_like(np.take(v, [0], axis=d), np.int64)
    k = np.maximum((n - nans - 1) // 2, 0) if skip_nan else \
        np.where(nans > 0, n - nans, (n - 1) // 2)
    return np.take_along_axis(order, k.astype(np.int64), axis=d)


def median(input, dim=None, keepdim=False, *, _name="median"):
    """torch.median: the lower median; with dim, a (values, indices) pair. The gradient goes
    to the chosen entry (shared by the entries equal to it for the full reduction)."""
    x = as_tensor(input)
    v = x._value
    op_all, op_dim = _MEDIAN_OPS[_name]
    if dim is None:
        if v.size == 0:
            return wrap(np.asarray(np.nan, v.dtype))
        flat = v.reshape(-1)
        at = int(_median_index(flat, 0, _name == "nanmedian")[0])
        m = flat[at]
        if v.dtype.kind not in "fc":
            return wrap(np.asarray(m))
        ties = np.flatnonzero(np.isnan(flat) if np.isnan(m) else flat == m)
        return run(op_all, (x, None), (v, ties), {"at": at})
    if v.ndim == 0:
        return with_indices(_MedianResult, op_dim, x, np.zeros((), np.int64), 0)
    d = _dim(dim, v.ndim)
    if v.shape[d] == 0:
        raise IndexError(f"{_name}(): Expected reduction dim {d} to have non-zero size.")
    idx = _median_index(v, d, _name == "nanmedian")
    return with_indices(_MedianResult, op_dim, x, idx, d, keepdim)


def nanmedian(input, dim=None, keepdim=False):
    """torch.nanmedian: the lower median ignoring NaNs (NaN only when all are); with dim, a
    (values, indices) pair."""
    return median(input, dim, keepdim, _name="nanmedian")


# --- as_strided: elements of the input's storage at given sizes and strides -------------------

_AS_STRIDED = composite("AsStridedBackward0")(
    lambda x, pos: S.reshape(gather_flat(x, S.reshape(pos, (pos.size,))), pos.shape))


def as_strided(input, size, stride, storage_offset=None):
    """torch.as_strided: the elements at storage_offset + sum(i_k * stride_k) of the input's
    (contiguous) storage; overlapping elements sum their gradients, as in PyTorch. A copy here,
    not a view sharing storage."""
    x = as_tensor(input)
    v = x._value
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    offset = 0 if storage_offset is None else int(storage_offset)
    pos = sum((g * st for g, st in zip(np.indices(size, sparse=True), stride)),
              np.full(size, offset, np.int64))
    if pos.size and (pos.min() < 0 or pos.max() >= v.size):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset} require a storage of {int(pos.max()) + 1} elements "
                           f"but the input has {v.size}")
    return run(_AS_STRIDED, (x, None), (np.ascontiguousarray(v), pos))
