"""Flattening a pytree of arrays into one vector and back, as optimisers over flat vectors need.

>>> import numpy as np
>>> from functrans.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": np.ones((2, 2)), "b": np.zeros(3)})
>>> flat.tolist()
[0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
>>> unravel(flat)["w"].shape
(2, 2)
"""

from __future__ import annotations

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.pytree_fun import as_value
from functrans.core.trace import Tracer
from functrans.errors import ShapeError
from functrans.primitives.shape_ops import concatenate, convert_element_type, reshape
from functrans.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def _is_traced(xs) -> bool:
    return any(isinstance(x, Tracer) for x in xs)


def ravel_pytree(tree):
    """(flat, unravel): the leaves of `tree` concatenated into one 1-d array (in tree_flatten
    order, promoted to a common dtype), and the function rebuilding a tree from such a vector.

    Works on arrays and on traced values alike, so it can sit inside grad, vmap or jit.
    """
    leaves, treedef = tree_flatten(tree)
    leaves = [as_value(x, "ravel_pytree") for x in leaves]
    avals = [get_aval(x) for x in leaves]
    sizes = [a.size for a in avals]
    shapes = [a.shape for a in avals]
    dtypes = [a.dtype for a in avals]
    dtype = np.result_type(*dtypes) if leaves else np.dtype(np.float64)
    total = int(sum(sizes))

    if not leaves:
        flat = np.zeros(0, dtype)
    elif _is_traced(leaves):
        parts = [reshape(convert_element_type(x, dtype), (s,)) for x, s in zip(leaves, sizes)]
        flat = concatenate(parts, 0) if len(parts) > 1 else parts[0]
    else:
        flat = np.concatenate([np.ravel(np.asarray(x, dtype)) for x in leaves])

    def unravel(vec):
        vec = as_value(vec, "unravel")
        a = get_aval(vec)
        if a.shape != (total,):
            raise ShapeError(f"unravel: expected a vector of shape ({total},) (the size of the "
                             f"raveled tree), got {a.shape}.")
        out, start = [], 0
        traced = isinstance(vec, Tracer)
        for size, shape, dt in zip(sizes, shapes, dtypes):
            if traced:
                from functrans.primitives.shape_ops import slice_
                piece = slice_(vec, (start,), (start + size,))
                out.append(convert_element_type(reshape(piece, shape), dt))
            else:
                # a copy: each leaf is the caller's own, not a view into `vec`
                out.append(np.asarray(vec[start:start + size]).reshape(shape).astype(dt))
            start += size
        return tree_unflatten(treedef, out)

    return flat, unravel
