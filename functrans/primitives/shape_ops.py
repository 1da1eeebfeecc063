"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims, dtype
conversion, pad, concatenate, rev, and iota (which has no inputs). All but iota are linear, so
their JVP is themselves and each has a transpose."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, get_aval, is_float, ndim_of, shape_of
from functrans.core.symbolic import Zero
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.registry import define

M = "shape_ops"


def instantiate(t):
    """A materialised array for a tangent that may be symbolically zero."""
    if type(t) is Zero:
        return broadcast_to(np.zeros((), t.aval.dtype), t.aval.shape)
    return t


def linear_jvp(prim):
    """JVP of a primitive linear in all its array inputs: apply it to the tangents."""
    def jvp(primals, tangents, **params):
        return (prim.bind(*primals, **params),
                prim.bind(*map(instantiate, tangents), **params))
    return jvp


def moveaxis(x, src: int, dst: int):
    """Move axis `src` of `x` to position `dst` (a transpose, or nothing)."""
    if src == dst:
        return x
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, tuple(perm))


def bdim_to_front(x, bdim, size: int):
    """Batched value with its batch axis first; unbatched values get one by broadcasting."""
    return bdim_at(x, bdim, size, 0)


def bdim_at(x, bdim, size: int, dst: int):
    """Batched value with its batch axis at `dst`; unbatched values get one by broadcasting."""
    if bdim is None:
        shape = list(shape_of(x))
        shape.insert(dst, size)
        return broadcast_in_dim(x, tuple(shape), tuple(i for i in range(len(shape)) if i != dst))
    return moveaxis(x, bdim, dst)


def skip_bdim(axes, bdim: int):
    """Axes of an unbatched value renumbered for the value with its batch axis at `bdim`."""
    return tuple(a + (a >= bdim) for a in axes)


def bdim_after_removing(bdim: int, removed):
    """Where the batch axis `bdim` lands when the (batched-layout) axes `removed` disappear."""
    return bdim - sum(a < bdim for a in removed)


def _is_identity_perm(perm):
    return tuple(perm) == tuple(range(len(perm)))


# --- convert_element_type --------------------------------------------------------------------

def convert_element_type(x, dtype):
    """`x` as `dtype` (x itself if it has that dtype already)."""
    dtype = np.dtype(dtype)
    if getattr(x, "dtype", None) == dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=dtype)


def _convert_jvp(primals, tangents, *, new_dtype):
    x, = primals
    t, = tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype)
    if not is_float(new_dtype) or type(t) is Zero:
        return out, Zero(ShapedArray(out.shape, new_dtype))
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype)


def _convert_impl(x, *, new_dtype):
    x = xp.asarray(x)
    if x.dtype.kind == "c" and np.dtype(new_dtype).kind != "c":
        x = xp.real(x)   # complex to real keeps the real part, as lax's conversion (no warning)
    return x.astype(new_dtype)


convert_element_type_p = define(
    "convert_element_type", module=M,
    impl=_convert_impl,
    abstract=lambda x, *, new_dtype: ShapedArray(x.shape, new_dtype),
    jvp=_convert_jvp,
    transpose=lambda ct, x, *, new_dtype: [convert_element_type(ct, x.aval.dtype)],
    batch=lambda vals, dims, *, new_dtype: (
        convert_element_type_p.bind(vals[0], new_dtype=new_dtype), dims[0]),
    props=("elementwise", "linear"),
    facts=dict(noop=lambda aval, p: np.dtype(p["new_dtype"]) == aval.dtype,
               converts_dtype=True),
    torch_name="ToCopyBackward0")


# --- broadcast_in_dim ------------------------------------------------------------------------

def broadcast_in_dim(x, shape, broadcast_dimensions):
    """`x` broadcast to `shape`, its axes placed at `broadcast_dimensions` (XLA's rule)."""
    shape = tuple(shape)
    if tuple(shape_of(x)) == shape and tuple(broadcast_dimensions) == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape,
                                   broadcast_dimensions=tuple(broadcast_dimensions))


def broadcast_to(x, shape):
    """numpy-style broadcast of `x` to `shape` (dimensions aligned from the right)."""
    shape = tuple(shape)
    x_shape = shape_of(x)
    if x_shape == shape:
        return x
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - len(x_shape), len(shape))))


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = xp.asarray(x)
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return xp.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions):
    ok = (len(broadcast_dimensions) == x.ndim
          and all(0 <= d < len(shape) for d in broadcast_dimensions)
          and list(broadcast_dimensions) == sorted(set(broadcast_dimensions))
          and all(x.shape[i] in (1, shape[d]) for i, d in enumerate(broadcast_dimensions)))
    if not ok:
        raise ShapeError(f"broadcast_in_dim: operand shape {x.shape} cannot be broadcast to "
                         f"{tuple(shape)} along dimensions {broadcast_dimensions}: each operand "
                         "dimension must be 1 or equal the output dimension it maps to.")
    return ShapedArray(shape, x.dtype)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    summed = tuple(i for i in range(len(shape)) if i not in broadcast_dimensions)
    kept_ones = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    from functrans.primitives.reductions import reduce_sum
    out = reduce_sum(ct, tuple(sorted(summed + kept_ones)))
    return [reshape(out, in_shape)]


def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions):
    # the batch axis goes right after the output axis of the operand axis before it (first if
    # it is first), so broadcast_dimensions stay increasing and nothing is transposed
    x, bd = vals[0], dims[0]
    out_bd = broadcast_dimensions[bd - 1] + 1 if bd else 0
    bdims = skip_bdim(broadcast_dimensions, out_bd)
    bdims = (*bdims[:bd], out_bd, *bdims[bd:])
    out_shape = (*shape[:out_bd], x.shape[bd], *shape[out_bd:])
    return broadcast_in_dim_p.bind(x, shape=out_shape, broadcast_dimensions=bdims), out_bd


broadcast_in_dim_p = define(
    "broadcast_in_dim", module=M, impl=_broadcast_in_dim_impl,
    abstract=_broadcast_in_dim_abstract, transpose=_broadcast_in_dim_transpose,
    batch=_broadcast_in_dim_batch, props=("linear",),
    facts=dict(noop=lambda aval, p: tuple(p["shape"]) == aval.shape
               and _is_identity_perm(p["broadcast_dimensions"]),
               broadcast=lambda p: (tuple(p["shape"]), tuple(p["broadcast_dimensions"])),
               moves_elements=True),
    torch_name="ExpandBackward0")
broadcast_in_dim_p.rules["jvp"] = linear_jvp(broadcast_in_dim_p)


# --- reshape ---------------------------------------------------------------------------------

def reshape(x, new_sizes):
    """`x` with shape `new_sizes`, in C order (x itself if unchanged)."""
    new_sizes = tuple(int(d) for d in new_sizes)
    if tuple(shape_of(x)) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


def _reshape_abstract(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise ShapeError(f"reshape: cannot reshape an array of shape {x.shape} ({x.size} "
                         f"elements) into shape {tuple(new_sizes)}. The element counts must "
                         "match.")
    return ShapedArray(new_sizes, x.dtype)


def _reshape_batch(vals, dims, *, new_sizes):
    # in row-major order a first or last batch axis can stay where it is; others move first
    x, bd = vals[0], dims[0]
    if bd == ndim_of(x) - 1 and bd:
        return reshape_p.bind(x, new_sizes=(*new_sizes, x.shape[bd])), len(new_sizes)
    x = moveaxis(x, bd, 0)
    return reshape_p.bind(x, new_sizes=(x.shape[0], *new_sizes)), 0


reshape_p = define(
    "reshape", module=M, impl=lambda x, *, new_sizes: xp.reshape(x, new_sizes),
    abstract=_reshape_abstract,
    transpose=lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)],
    batch=_reshape_batch, props=("linear",),
    facts=dict(noop=lambda aval, p: tuple(p["new_sizes"]) == aval.shape,
               reshape_like=True, moves_elements=True,
               fast_impl=lambda _in, _out, p: (xp.reshape, (p["new_sizes"],), {})),
    torch_name="ViewBackward0")
reshape_p.rules["jvp"] = linear_jvp(reshape_p)


# --- transpose -------------------------------------------------------------------------------

def transpose(x, permutation):
    """The axes of `x` permuted (x itself for the identity permutation)."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose: permutation {permutation} is not a permutation of the "
                         f"{x.ndim} axes of shape {x.shape}.")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype)


def _compose_transpose(inner, outer):
    # transpose(transpose(x, p), q) == transpose(x, p o q)
    p, q = inner["permutation"], outer["permutation"]
    return {"permutation": tuple(p[i] for i in q)}


def _transpose_batch(vals, dims, *, permutation):
    # one transpose that also keeps the batch axis where it is
    x, bd = vals[0], dims[0]
    perm = skip_bdim(permutation, bd)
    return transpose(x, (*perm[:bd], bd, *perm[bd:])), bd


transpose_p = define(
    "transpose", module=M, impl=lambda x, *, permutation: xp.transpose(x, permutation),
    abstract=_transpose_abstract,
    transpose=lambda ct, x, *, permutation: [transpose(ct, tuple(np.argsort(permutation)))],
    batch=_transpose_batch, props=("linear",),
    facts=dict(noop=lambda aval, p: _is_identity_perm(p["permutation"]),
               compose=_compose_transpose, moves_elements=True,
               fast_impl=lambda _in, _out, p: (xp.transpose, (p["permutation"],), {})),
    torch_name="PermuteBackward0")
transpose_p.rules["jvp"] = linear_jvp(transpose_p)


# --- squeeze / expand_dims -------------------------------------------------------------------

def squeeze(x, dimensions):
    """`x` without its length-one axes `dimensions`."""
    dimensions = tuple(sorted(int(d) % max(ndim_of(x), 1) for d in dimensions))
    if not dimensions:
        return x
    return squeeze_p.bind(x, dimensions=dimensions)


def _squeeze_abstract(x, *, dimensions):
    if any(not 0 <= d < x.ndim or x.shape[d] != 1 for d in dimensions):
        raise ShapeError(f"squeeze: dimensions {dimensions} of shape {x.shape} are not all of "
                         "size 1; only size-1 axes can be squeezed.")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype)


def _squeeze_batch(vals, dims, *, dimensions):
    x, bd = vals[0], dims[0]
    dimensions = skip_bdim(dimensions, bd)
    return squeeze_p.bind(x, dimensions=dimensions), bdim_after_removing(bd, dimensions)


squeeze_p = define(
    "squeeze", module=M, impl=lambda x, *, dimensions: xp.squeeze(x, dimensions),
    abstract=_squeeze_abstract,
    transpose=lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)],
    batch=_squeeze_batch, props=("linear",),
    facts=dict(noop=lambda aval, p: not p["dimensions"], reshape_like=True,
               moves_elements=True),
    torch_name="SqueezeBackward1")
squeeze_p.rules["jvp"] = linear_jvp(squeeze_p)


def expand_dims(x, dimensions):
    """`x` with new length-one axes at positions `dimensions` of the result."""
    out_ndim = ndim_of(x) + len(dimensions)
    dimensions = tuple(sorted(int(d) % out_ndim for d in dimensions))
    return expand_dims_p.bind(x, dimensions=dimensions)


def _expand_dims_abstract(x, *, dimensions):
    out_ndim = x.ndim + len(dimensions)
    if len(set(dimensions)) != len(dimensions) or any(not 0 <= d < out_ndim
                                                      for d in dimensions):
        raise ShapeError(f"expand_dims: dimensions {dimensions} are out of range or repeated "
                         f"for an output of rank {out_ndim} (operand shape {x.shape}).")
    shape = list(x.shape)
    for d in dimensions:
        shape.insert(d, 1)
    return ShapedArray(shape, x.dtype)


def _expand_dims_batch(vals, dims, *, dimensions):
    # the batch axis goes right after the output position of the operand axis before it
    x, bd = vals[0], dims[0]
    kept = [i for i in range(ndim_of(x) - 1 + len(dimensions)) if i not in dimensions]
    out_bd = kept[bd - 1] + 1 if bd else 0
    return expand_dims_p.bind(x, dimensions=skip_bdim(dimensions, out_bd)), out_bd


expand_dims_p = define(
    "expand_dims", module=M, impl=lambda x, *, dimensions: xp.expand_dims(x, dimensions),
    abstract=_expand_dims_abstract,
    transpose=lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)],
    batch=_expand_dims_batch, props=("linear",),
    facts=dict(noop=lambda aval, p: not p["dimensions"], reshape_like=True,
               moves_elements=True),
    torch_name="UnsqueezeBackward0")
expand_dims_p.rules["jvp"] = linear_jvp(expand_dims_p)


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
    from functrans.core.symbolic import is_undefined
    from functrans.primitives.elementwise import sub
    from functrans.primitives.indexing import slice_
    from functrans.primitives.reductions import reduce_sum
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
    from functrans.primitives.elementwise import select
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


pad_p = define("pad", module=M, impl=_pad_impl, abstract=_pad_abstract,
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
    from functrans.core.symbolic import is_undefined
    from functrans.primitives.indexing import slice_
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
    "concatenate", module=M, impl=lambda *xs, dimension: xp.concatenate(xs, axis=dimension),
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


iota_p = define("iota", module=M, impl=_iota_impl, abstract=_iota_abstract, jvp=_iota_jvp,
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
    "rev", module=M, impl=lambda x, *, dimensions: xp.flip(x, dimensions),
    abstract=_rev_abstract,
    transpose=lambda ct, x, *, dimensions: [rev(ct, dimensions)],
    batch=_rev_batch, props=("linear",), torch_name="FlipBackward0")
rev_p.rules["jvp"] = linear_jvp(rev_p)
