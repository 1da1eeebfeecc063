"""Shape primitives beyond the layout ones: slice, pad (each other's transposes), concatenate,
rev, and iota (which has no inputs). All but iota are linear, so their JVP is themselves and
each has a transpose. The layout rows (broadcast_in_dim, reshape, transpose, squeeze,
expand_dims) live in functrans/primitives/layout.py, convert_element_type with the elementwise
rows; this module re-exports them, so `shape_ops` names every shape operation."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, get_aval, ndim_of, shape_of
from functrans.core.symbolic import Zero, is_undefined
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.elementwise import (  # noqa: F401  (re-exported)
    convert_element_type, convert_element_type_p, select, sub)
from functrans.primitives.layout import (  # noqa: F401  (re-exported)
    bdim_at, bdim_to_front, broadcast_in_dim, broadcast_in_dim_p, broadcast_to, expand_dims,
    expand_dims_p, linear_jvp, moveaxis, reduce_sum, reshape, reshape_p, skip_bdim, squeeze,
    squeeze_p, transpose, transpose_p)
from functrans.primitives.registry import define


# --- slice: x[start:limit:stride] per axis, all static ---------------------------------------

def slice_(x, start_indices, limit_indices, strides=None):
    """x[start:limit:strides] per dimension (static bounds); the whole of x is x itself."""
    nd = ndim_of(x)
    strides = tuple(strides) if strides is not None else (1,) * nd
    if tuple(start_indices) == (0,) * nd and tuple(limit_indices) == tuple(shape_of(x)) and \
            strides == (1,) * nd:
        return x
    return slice_p.bind(x, start_indices=tuple(start_indices),
                        limit_indices=tuple(limit_indices), strides=strides)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    return x[tuple(slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


def _slice_abstract(x, *, start_indices, limit_indices, strides):
    ok = len(start_indices) == len(limit_indices) == len(strides) == x.ndim and all(
        0 <= s <= l <= d and st >= 1
        for s, l, st, d in zip(start_indices, limit_indices, strides, x.shape))
    if not ok:
        raise ShapeError(f"slice: start {start_indices}, limit {limit_indices}, strides "
                         f"{strides} do not fit an operand of shape {x.shape}.")
    shape = tuple(max(0, -(-(l - s) // st))
                  for s, l, st in zip(start_indices, limit_indices, strides))
    return ShapedArray(shape, x.dtype)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    out_shape = shape_of(ct)
    config = []
    for s, st, d, n in zip(start_indices, strides, shape, out_shape):
        # element i of the slice sits at s + i*st; interior padding st-1 spaces them out
        used = s + (n - 1) * st + 1 if n else s
        config.append((s, d - used if n else d - s, st - 1 if n else 0))
    return [pad(ct, np.zeros((), ct.dtype), tuple(config))]


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    x, bd = vals[0], dims[0]

    def at_bd(t, v):
        return (*t[:bd], v, *t[bd:])

    return slice_p.bind(x, start_indices=at_bd(start_indices, 0),
                        limit_indices=at_bd(limit_indices, x.shape[bd]),
                        strides=at_bd(strides, 1)), bd


def _slice_noop(aval, p):
    return (tuple(p["start_indices"]) == (0,) * aval.ndim
            and tuple(p["limit_indices"]) == aval.shape
            and tuple(p["strides"]) == (1,) * aval.ndim)


slice_p = define("slice", impl=_slice_impl, abstract=_slice_abstract,
                 transpose=_slice_transpose, batch=_slice_batch,
                 props=("linear",), facts=dict(noop=_slice_noop, moves_elements=True),
                 torch_name="SliceBackward0")
slice_p.rules["jvp"] = linear_jvp(slice_p)


# --- pad: (low, high, interior) per axis; negative low/high crop -----------------------------

def pad(x, padding_value, padding_config):
    """`x` padded with `padding_value`: (low, high, interior) per axis, as XLA's pad."""
    config = tuple((int(lo), int(hi), int(it)) for lo, hi, it in padding_config)
    if all(c == (0, 0, 0) for c in config):
        return x
    return pad_p.bind(x, padding_value, padding_config=config)


def _pad_impl(x, padding_value, *, padding_config):
    x = xp.asarray(x)
    shape = []
    for d, (lo, hi, it) in zip(x.shape, padding_config):
        shape.append(lo + hi + d + max(d - 1, 0) * it)
    out = xp.full([max(s, 0) + max(-lo, 0) + max(-hi, 0) for s, (lo, hi, _) in
                   zip(shape, padding_config)], padding_value, dtype=x.dtype)
    idx = tuple(slice(max(lo, 0), max(lo, 0) + (d - 1) * (it + 1) + 1 if d else max(lo, 0),
                      it + 1) for d, (lo, hi, it) in zip(x.shape, padding_config))
    out[idx] = x
    crop = tuple(slice(max(-lo, 0), max(-lo, 0) + s) for s, (lo, hi, _) in
                 zip(shape, padding_config))
    return out[crop]


def _pad_abstract(x, padding_value, *, padding_config):
    if padding_value.shape != () or padding_value.dtype != x.dtype or \
            len(padding_config) != x.ndim:
        raise ShapeError(f"pad: needs a scalar padding value of the operand's dtype and one "
                         f"(low, high, interior) triple per axis; got operand {x}, value "
                         f"{padding_value}, config {padding_config}.")
    shape = [lo + hi + d + max(d - 1, 0) * it for d, (lo, hi, it) in zip(x.shape, padding_config)]
    if any(s < 0 or it < 0 for s, (_, _, it) in zip(shape, padding_config)):
        raise ShapeError(f"pad: config {padding_config} crops operand {x.shape} below zero.")
    return ShapedArray(shape, x.dtype)


def _pad_transpose(ct, x, padding_value, *, padding_config):
    # undo negative (cropping) padding by padding the cotangent with zeros, then slice out the
    # positions the operand's elements landed on (stride interior + 1)
    zero = np.zeros((), ct.dtype)
    x_shape = x.aval.shape if is_undefined(x) else shape_of(x)
    unpadded = pad(ct, zero, tuple((max(-lo, 0), max(-hi, 0), 0)
                                   for lo, hi, _ in padding_config))
    lo_pos = [max(lo, 0) for lo, _, _ in padding_config]
    x_ct = slice_(unpadded, lo_pos,
                  [lo + (d - 1) * (it + 1) + 1 if d else lo for lo, d, (_, _, it) in
                   zip(lo_pos, x_shape, padding_config)],
                  [it + 1 for _, _, it in padding_config])
    v_ct = None
    if is_undefined(padding_value):
        # every output position not holding an operand element holds the padding value
        every = tuple(range(ndim_of(ct)))
        v_ct = sub(reduce_sum(ct, every), reduce_sum(x_ct, tuple(range(ndim_of(x_ct)))))
    return [x_ct if is_undefined(x) else None, v_ct]


def _pad_batch(vals, dims, *, padding_config):
    x, v = vals
    xd, vd = dims
    if vd is None:
        config = (*padding_config[:xd], (0, 0, 0), *padding_config[xd:])
        return pad_p.bind(x, v, padding_config=config), xd
    # a per-example padding value: pad with zeros, then fill the padded positions by select
    size = v.shape[vd]
    x = bdim_to_front(x, xd, size)
    v = moveaxis(v, vd, 0)
    config = ((0, 0, 0), *padding_config)
    padded = pad_p.bind(x, np.zeros((), x.dtype), padding_config=config)
    inside = pad(np.ones(x.shape[1:], np.bool_), np.zeros((), np.bool_), padding_config)
    return select(inside, padded, reshape(v, (size,) + (1,) * (x.ndim - 1))), 0


pad_p = define("pad", impl=_pad_impl, abstract=_pad_abstract,
               transpose=_pad_transpose, batch=_pad_batch, props=("linear",),
               torch_name="ConstantPadNdBackward0")
pad_p.rules["jvp"] = linear_jvp(pad_p)


# --- concatenate -----------------------------------------------------------------------------

def concatenate(operands, dimension: int):
    """The operands joined along axis `dimension`."""
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _concatenate_abstract(*avals, dimension):
    shapes = [a.shape for a in avals]
    if not avals:
        raise ShapeError("concatenate: needs at least one operand.")
    nd = avals[0].ndim
    if nd == 0 or not 0 <= dimension < nd:
        raise ShapeError(f"concatenate: dimension {dimension} is out of range for operands of "
                         f"shape {shapes[0]}; 0-d arrays cannot be concatenated (stack them "
                         "instead).")
    if len({a.dtype for a in avals}) > 1:
        raise DTypeError(f"concatenate: operands have dtypes {[a.dtype.name for a in avals]}; "
                         "the primitive needs one dtype. Use functrans.numpy.concatenate (which "
                         "promotes like numpy) or convert with .astype first.")
    for s in shapes:
        if len(s) != nd or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0]))
                               if i != dimension):
            raise ShapeError(f"concatenate: operand shapes {shapes} must agree on every axis "
                             f"except dimension {dimension} (and have the same rank).")
    out = list(shapes[0])
    out[dimension] = sum(s[dimension] for s in shapes)
    return ShapedArray(out, avals[0].dtype)


def _concatenate_transpose(ct, *operands, dimension):
    cts, start = [], 0
    shape = list(shape_of(ct))
    for x in operands:
        n = (x.aval if is_undefined(x) else get_aval(x)).shape[dimension]
        if is_undefined(x):
            starts = [0] * len(shape)
            limits = list(shape)
            starts[dimension], limits[dimension] = start, start + n
            cts.append(slice_(ct, starts, limits))
        else:
            cts.append(None)
        start += n
    return cts


def _concatenate_batch(vals, dims, *, dimension):
    # batched operands sharing a batch axis stay put; the others are moved (or broadcast) to it
    batched = [d for d in dims if d is not None]
    bd = batched[0] if len(set(batched)) == 1 else 0
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    vals = [bdim_at(v, d, size, bd) for v, d in zip(vals, dims)]
    return concatenate_p.bind(*vals, dimension=dimension + (dimension >= bd)), bd


concatenate_p = define(
    "concatenate", impl=lambda *xs, dimension: xp.concatenate(xs, axis=dimension),
    abstract=_concatenate_abstract, transpose=_concatenate_transpose,
    batch=_concatenate_batch, props=("linear",), torch_name="CatBackward0")
concatenate_p.rules["jvp"] = linear_jvp(concatenate_p)


# --- iota: the indices 0, 1, ... along one dimension of a new array --------------------------

def iota(dtype, shape, dimension: int = 0):
    """0, 1, 2, ... along `dimension` of an array of `shape` and `dtype`."""
    return iota_p.bind(dtype=np.dtype(dtype), shape=tuple(int(d) for d in shape),
                       dimension=int(dimension))


def _iota_impl(*, dtype, shape, dimension):
    ramp = xp.arange(shape[dimension], dtype=dtype)
    ramp = xp.reshape(ramp, tuple(s if i == dimension else 1 for i, s in enumerate(shape)))
    return xp.ascontiguousarray(xp.broadcast_to(ramp, shape))


def _iota_abstract(*, dtype, shape, dimension):
    if not 0 <= dimension < len(shape) or any(s < 0 for s in shape):
        raise ShapeError(f"iota: dimension {dimension} is out of range for shape {shape} (or "
                         "the shape has a negative size).")
    if not np.issubdtype(dtype, np.number):
        raise DTypeError(f"iota: needs a numeric dtype, got {np.dtype(dtype).name}.")
    return ShapedArray(shape, dtype)


def _iota_jvp(primals, tangents, **params):
    # iota has no inputs, so transforms never call this rule; it exists to say "no derivative"
    out = iota_p.bind(**params)
    return out, Zero(ShapedArray(params["shape"], params["dtype"]))


def _iota_batch(vals, dims, **params):
    # with no inputs there is never a batched argument: the result is the same for every example
    return iota_p.bind(**params), None


iota_p = define("iota", impl=_iota_impl, abstract=_iota_abstract, jvp=_iota_jvp,
                batch=_iota_batch, torch_name=None)  # like torch.arange: a leaf, no grad_fn


# --- rev: reverse the order of elements along some dimensions --------------------------------

def rev(x, dimensions):
    """`x` with its order reversed along `dimensions`."""
    nd = ndim_of(x)
    dimensions = tuple(sorted({int(d) % nd for d in dimensions})) if nd else ()
    if not dimensions:
        return x
    return rev_p.bind(x, dimensions=dimensions)


def _rev_abstract(x, *, dimensions):
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < x.ndim for d in dimensions):
        raise ShapeError(f"rev: dimensions {dimensions} are out of range or repeated for an "
                         f"operand of shape {x.shape}.")
    return ShapedArray(x.shape, x.dtype)


def _rev_batch(vals, dims, *, dimensions):
    return rev_p.bind(vals[0], dimensions=skip_bdim(dimensions, dims[0])), dims[0]


rev_p = define(
    "rev", impl=lambda x, *, dimensions: xp.flip(x, dimensions),
    abstract=_rev_abstract,
    transpose=lambda ct, x, *, dimensions: [rev(ct, dimensions)],
    batch=_rev_batch, props=("linear",), torch_name="FlipBackward0")
rev_p.rules["jvp"] = linear_jvp(rev_p)
