"""The layout primitives and the helpers every family's rules are written with.

Rows: broadcast_in_dim (with numpy's broadcast_to), reshape, transpose, squeeze, expand_dims,
and reduce_sum, the transpose of broadcasting. Helpers: `instantiate` (a symbolic-zero tangent
as zeros), `linear_jvp` and `zero_jvp` (the JVP of a linear primitive, of a piecewise-constant
one), `moveaxis` and the batch-axis moves `bdim_*`, `skip_bdim`, and the shape rule and
batching of reductions over `axes`. The helpers bind these rows and these rows' rules use the
helpers, so the two live together here, below every family: the families import this module
and it imports none of them."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.core.symbolic import Zero
from functrans.errors import ShapeError
from functrans.primitives.registry import define


# --- helpers for the rules -------------------------------------------------------------------

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


def zero_jvp(prim):
    """The JVP of a primitive that is piecewise constant (or has integer outputs): zero."""
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        outs = out if prim.multiple_results else [out]
        zeros = [Zero(ShapedArray(shape_of(o), o.dtype)) for o in outs]
        return out, zeros if prim.multiple_results else zeros[0]
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
    "broadcast_in_dim", impl=_broadcast_in_dim_impl,
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
    "reshape", impl=lambda x, *, new_sizes: xp.reshape(x, new_sizes),
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
    "transpose", impl=lambda x, *, permutation: xp.transpose(x, permutation),
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
    "squeeze", impl=lambda x, *, dimensions: xp.squeeze(x, dimensions),
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
    "expand_dims", impl=lambda x, *, dimensions: xp.expand_dims(x, dimensions),
    abstract=_expand_dims_abstract,
    transpose=lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)],
    batch=_expand_dims_batch, props=("linear",),
    facts=dict(noop=lambda aval, p: not p["dimensions"], reshape_like=True,
               moves_elements=True),
    torch_name="UnsqueezeBackward0")
expand_dims_p.rules["jvp"] = linear_jvp(expand_dims_p)


# --- reduce_sum, and the shape rule and batching of reductions ------------------------------

def normalize_axes(axes, ndim: int):
    """`axes` made non-negative and sorted."""
    return tuple(sorted(int(a) % ndim if ndim else int(a) for a in axes))


def reduced_aval(x, *, axes, dtype=None):
    """The abstract value of reducing `x` over `axes` (those dimensions dropped)."""
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"reduction: axes {axes} are out of range or repeated for an operand of "
                         f"shape {x.shape}.")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in axes),
                       x.dtype if dtype is None else dtype)


def expand_reduced(ct, in_shape, axes):
    """Broadcast a reduced value back over the axes it was reduced along."""
    kept = tuple(i for i in range(len(in_shape)) if i not in axes)
    return broadcast_in_dim(ct, in_shape, kept)


def reduce_batch(prim):
    """Batching for reductions with an `axes` param: the batch axis stays where it is and the
    reduced axes step around it."""
    def rule(vals, dims, *, axes, **params):
        axes = skip_bdim(axes, dims[0])
        return prim.bind(vals[0], axes=axes, **params), bdim_after_removing(dims[0], axes)
    return rule


def reduce_sum(x, axes):
    """The sum of `x` over `axes` (x itself when there are none)."""
    axes = normalize_axes(axes, ndim_of(x))
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=axes)


def _fast_reduce_sum(in_avals, out_avals, params):
    return xp.sum, (), {"axis": params["axes"], "dtype": in_avals[0].dtype}


reduce_sum_p = define(
    "reduce_sum", impl=lambda x, *, axes: xp.sum(x, axis=axes, dtype=x.dtype),
    abstract=reduced_aval,
    transpose=lambda ct, x, *, axes: [expand_reduced(ct, x.aval.shape, axes)],
    props=("linear",),
    facts=dict(noop=lambda aval, p: not p["axes"], sum_axes=lambda p: p["axes"],
               fast_impl=_fast_reduce_sum, fresh_result=True),
    torch_name="SumBackward1")
reduce_sum_p.rules["jvp"] = linear_jvp(reduce_sum_p)
reduce_sum_p.rules["batch"] = reduce_batch(reduce_sum_p)
