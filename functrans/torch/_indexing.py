"""Indexing: x[idx] (basic indexing gives views, advanced indexing a gather), x[idx] = v (one
CopySlices node), gather, index_select, masked_fill, masked_select, take, nonzero."""

from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.numpy import _indexing as fnp_indexing
from functrans.primitives import elementwise as E
from functrans.primitives import shape_ops as S
from functrans.torch._ops import _operand, as_tensor
from functrans.torch._record import Op, composite, run
from functrans.torch._shape import as_view, expand, reshape
from functrans.torch._tensor import Tensor, _dim, wrap

# --- indexing --------------------------------------------------------------------------------

def _index_spec(x, idx):
    """A hashable description of an index and the integer arrays it uses (which become inputs
    of the recorded op). Boolean masks become their nonzero() arrays here (eagerly)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    spec, arrays = [], []
    for i in idx:
        if isinstance(i, Tensor):
            i = i._value
        if i is None:
            spec.append(("n",))
        elif i is Ellipsis:
            spec.append(("e",))
        elif isinstance(i, slice):
            spec.append(("s", _int_or_none(i.start), _int_or_none(i.stop),
                         _int_or_none(i.step)))
        elif isinstance(i, bool | np.bool_):
            spec.append(("b", bool(i)))
        elif isinstance(i, int | np.integer):
            spec.append(("i", int(i)))
        else:
            arr = np.asarray(i)
            if arr.dtype == np.bool_ and arr.ndim:
                for nz in np.nonzero(arr):
                    spec.append(("a", len(arrays)))
                    arrays.append(nz.astype(np.int64))
                continue
            if arr.dtype == np.bool_:
                spec.append(("b", bool(arr)))
                continue
            if arr.size == 0 and arr.dtype.kind == "f":
                arr = arr.astype(np.int64)
            if arr.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            spec.append(("a", len(arrays)))
            arrays.append(arr)
    for k, v in enumerate(spec):
        if v[0] == "s" and v[3] is not None and v[3] <= 0:
            raise ValueError("step must be greater than zero")
    return tuple(spec), arrays


def _int_or_none(v):
    if v is None:
        return None
    if isinstance(v, Tensor):
        v = v.item()
    return int(v)


def _rebuild_index(spec, arrays):
    out = []
    for s in spec:
        k = s[0]
        if k == "n":
            out.append(None)
        elif k == "e":
            out.append(Ellipsis)
        elif k == "s":
            out.append(slice(s[1], s[2], s[3]))
        elif k == "b":
            out.append(s[1])
        elif k == "i":
            out.append(s[1])
        else:
            out.append(arrays[s[1]])
    return tuple(out)


def _getitem_fn(x, *arrays, spec):
    return fnp_indexing.getitem(x, _rebuild_index(spec, arrays))


_GETITEM_OPS = {name: Op(name, _getitem_fn, _getitem_fn) for name in
                ("SelectBackward0", "SliceBackward0", "IndexBackward0", "UnsqueezeBackward0",
                 "AliasBackward0")}


def _getitem_name(spec):
    kinds = [s[0] for s in spec]
    if "a" in kinds or "b" in kinds:
        return "IndexBackward0"
    for s in reversed(spec):
        if s[0] == "i":
            return "SelectBackward0"
        if s[0] == "s" and s[1:] != (None, None, None):
            return "SliceBackward0"
        if s[0] == "n":
            return "UnsqueezeBackward0"
    return "AliasBackward0"


def getitem(input, idx):
    x = as_tensor(input)
    spec, arrays = _index_spec(x, idx)
    op = _GETITEM_OPS[_getitem_name(spec)]
    out = run(op, (x, *[None] * len(arrays)), (x._value, *arrays), {"spec": spec}, (spec,))
    return as_view(x, out)


def _setitem_fn(x, v, *arrays, spec):
    return fnp_indexing._IndexRef(x, _rebuild_index(spec, arrays)).set(v)


_SETITEM = Op("CopySlices", _setitem_fn, _setitem_fn)


def setitem_out_of_place(x, idx, value):
    """x with x[idx] replaced by value, as a new tensor (one CopySlices node)."""
    spec, arrays = _index_spec(x, idx)
    dt = x._value.dtype
    if isinstance(value, Tensor):
        vv = value._value if value._value.dtype == dt else value._value.astype(dt)
    else:
        vv = _operand(value, dt)
    return run(_SETITEM, (x, value, *[None] * len(arrays)), (x._value, vv, *arrays),
               {"spec": spec}, (spec,))


@composite("GatherBackward0")
def _gather(x, index, *, dim):
    return fnp.take_along_axis(x, index, axis=dim)


def gather(input, dim, index):
    x = as_tensor(input)
    idx = as_tensor(index)._value
    d = _dim(dim, x._value.ndim)
    if idx.ndim != x._value.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    return run(_gather, (x, None), (x._value, idx.astype(np.int64)), {"dim": d}, (d,))


take_along_dim = gather


@composite("IndexSelectBackward0")
def _index_select(x, index, *, dim):
    return fnp.take(x, index, axis=dim)


def index_select(input, dim, index):
    x = as_tensor(input)
    idx = as_tensor(index)._value.astype(np.int64)
    d = _dim(dim, x._value.ndim)
    return run(_index_select, (x, None), (x._value, idx), {"dim": d}, (d,))


@composite("MaskedFillBackward0")
def _masked_fill(x, mask, value):
    return E.select(mask, S.convert_element_type(value, x.dtype), x)


def masked_fill(input, mask, value):
    x = as_tensor(input)
    m = as_tensor(mask)._value.astype(np.bool_)
    if isinstance(value, Tensor):
        return run(_masked_fill, (x, None, value), (x._value, m, value._value))
    return run(_masked_fill, (x, None, None), (x._value, m, _operand(value, x._value.dtype)))


def masked_select(input, mask):
    x = as_tensor(input)
    m = as_tensor(mask)._value.astype(np.bool_)
    m = np.broadcast_to(m, np.broadcast_shapes(m.shape, x._value.shape))
    if m.shape != x._value.shape:
        x = expand(x, m.shape)
    return getitem(x, wrap(m))


def take(input, index):
    x = as_tensor(input)
    return getitem(reshape(x, (-1,)), as_tensor(index))


def nonzero(input, *, as_tuple=False):
    v = as_tensor(input)._value
    nz = np.nonzero(v)
    if as_tuple:
        return tuple(wrap(a.astype(np.int64)) for a in nz)
    return wrap(np.stack(nz, axis=-1).astype(np.int64) if nz else np.zeros((0, 0), np.int64))


