"""Reductions over axes: reduce_sum (linear), and the order-statistic and product reductions."""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray
from functrans.errors import ShapeError
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import broadcast_in_dim, linear_jvp, moveaxis

M = "reductions"


def _normalize_axes(axes, ndim):
    return tuple(sorted(int(a) % ndim if ndim else int(a) for a in axes))


def reduced_aval(x, *, axes, dtype=None):
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
    """Batching for reductions with an `axes` param: move the batch axis first, shift axes."""
    def rule(vals, dims, *, axes, **params):
        x = moveaxis(vals[0], dims[0], 0)
        return prim.bind(x, axes=tuple(a + 1 for a in axes), **params), 0
    return rule


def reduce_sum(x, axes):
    axes = _normalize_axes(axes, np.ndim(x))
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=axes)


reduce_sum_p = define(
    "reduce_sum", module=M, impl=lambda x, *, axes: xp.sum(x, axis=axes, dtype=x.dtype),
    abstract=reduced_aval,
    transpose=lambda ct, x, *, axes: [expand_reduced(ct, x.aval.shape, axes)],
    props=("linear",), torch_name="SumBackward1")
reduce_sum_p.rules["jvp"] = linear_jvp(reduce_sum_p)
reduce_sum_p.rules["batch"] = reduce_batch(reduce_sum_p)
