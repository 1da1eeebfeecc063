"""numpy's shape functions over the shape primitives: reshape, transpose, concatenate, stack,
split, tile, repeat, flip, roll, diagonal, ... Functions combining arrays promote their dtypes
like numpy."""

from __future__ import annotations

import builtins
import operator

import numpy as np
from numpy.exceptions import AxisError

from functrans.core.trace import Tracer, install_array_methods
from functrans.core.ownership import owned
from functrans.errors import ConcretizationTypeError, ShapeError
from functrans.numpy._core import asarray, promote, result_dtype
from functrans.primitives import shape_ops as S
from functrans.primitives.indexing import gather
from functrans.primitives.shape_ops import slice_

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "swapaxes", "moveaxis", "squeeze",
           "expand_dims", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
           "atleast_1d", "atleast_2d", "atleast_3d", "concatenate", "concat", "stack",
           "hstack", "vstack", "dstack", "column_stack", "split", "array_split", "hsplit",
           "vsplit", "dsplit", "tile", "repeat", "flip", "fliplr", "flipud", "roll",
           "diagonal", "shape", "ndim", "size", "astype", "append", "rot90", "rollaxis",
           "row_stack"]


def _axis(axis, ndim: int, name: str) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise AxisError(f"{name}: axis {a} is out of bounds for an array of dimension {ndim}; "
                        f"valid axes are {-ndim} to {ndim - 1}.")
    return a % ndim


def _axes(axis, ndim: int, name: str) -> tuple[int, ...]:
    axes = (axis,) if not np.iterable(axis) else tuple(axis)
    axes = tuple(_axis(a, ndim, name) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axis in {tuple(axis)}.")
    return axes


def shape(a):
    """numpy.shape: the shape of `a`, a tuple of ints (known while tracing)."""
    return tuple(asarray(a).shape)


def ndim(a):
    """numpy.ndim: the number of dimensions of `a` (known while tracing)."""
    return asarray(a).ndim


def size(a, axis=None):
    """numpy.size: the number of elements of `a`, or along `axis` (known while tracing)."""
    a = asarray(a)
    return a.size if axis is None else a.shape[_axis(axis, a.ndim, "size")]


def astype(x, dtype, copy=True):
    """numpy.astype: `x` converted to `dtype`; the derivative flows through float conversions."""
    x = asarray(x)
    if isinstance(x, np.ndarray):
        return x.astype(dtype, copy=copy)
    return S.convert_element_type(x, np.dtype(dtype))


# --- reshaping -------------------------------------------------------------------------------

def _resolve_shape(shape, n: int, name: str) -> tuple[int, ...]:
    shape = (operator.index(shape),) if not np.iterable(shape) else \
        tuple(operator.index(d) for d in shape)
    if shape.count(-1) > 1:
        raise ValueError(f"{name}: can only specify one unknown dimension (-1), got {shape}.")
    if any(d < -1 for d in shape):
        raise ValueError(f"{name}: negative dimension in {shape}; only -1 (inferred) is "
                         "allowed.")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or n % known:
            raise ShapeError(f"{name}: cannot reshape an array of size {n} into shape "
                             f"{shape}.")
        shape = tuple(n // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != n:
        raise ShapeError(f"{name}: cannot reshape an array of size {n} into shape {shape}; "
                         "the element counts must match (use -1 for one inferred axis).")
    return shape


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """numpy.reshape in C order (the only order supported); one entry of `shape` may be -1."""
    if order != "C":
        raise NotImplementedError(f"reshape: order={order!r} is not supported; only 'C'.")
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape: pass the new shape, e.g. reshape(a, (2, -1)).")
    a = asarray(a)
    return S.reshape(a, _resolve_shape(shape, a.size, "reshape"))


def ravel(a, order="C"):
    """numpy.ravel: `a` flattened in C order."""
    if order not in ("C", "A", "K"):
        raise NotImplementedError(f"ravel: order={order!r} is not supported; only 'C'.")
    a = asarray(a)
    return S.reshape(a, (a.size,))


def transpose(a, axes=None):
    """numpy.transpose: the axes of `a` permuted by `axes` (reversed by default)."""
    a = asarray(a)
    if axes is None:
        return S.transpose(a, tuple(reversed(range(a.ndim))))
    axes = _axes(axes, a.ndim, "transpose")
    if len(axes) != a.ndim:
        raise ValueError(f"transpose: axes {axes} don't match an array of shape {a.shape}; "
                         f"give a permutation of all {a.ndim} axes.")
    return S.transpose(a, axes)


permute_dims = transpose


def swapaxes(a, axis1, axis2):
    """numpy.swapaxes: `a` with `axis1` and `axis2` exchanged."""
    a = asarray(a)
    i, j = _axis(axis1, a.ndim, "swapaxes"), _axis(axis2, a.ndim, "swapaxes")
    perm = list(range(a.ndim))
    perm[i], perm[j] = j, i
    return S.transpose(a, perm)


def moveaxis(a, source, destination):
    """numpy.moveaxis: the axes `source` of `a` moved to positions `destination`."""
    a = asarray(a)
    src = _axes(source, a.ndim, "moveaxis")
    dst = _axes(destination, a.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError("moveaxis: `source` and `destination` must have the same number of "
                         "elements.")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return S.transpose(a, order)


def squeeze(a, axis=None):
    """numpy.squeeze: `a` without its axes of length one (or only those in `axis`)."""
    a = asarray(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = _axes(axis, a.ndim, "squeeze")
        bad = [i for i in axes if a.shape[i] != 1]
        if bad:
            raise ValueError(f"squeeze: cannot select an axis to squeeze out which has size "
                             f"not equal to one (axes {bad} of shape {a.shape}).")
    return S.squeeze(a, axes) if axes else a


def expand_dims(a, axis):
    """numpy.expand_dims: `a` with new axes of length one at positions `axis`."""
    a = asarray(a)
    n = a.ndim + (len(axis) if np.iterable(axis) else 1)
    axes = _axes(axis, n, "expand_dims")
    return S.expand_dims(a, axes)


def broadcast_shapes(*shapes):
    """numpy.broadcast_shapes: the shape the given shapes broadcast to, or a ShapeError."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError(f"broadcast_shapes: shapes {', '.join(map(str, shapes))} do not "
                         "broadcast (numpy rules: axes aligned from the right must be equal or "
                         "1).") from None


def broadcast_to(array, shape):
    """numpy.broadcast_to: `array` broadcast to `shape`."""
    a = asarray(array)
    shape = (operator.index(shape),) if not np.iterable(shape) else tuple(shape)
    if len(shape) < a.ndim or any(d not in (1, s) for d, s in
                                  zip(a.shape[::-1], shape[::-1])):
        raise ShapeError(f"broadcast_to: cannot broadcast an array of shape {a.shape} to shape "
                         f"{shape}; each axis (aligned from the right) must be 1 or equal the "
                         "target size.")
    return S.broadcast_to(a, shape)


def broadcast_arrays(*args):
    """numpy.broadcast_arrays: the arguments broadcast to their common shape, as a tuple."""
    args = [asarray(a) for a in args]
    shape = broadcast_shapes(*(a.shape for a in args))
    return tuple(S.broadcast_to(a, shape) for a in args)


def _atleast(arys, n, fn):
    out = [fn(asarray(a)) if asarray(a).ndim < n else asarray(a) for a in arys]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys):
    """numpy.atleast_1d: each argument with at least one dimension."""
    return _atleast(arys, 1, lambda a: S.reshape(a, (1,)))


def atleast_2d(*arys):
    """numpy.atleast_2d: each argument with at least two dimensions."""
    return _atleast(arys, 2, lambda a: S.reshape(a, (1,) * (2 - a.ndim) + a.shape))


def atleast_3d(*arys):
    """numpy.atleast_3d: each argument with at least three dimensions."""
    def up(a):
        if a.ndim == 0:
            return S.reshape(a, (1, 1, 1))
        if a.ndim == 1:
            return S.reshape(a, (1, a.shape[0], 1))
        return S.reshape(a, a.shape + (1,))
    return _atleast(arys, 3, up)


# --- joining ---------------------------------------------------------------------------------

def _promoted(arrays, dtype, name):
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError(f"{name}: need at least one array to {name}.")
    dtype = result_dtype(*arrays) if dtype is None else np.dtype(dtype)
    return promote(*arrays, dtype=dtype)


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.concatenate, promoting dtypes like numpy; one `concatenate` equation.

    >>> import functrans.numpy as fnp
    >>> fnp.concatenate([fnp.ones(2, int), fnp.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    if out is not None:
        raise NotImplementedError("concatenate: `out=` is not supported; arrays are immutable.")
    if isinstance(arrays, Tracer | np.ndarray):
        arrays = list(arrays)
    arrays = _promoted(arrays, dtype, "concatenate")
    if axis is None:
        arrays = [S.reshape(a, (a.size,)) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("concatenate: zero-dimensional arrays cannot be concatenated; use "
                         "stack, or atleast_1d first.")
    ax = _axis(axis, nd, "concatenate")
    shapes = [a.shape for a in arrays]
    if any(len(s) != nd or any(x != y for i, (x, y) in enumerate(zip(s, shapes[0]))
                                if i != ax) for s in shapes):
        raise ShapeError(f"concatenate: shapes {shapes} must agree on every axis except the "
                         f"concatenation axis {ax} and have the same number of dimensions.")
    return _joined(S.concatenate(arrays, ax), arrays)


concat = concatenate


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """numpy.stack: arrays of one shape joined along a new axis.

    >>> import functrans.numpy as fnp
    >>> fnp.stack([fnp.ones(2), fnp.zeros(2)], axis=1).shape
    (2, 2)
    """
    if out is not None:
        raise NotImplementedError("stack: `out=` is not supported; arrays are immutable.")
    if isinstance(arrays, Tracer | np.ndarray):
        arrays = list(arrays)
    arrays = _promoted(arrays, dtype, "stack")
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise ShapeError(f"stack: all input arrays must have the same shape, got "
                         f"{[a.shape for a in arrays]}. Broadcast or reshape them first.")
    ax = _axis(axis, arrays[0].ndim + 1, "stack")
    return _joined(S.concatenate([S.expand_dims(a, (ax,)) for a in arrays], ax), arrays)


def _joined(out, arrays):
    """A join's result as numpy's: a new array even when there was one array to join (the
    primitive's wrapper then hands back that array, or a view of it)."""
    return owned(out, arrays[0]) if len(arrays) == 1 else out


def hstack(tup, *, dtype=None, casting="same_kind"):
    """numpy.hstack: the arrays joined along axis 1 (axis 0 for 1-d arrays)."""
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """numpy.vstack: the arrays, made at least 2-d, joined along axis 0."""
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype)


row_stack = vstack  # numpy's older name for vstack (deprecated in numpy 2.0, kept there)


def append(arr, values, axis=None):
    """numpy.append: `values` joined to the end of `arr` (both raveled when `axis` is None).

    >>> import functrans.numpy as fnp
    >>> fnp.append(fnp.ones((1, 2)), [[0.0, 0.0]], axis=0).shape
    (2, 2)
    """
    arr = asarray(arr)
    if axis is None:
        arr = S.reshape(arr, (arr.size,))
        values = asarray(values)
        values = S.reshape(values, (values.size,))
        axis = arr.ndim - 1
    return concatenate((arr, values), axis=axis)


def dstack(tup):
    """numpy.dstack: the arrays, made at least 3-d, joined along axis 2."""
    return concatenate([atleast_3d(a) for a in tup], 2)


def column_stack(tup):
    """numpy.column_stack: 1-d arrays as the columns of a 2-d array, joined with 2-d ones."""
    arrs = []
    for a in tup:
        a = asarray(a)
        arrs.append(S.reshape(a, (a.size, 1)) if a.ndim < 2 else a)
    return concatenate(arrs, 1)


# --- splitting -------------------------------------------------------------------------------

def _take_range(a, axis, start, stop):
    starts = [0] * a.ndim
    limits = list(a.shape)
    starts[axis], limits[axis] = start, builtins.max(start, stop)
    return slice_(a, starts, limits)


def array_split(ary, indices_or_sections, axis=0):
    """numpy.array_split: like split, but sections may differ in length by one."""
    a = asarray(ary)
    ax = _axis(axis, a.ndim, "array_split")
    n = a.shape[ax]
    if np.iterable(indices_or_sections):
        points = [0] + [operator.index(i) for i in indices_or_sections] + [n]
        bounds = []
        for lo, hi in zip(points[:-1], points[1:]):
            start, stop, _ = slice(lo, hi).indices(n)
            bounds.append((start, stop))
    else:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("array_split: number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        ends = np.cumsum([0] + sizes)
        bounds = list(zip(ends[:-1].tolist(), ends[1:].tolist()))
    return [_take_range(a, ax, lo, hi) for lo, hi in bounds]


def split(ary, indices_or_sections, axis=0):
    """numpy.split: `ary` cut into equal sections (or at the given indices) along `axis`."""
    if not np.iterable(indices_or_sections):
        a = asarray(ary)
        n = a.shape[_axis(axis, a.ndim, "split")]
        sections = operator.index(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(f"split: array split does not result in an equal division ({n} "
                             f"elements into {sections} sections); use array_split for "
                             "unequal parts.")
    return array_split(ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    """numpy.hsplit: split along axis 1 (axis 0 for 1-d arrays)."""
    a = asarray(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    """numpy.vsplit: split along axis 0 of an array of at least two dimensions."""
    a = asarray(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """numpy.dsplit: split along axis 2 of an array of at least three dimensions."""
    a = asarray(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


# --- tiling and repeating --------------------------------------------------------------------

def tile(A, reps):
    """numpy.tile: `A` repeated `reps` times along each axis."""
    a = asarray(A)
    reps = (operator.index(reps),) if not np.iterable(reps) else \
        tuple(operator.index(r) for r in reps)
    nd = builtins.max(a.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    a = S.reshape(a, (1,) * (nd - a.ndim) + tuple(a.shape))
    # broadcast to (r0, n0, r1, n1, ...) and merge each pair: copy i of axis k is block i
    inter = tuple(x for r, n in zip(reps, a.shape) for x in (r, n))
    b = S.broadcast_in_dim(a, inter, tuple(range(1, 2 * nd, 2)))
    # a new, writable array, as numpy's (the reshape may be a view of `a` or of a broadcast)
    return owned(S.reshape(b, tuple(r * n for r, n in zip(reps, a.shape))), a)


def _static_ints(x, name):
    if isinstance(x, Tracer):
        val = x.concrete_value()
        if val is None:
            raise ConcretizationTypeError(
                f"{name}: repeats is a traced value {x.aval.str_short()}, but it decides the "
                "shape of the result, which must be known while tracing. Pass concrete "
                "repeats (a Python int or a numpy array).")
        x = val
    return np.asarray(x)


def repeat(a, repeats, axis=None):
    """numpy.repeat: each element of `a` repeated `repeats` times along `axis` (None: flattened)."""
    a = asarray(a)
    if axis is None:
        a, axis = S.reshape(a, (a.size,)), 0
    ax = _axis(axis, a.ndim, "repeat")
    n = a.shape[ax]
    reps = _static_ints(repeats, "repeat")
    if not np.issubdtype(reps.dtype, np.integer):
        raise TypeError(f"repeat: repeats must be integers, got dtype {reps.dtype.name}.")
    if (reps < 0).any():
        raise ValueError("repeat: repeats may not contain negative values.")
    if reps.ndim == 0 or reps.shape == (1,):
        r = int(reps.reshape(()))
        # insert a copy axis after `ax`, broadcast it to r, merge it into `ax`
        shape = a.shape[:ax + 1] + (r,) + a.shape[ax + 1:]
        b = S.broadcast_in_dim(a, shape, tuple(i for i in range(a.ndim + 1) if i != ax + 1))
        # a new, writable array, as numpy's (as in tile)
        return owned(S.reshape(b, a.shape[:ax] + (n * r,) + a.shape[ax + 1:]), a)
    if reps.shape != (n,):
        raise ValueError(f"repeat: repeats of shape {reps.shape} cannot be broadcast to the "
                         f"{n} elements of axis {ax}.")
    return gather(a, np.repeat(np.arange(n), reps), axis=ax)


def flip(m, axis=None):
    """numpy.flip: `m` with the order of its elements reversed along `axis` (all axes if None)."""
    m = asarray(m)
    axes = tuple(range(m.ndim)) if axis is None else _axes(axis, m.ndim, "flip")
    return S.rev(m, axes)


def fliplr(m):
    """numpy.fliplr: `m` with its columns (axis 1) in reverse order."""
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError("fliplr: input must be >= 2-d.")
    return S.rev(m, (1,))


def flipud(m):
    """numpy.flipud: `m` with its rows (axis 0) in reverse order."""
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("flipud: input must be >= 1-d.")
    return S.rev(m, (0,))


def rot90(m, k=1, axes=(0, 1)):
    """numpy.rot90: `m` rotated by 90 degrees `k` times in the plane of `axes` (from the first
    axis towards the second), as flips and a transpose."""
    m = asarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got axes={axes}.")
    if m.ndim < 2:
        raise ValueError(f"rot90: the array must have at least two axes, got shape {m.shape}.")
    a0, a1 = _axis(axes[0], m.ndim, "rot90"), _axis(axes[1], m.ndim, "rot90")
    if a0 == a1:
        raise ValueError(f"rot90: the two axes must differ, got axes={axes}.")
    k = operator.index(k) % 4
    if k == 0:
        return owned(S.transpose(m, tuple(range(m.ndim))), m)
    if k == 2:
        return S.rev(m, (a0, a1))
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return S.transpose(S.rev(m, (a1,)), perm)
    return S.rev(S.transpose(m, perm), (a1,))


def rollaxis(a, axis, start=0):
    """numpy.rollaxis: axis `axis` moved to sit before position `start` (numpy's older
    moveaxis; `start` counts positions in the original array)."""
    a = asarray(a)
    n = a.ndim
    ax = _axis(axis, n, "rollaxis")
    start = operator.index(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise AxisError(f"rollaxis: start {start} must be in 0..{n} for an array of dimension "
                        f"{n} (numpy's rule).")
    if ax < start:
        start -= 1
    order = [i for i in range(n) if i != ax]
    order.insert(start, ax)
    return owned(S.transpose(a, order), a)


def roll(a, shift, axis=None):
    """numpy.roll: the elements of `a` shifted cyclically by `shift` along `axis`."""
    a = given = asarray(a)
    if axis is None:
        return S.reshape(roll(S.reshape(a, (a.size,)), shift, 0), a.shape)
    shifts = np.atleast_1d(_static_ints(shift, "roll"))
    axes = np.atleast_1d(np.asarray(axis))
    shifts, axes = np.broadcast_arrays(shifts, axes)
    total = {}
    for s, ax in zip(shifts.tolist(), axes.tolist()):
        ax = _axis(ax, a.ndim, "roll")
        total[ax] = total.get(ax, 0) + s
    for ax, s in total.items():
        n = a.shape[ax]
        s = s % n if n else 0
        if s:
            a = S.concatenate([_take_range(a, ax, n - s, n), _take_range(a, ax, 0, n - s)], ax)
    return a if a is not given else owned(a, given)  # no shift: a copy, as numpy's


def diagonal(a, offset=0, axis1=0, axis2=1):
    """numpy.diagonal: the `offset` diagonal of `a` over `axis1` and `axis2`, as a new array."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    i, j = _axis(axis1, a.ndim, "diagonal"), _axis(axis2, a.ndim, "diagonal")
    if i == j:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same.")
    a = moveaxis(a, (i, j), (-2, -1))
    *batch, n, m = a.shape
    offset = operator.index(offset)
    length = builtins.max(0, builtins.min(n, m - offset) if offset >= 0
                          else builtins.min(n + offset, m))
    # in the raveled (n, m) block, the diagonal is a strided run with stride m + 1
    flat = S.reshape(a, (*batch, n * m))
    start = (offset if offset >= 0 else -offset * m) if length else 0
    limit = start + (length - 1) * (m + 1) + 1 if length else 0
    nb = len(batch)
    return slice_(flat, (0,) * nb + (start,), tuple(batch) + (limit,), (1,) * nb + (m + 1,))


# --- tracer methods --------------------------------------------------------------------------

def _method_reshape(self, *shape, order="C", **kw):
    if len(shape) == 1:
        shape = shape[0]
    elif not shape:
        shape = kw.pop("shape", kw.pop("newshape", None))
    return reshape(self, shape, order=order)


def _method_transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or np.iterable(axes[0])):
        axes = axes[0]
    return transpose(self, axes or None)


install_array_methods({
    "reshape": _method_reshape,
    "transpose": _method_transpose,
    "T": property(lambda self: transpose(self)),
    "mT": property(lambda self: swapaxes(self, -1, -2)),
    "astype": lambda self, dtype, copy=True: astype(self, dtype),
    "ravel": lambda self, order="C": ravel(self, order),
    "flatten": lambda self, order="C": ravel(self, order),
    "squeeze": lambda self, axis=None: squeeze(self, axis),
    "swapaxes": swapaxes,
    "repeat": lambda self, repeats, axis=None: repeat(self, repeats, axis),
    "diagonal": diagonal,
})
