"""numpy's broadcasting, for the elementwise families: the dtype kinds a row accepts, the
shape/dtype rule of an n-ary op, its batching (operands aligned from the right), and
`unbroadcast`, the transpose of broadcasting."""

from __future__ import annotations

import builtins

import numpy as np

from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.layout import expand_dims, reduce_sum, reshape, transpose

# dtype kinds a primitive accepts (numpy's dtype.kind letters)
FLOAT = "fc"
REAL_FLOAT = "f"
NUMBER = "iufc"
REAL = "iuf"
INTEGRAL = "biu"
ANY = "biufc"

_KIND_NAMES = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "float",
               "c": "complex"}


# --- shape and dtype rules -------------------------------------------------------------------

def broadcast_shapes(name, *shapes):
    """The shape `shapes` broadcast to, or a ShapeError naming primitive `name` and the shapes."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError(
            f"{name}: shapes {' and '.join(str(tuple(s)) for s in shapes)} do not broadcast "
            "(numpy rules: dimensions aligned from the right must be equal or 1). Reshape an "
            "operand; under vmap, check in_axes.") from None


def same_dtype(name, avals):
    """The one dtype of `avals`, or a DTypeError naming primitive `name`."""
    dtypes = {a.dtype for a in avals}
    if len(dtypes) > 1:
        raise DTypeError(f"{name}: operands have dtypes {sorted(d.name for d in dtypes)}; the "
                         "primitive needs one dtype. Use functrans.numpy (which promotes like "
                         "numpy) or convert with .astype first.")
    return avals[0].dtype


def check_kinds(name, dtype, kinds):
    """A DTypeError unless `dtype` is of one of `kinds` (None: any)."""
    if kinds is not None and dtype.kind not in kinds:
        wanted = " or ".join(_KIND_NAMES[k] for k in kinds)
        fix = ("Convert first, e.g. x.astype(float)." if "f" in kinds else
               "Convert first, e.g. x.astype(bool) or x.astype(int).")
        raise DTypeError(f"{name}: needs {wanted} operands, got {dtype.name}. {fix}")


def nary_aval(name, out_dtype=None, kinds=None):
    """Shape/dtype rule of an n-ary elementwise primitive: one dtype among `kinds` in, the
    broadcast shape out, with `out_dtype` (default: the input dtype)."""
    def abstract(*avals, **params):
        dtype = same_dtype(name, avals)
        check_kinds(name, dtype, kinds)
        shape = avals[0].shape if len(avals) == 1 else broadcast_shapes(
            name, *(a.shape for a in avals))
        return ShapedArray(shape, dtype if out_dtype is None else out_dtype)
    return abstract


# --- the transpose of broadcasting ----------------------------------------------------------

def unbroadcast(x, shape):
    """Sum `x` down to `shape`: the transpose of numpy broadcasting to x's shape."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and x.shape[lead + i] != 1)
    return reshape(reduce_sum(x, axes), shape)


# --- batching --------------------------------------------------------------------------------

def broadcasting_batch(prim):
    """Batching for numpy-broadcasting n-ary primitives. Numpy aligns axes from the right, so
    operands whose batch axes sit at the same distance from the right end broadcast as they
    are (x * mean(x) with the batch axis last); the others get size-1 axes or are moved. The
    output's batch axis goes where the fewest elements must be transposed (moves across size-1
    axes are reshapes); among equals, where the highest-rank batched operand has it (the same
    index, else the same distance from the right)."""
    def rule(vals, dims, **params):
        ranks = [ndim_of(v) - (d is not None) for v, d in zip(vals, dims)]
        batched = [i for i, d in enumerate(dims) if d is not None]
        if len(batched) == len(vals) and len({dims[i] for i in batched}) == 1 and \
                len(set(ranks)) == 1:
            return prim.bind(*vals, **params), dims[0]
        out_rank = builtins.max(ranks)
        shapes = [shape_of(v) for v in vals]
        top = builtins.max(batched, key=lambda i: ranks[i])  # the first of the highest rank
        preferred = dims[top] + out_rank - ranks[top]

        def cost(out_bd):
            plans = [_batch_layout(shapes[i], dims[i], out_rank - ranks[i], out_bd)
                     for i in batched]
            moved = sum(int(np.prod(shapes[i])) for i, (_, perm, _) in zip(batched, plans)
                        if not _is_view(shapes[i], perm))
            return moved, out_bd != dims[top], out_bd != preferred, out_bd

        out_bd = builtins.min(range(out_rank + 1), key=cost)
        return prim.bind(*(_align_batch(v, d, out_rank - r, out_bd)
                           for v, d, r in zip(vals, dims, ranks)), **params), out_bd
    return rule


def _batch_layout(shape, bd, lead, out_bd):
    """How an operand with batch axis `bd` whose unbatched axes start at output axis `lead`
    (right-aligned) is laid out for a result with its batch axis at `out_bd`: (position its
    batch axis moves to, the permutation doing it, positions of the size-1 axes to insert)."""
    dst = builtins.max(out_bd - lead, 0)  # the batch axis goes among x's axes, or first
    perm = [i for i in range(len(shape)) if i != bd]
    perm.insert(dst, bd)
    # left of x's axes: size-1 axes from just after the batch axis up to them
    return dst, perm, tuple(range(1, 1 + lead - out_bd)) if out_bd < lead else ()


def _is_view(shape, perm) -> bool:
    """Whether transposing by `perm` keeps the row-major order (only size-1 axes move)."""
    big = [i for i in perm if shape[i] != 1]
    return big == sorted(big)


def _align_batch(x, bd, lead, out_bd):
    """Operand `x` (batch axis `bd` or None, its other axes right-aligned with output axes
    `lead`, ...) laid out so numpy broadcasting puts its batch axis at output axis `out_bd`."""
    if bd is None:
        # the output's batch axis is among x's axes: x needs a size-1 axis there
        return expand_dims(x, (out_bd - lead,)) if out_bd > lead else x
    shape = shape_of(x)
    dst, perm, ones = _batch_layout(shape, bd, lead, out_bd)
    if dst != bd:
        if _is_view(shape, perm):
            x = reshape(x, [shape[i] for i in perm])
        else:
            x = transpose(x, perm)
    return expand_dims(x, ones) if ones else x


def unary_batch(prim):
    """Batching for unary elementwise primitives: apply to the batch, the axis stays put."""
    def rule(vals, dims, **params):
        return prim.bind(vals[0], **params), dims[0]
    return rule
