"""Results the caller owns: no returned numpy array shares memory with an argument, a constant
or another returned array, and each can be written into.

numpy arrays are mutable, so a transform that handed back its argument (the program was
`x + 0.0`, simplified to `x`; a gradient equal to another argument; a `cond` branch returning
its operand) would let `g *= -0.1` overwrite the caller's data, and one that handed back a
read-only broadcast (a gradient materialised from a scalar) would make it raise. Each place
where a transform hands results back calls `unaliased` (or, in generated code, `owned` on the
outputs that may alias): only such an array is copied, so fresh results cost a few attribute
reads.

Arrays of other backends (CuPy, dask) pass through unchanged.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from functrans.core.array import Array
from functrans.tree_util import tree_flatten, tree_unflatten

_ndarray = np.ndarray


def _allocation(a):
    """The array owning the memory of `a` when numpy says so plainly (numpy points a view's
    `base` at the array that owns the memory; a view as functrans's `Array` adds one link per
    change of type to that chain), else None (another subclass, a foreign buffer)."""
    base = a.base
    while base is not None:
        t = type(base)
        if t is not _ndarray and t is not Array:
            return None
        a, base = base, base.base
    return a if type(a) is _ndarray or type(a) is Array else None


def may_share(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two numpy arrays may share memory: views of different allocations never do
    (a test of their `base`s); views of one allocation, and arrays whose allocation numpy
    does not name plainly, go to numpy's bounds test."""
    if a is b:
        return True
    oa, ob = _allocation(a), _allocation(b)
    if oa is not None and ob is not None and oa is not ob:
        return False
    return np.may_share_memory(a, b)


def owned(x, *others):
    """`x`, or a copy of it when it is a numpy array that may share memory with one of the
    numpy arrays in `others`, or that cannot be written into (a broadcast view)."""
    if isinstance(x, _ndarray):
        if not x.flags.writeable:
            return x.copy()
        for o in others:
            if isinstance(o, _ndarray) and may_share(x, o):
                return x.copy()
    return x


def unaliased(values: Sequence, sources: Sequence = ()) -> list:
    """`values` (the flat results a transform returns) with every numpy array that may share
    memory with a numpy array of `sources` (its arguments, its constants) or with an earlier
    entry of `values`, or that cannot be written into, replaced by a copy. Arrays are grouped
    by the allocation they view, so a fresh result costs a dictionary lookup; numpy's bounds
    test runs only between views of one allocation, and for arrays whose allocation numpy
    does not name plainly (a subclass, a foreign buffer).

    >>> import numpy as np
    >>> x = np.ones(3)
    >>> out = unaliased([x, x[1:], x * 2], [x])
    >>> [np.shares_memory(o, x) for o in out]
    [False, False, False]
    """
    views: dict = {}   # id of an allocation -> the arrays seen that view it
    others: list = []  # arrays whose allocation numpy does not name plainly
    for s in sources:
        if isinstance(s, _ndarray):
            alloc = _allocation(s)
            if alloc is None:
                others.append(s)
            elif id(alloc) in views:
                views[id(alloc)].append(s)
            else:
                views[id(alloc)] = [s]
    out = list(values)
    for i, v in enumerate(out):
        if not isinstance(v, _ndarray):
            continue
        base = v.base  # _allocation(v), inline for a fresh array or a view of an owner
        if base is None:
            alloc = v if type(v) is _ndarray or type(v) is Array else None
        elif type(base) is _ndarray and base.base is None:
            alloc = base
        else:
            alloc = _allocation(v)
        # views of one allocation may still be apart (x[:2], x[2:]): numpy's bounds test
        near = views.get(id(alloc)) if alloc is not None else \
            [s for same in views.values() for s in same]
        if not v.flags.writeable or (near and _overlaps(v, near)) \
                or (others and _overlaps(v, others)):
            v = out[i] = alloc = v.copy()
        if type(v) is _ndarray:  # handed back as functrans's Array (a view: no copy)
            out[i] = v.view(Array)
        if alloc is None:
            others.append(v)
        elif id(alloc) in views:
            views[id(alloc)].append(v)
        else:
            views[id(alloc)] = [v]
    return out


def _overlaps(v, arrays) -> bool:
    for s in arrays:
        if s is v or np.may_share_memory(v, s):
            return True
    return False


def unaliased_tree(tree, sources):
    """`unaliased` for a pytree of results and a pytree of arguments."""
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, unaliased(leaves, tree_flatten(sources)[0]))
