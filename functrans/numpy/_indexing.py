"""`x[idx]` and `x.at[idx].set/add/get` for tracers, with numpy's indexing rules.

Basic indices (ints, slices with any step, None, Ellipsis) lower to `slice`, `rev` and a
reshape. Advanced indices (integer arrays and lists, concrete boolean masks, and ints mixed with
them) lower to one `gather`: the indexed axes are moved together (to the front when slices, None
or Ellipsis separate them, as numpy does), merged by a reshape, and indexed with the raveled
index `i * n + j` (row-major strides).

Bounds: concrete indices are checked at trace time and raise IndexError like numpy. Traced
integer indices have negative values wrapped (`i + n`) and are then clamped into range, as JAX
does, since their values are not known while tracing. A boolean mask must be concrete: its
number of True entries decides the result's shape.

`x.at[idx]` updates go through the flat positions `x[idx]` selects and one `scatter_add`, so
they share these rules; note that out-of-range traced indices are clamped there too, where
JAX would drop the update.
"""

from __future__ import annotations

import operator

import numpy as np

from functrans.core.array import as_array, install_concrete_methods
from functrans.core.trace import Tracer, install_array_methods
from functrans.errors import ArgumentError, ConcretizationTypeError, ShapeError
from functrans.numpy._core import asarray
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.primitives.indexing import clamp_index, gather, scatter_add
from functrans.primitives.shape_ops import (broadcast_to, convert_element_type, expand_dims,
                                            reshape, rev, slice_, transpose)

__all__ = ["take", "take_along_axis"]

_INDEX_HELP = ("only integers, slices (`:`), ellipsis (`...`), None (`numpy.newaxis`) and "
               "integer or boolean arrays are valid indices")


# --- parsing an index into tokens ------------------------------------------------------------
# Each token is (kind, value): "slice" (a slice), "int" (a Python int), "none", "sep" (where an
# Ellipsis stood: separates advanced indices even when it covers no axes), "adv" (an integer
# index array, numpy or traced), "bool0" (a 0-d boolean: an advanced index over a new axis) and
# "mask" (a concrete boolean array, replaced by its nonzero() arrays while parsing).

def _concrete_mask(m):
    if isinstance(m, Tracer):
        val = m.concrete_value()
        if val is None:
            raise ConcretizationTypeError(
                f"boolean mask index {m.aval.str_short()} is traced (while tracing for "
                f"`{m._trace.main.name}`): the number of True entries decides the result's "
                "shape, which must be known while tracing. Use "
                "functrans.numpy.where(mask, x, 0) to keep the shape, or pass a concrete "
                "(numpy) mask.")
        return np.asarray(val)
    return m


def _as_index_array(i):
    """numpy array or traced array for a list/array index; None if `i` is not array-like."""
    if isinstance(i, Tracer):
        return i
    if isinstance(i, list | tuple | np.ndarray):
        # a tuple inside the index tuple is a sequence, as numpy reads x[(0, 1), (3, 2)]
        if isinstance(i, tuple) and any(isinstance(v, slice) or v is None or v is Ellipsis
                                        for v in i):
            return None
        arr = asarray(i)
        if isinstance(arr, np.ndarray) and arr.size == 0 and arr.dtype == np.float64 \
                and isinstance(i, list | tuple):
            arr = arr.astype(np.intp)  # numpy reads an empty list as an integer index
        return arr
    return None


def _token(i):
    if i is None:
        return ("none", None)
    if i is Ellipsis:
        return ("sep", None)
    if isinstance(i, slice):
        return ("slice", slice(*(None if v is None else operator.index(v)
                                 for v in (i.start, i.stop, i.step))))
    if isinstance(i, bool | np.bool_):
        return ("bool0", bool(i))
    if isinstance(i, int | np.integer):
        return ("int", int(i))
    arr = _as_index_array(i)
    if arr is None:
        raise IndexError(f"{_INDEX_HELP}; got {i!r} of type {type(i).__name__}.")
    if arr.dtype == np.bool_:
        mask = _concrete_mask(arr)
        return ("bool0", bool(mask)) if mask.ndim == 0 else ("mask", mask)
    if not np.issubdtype(arr.dtype, np.integer):
        raise IndexError(f"{_INDEX_HELP}; got an array of dtype {arr.dtype.name}. Convert "
                         "float indices with .astype(int).")
    return ("adv", arr)


def _parse(x, idx):
    """Tokens for `x[idx]`: the Ellipsis expanded (its 'sep' marker kept), trailing axes
    filled with full slices, boolean masks replaced by their nonzero() index arrays."""
    raw = [_token(i) for i in (idx if isinstance(idx, tuple) else (idx,))]
    if sum(k == "sep" for k, _ in raw) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    width = {"slice": 1, "int": 1, "adv": 1}
    consumed = sum(v.ndim if k == "mask" else width.get(k, 0) for k, v in raw)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{consumed} were indexed")
    fill = [("slice", slice(None))] * (x.ndim - consumed)
    toks, axis = [], 0
    for k, v in raw:
        if k == "sep":
            toks.append((k, v))
            toks.extend(fill)
            axis += len(fill)
            fill = []
        elif k == "mask":
            covered = x.shape[axis:axis + v.ndim]
            if tuple(covered) != v.shape:
                raise IndexError(f"boolean index of shape {v.shape} does not match the "
                                 f"indexed axes {tuple(covered)} (from axis {axis}) of an array "
                                 f"of shape {x.shape}.")
            toks.extend(("adv", nz) for nz in np.nonzero(v))
            axis += v.ndim
        else:
            toks.append((k, v))
            axis += width.get(k, 0)
    return toks + fill


# --- basic indexing --------------------------------------------------------------------------

def _slice_params(s: slice, d: int):
    """(start, limit, stride, flip, length) of a Python slice over an axis of size d, with
    negative steps as a positive-stride slice followed by a reversal."""
    start, stop, step = s.indices(d)
    n = len(range(start, stop, step))
    if n == 0:
        return 0, 0, 1, False, 0
    if step > 0:
        return start, start + (n - 1) * step + 1, step, False, n
    first = start + (n - 1) * step
    return first, start + 1, -step, True, n


def _check_int(i, d, axis):
    if not -d <= i < d:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {d}")
    return i % d


def _apply_basic(x, toks):
    """Apply slices and ints; returns the result and, per remaining token, its result axis.
    Tokens 'none' and 'bool0' become new size-1 axes."""
    shape = x.shape
    starts, limits, strides, flips, squeezed = [], [], [], [], []
    axis = 0
    for k, v in toks:
        if k in ("none", "bool0", "sep"):
            continue
        d = shape[axis]
        if k == "slice":
            s, l, st, f, _ = _slice_params(v, d)
            starts.append(s), limits.append(l), strides.append(st)
            if f:
                flips.append(axis)
        elif k == "int":
            i = _check_int(v, d, axis)
            starts.append(i), limits.append(i + 1), strides.append(1)
            squeezed.append(axis)
        else:  # "adv": whole axis kept for the gather
            starts.append(0), limits.append(d), strides.append(1)
        axis += 1
    out = slice_(x, starts, limits, strides)
    out = rev(out, flips)
    # final layout: squeeze int axes, insert new axes for none/bool0
    out_shape = []
    axis = 0
    for k, v in toks:
        if k == "sep":
            continue
        if k in ("none", "bool0"):
            out_shape.append(1)
            continue
        if k != "int":
            out_shape.append(out.shape[axis])
        axis += 1
    if tuple(out_shape) != tuple(out.shape):
        if not squeezed:
            new = [j for j, (k, _) in enumerate(t for t in toks if t[0] != "sep")
                   if k in ("none", "bool0")]
            out = expand_dims(out, new)
        else:
            out = reshape(out, out_shape)
    return out


# --- advanced indexing -----------------------------------------------------------------------

def _normalize_concrete(i, d, axis):
    i = np.asarray(i)
    if i.size and (i.min() < -d or i.max() >= d):
        bad = i[(i < -d) | (i >= d)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {d}")
    return np.where(i < 0, i + d, i).astype(np.intp)


def _normalize_traced(i, d):
    i = convert_element_type(i, np.intp)
    wrapped = E.add(i, np.asarray(d, np.intp))
    return E.select(E.lt_p.bind(i, np.zeros((), np.intp)), wrapped, i)


def getitem(x, idx):
    """numpy's `x[idx]` for arrays and tracers alike (installed as Tracer.__getitem__).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.grad(lambda x: fnp.sum(x[[0, 0, 2], ::-1]))(fnp.ones((3, 2))).tolist()
    [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    """
    x = asarray(x)
    toks = _parse(x, idx)
    if not any(k in ("adv", "bool0") for k, _ in toks):
        return _apply_basic(x, toks)
    # ints join the advanced indices; every other token becomes one axis of y below
    toks = [("adv", np.asarray(v)) if k == "int" else (k, v) for k, v in toks]
    y = _apply_basic(x, toks)
    arrays, positions, tok_pos = [], [], []
    axis = 0
    for j, (k, v) in enumerate(toks):
        if k == "sep":
            continue
        if k == "adv":
            arrays.append(v)
        elif k == "bool0":
            arrays.append(np.zeros(1 if v else 0, np.intp))
        if k in ("adv", "bool0"):
            positions.append(axis)
            tok_pos.append(j)
        axis += 1
    sizes = [y.shape[p] for p in positions]
    try:
        out_idx_shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         f"with shapes {' '.join(str(np.shape(a)) for a in arrays)}") from None
    adjacent = tok_pos == list(range(tok_pos[0], tok_pos[0] + len(tok_pos)))
    # move the indexed axes together (to the front unless numpy keeps them in place)
    if not adjacent:
        rest = [i for i in range(y.ndim) if i not in positions]
        y = transpose(y, positions + rest)
        positions = list(range(len(positions)))
    p = positions[0]
    traced = any(isinstance(a, Tracer) for a in arrays)
    if traced:
        arrays = [_normalize_traced(a, d) if isinstance(a, Tracer)
                  else _normalize_concrete(a, d, ax) for a, d, ax in zip(arrays, sizes,
                                                                          positions)]
    else:
        arrays = [_normalize_concrete(a, d, ax) for a, d, ax in zip(arrays, sizes, positions)]
    if len(arrays) == 1:
        index = arrays[0]
    else:
        # merge the indexed axes into one; the index is the row-major raveled multi-index
        merged = int(np.prod(sizes, dtype=np.int64))
        y = reshape(y, y.shape[:p] + (merged,) + y.shape[p + len(sizes):])
        strides = np.cumprod([1] + sizes[:0:-1])[::-1]
        if traced:
            index = None
            for a, st, d in zip(arrays, strides, sizes):
                a = clamp_index(a, d) if isinstance(a, Tracer) else a
                term = a if st == 1 else E.mul(a, np.asarray(st, np.intp))
                index = term if index is None else E.add(index, term)
            index = broadcast_to(index, out_idx_shape)
        else:
            index = sum(a * st for a, st in zip(arrays, strides))
            index = np.broadcast_to(index, out_idx_shape)
    return gather(y, index, axis=p)


def take(a, indices, axis=None, mode=None):
    """numpy.take: integer indices along one axis (the flattened array when axis is None).
    Out-of-range traced indices are clamped (mode 'clip'); concrete ones raise unless
    mode='clip' or 'wrap'. Unlike `numpy_array[tracer]`, this accepts traced indices into a
    concrete array.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.vmap(lambda i: fnp.take(fnp.arange(10.0), i))(fnp.asarray([3, -1])).tolist()
    [3.0, 9.0]
    """
    a = asarray(a)
    if axis is None:
        a, axis = reshape(a, (a.size,)), 0
    axis = operator.index(axis) % max(a.ndim, 1)
    idx = indices if isinstance(indices, Tracer) else np.asarray(indices)
    n = a.shape[axis]
    if not isinstance(idx, Tracer):
        if mode == "wrap":
            idx = np.mod(idx, n)
        elif mode == "clip":
            idx = np.clip(idx, 0, max(n - 1, 0))
        else:
            idx = _normalize_concrete(idx, n, axis)
    elif mode != "clip":
        idx = _normalize_traced(idx, n)
    return gather(a, idx, axis=axis)


def take_along_axis(arr, indices, axis):
    """numpy.take_along_axis: pick `indices` along `axis`, matching the other axes of `arr`
    (e.g. `take_along_axis(logp, labels[:, None], axis=1)`); indices may be traced.

    >>> import functrans.numpy as fnp
    >>> fnp.take_along_axis(fnp.eye(3) * 2.0, fnp.asarray([[1], [1], [0]]), 1).tolist()
    [[0.0], [2.0], [0.0]]
    """
    a = asarray(arr)
    idx = indices if isinstance(indices, Tracer) else np.asarray(indices)
    if axis is None:
        a, axis = reshape(a, (a.size,)), 0
    if idx.ndim != a.ndim:
        raise ValueError(f"take_along_axis: indices of shape {idx.shape} must have as many "
                         f"dimensions as the array ({a.shape}).")
    axis = operator.index(axis)
    if not -a.ndim <= axis < a.ndim:
        raise IndexError(f"take_along_axis: axis {axis} is out of bounds for an array of "
                         f"dimension {a.ndim}.")
    axis %= a.ndim
    full = tuple(idx if k == axis else np.arange(d).reshape(
        tuple(-1 if j == k else 1 for j in range(a.ndim))) for k, d in enumerate(a.shape))
    return getitem(a, full)


# --- functional updates: x.at[idx].set(v) / .add(v) / .get() ---------------------------------

def _has_tracer(idx) -> bool:
    if isinstance(idx, Tracer):
        return True
    return isinstance(idx, tuple | list) and any(_has_tracer(i) for i in idx)


def _positions(x, idx):
    """Flat positions of the elements x[idx] selects, shaped like x[idx]: a numpy array when
    the index is concrete (numpy itself applies it, even while staging), else traced."""
    flat = np.arange(x.size).reshape(x.shape)
    if not _has_tracer(idx):
        return flat[idx]
    return getitem(flat, idx)


def _updates(x, v, shape):
    v = asarray(v)
    v = convert_element_type(v, x.dtype) if v.dtype != x.dtype else v
    while v.ndim > len(shape) and v.shape[0] == 1:  # numpy drops leading unit axes
        v = reshape(v, v.shape[1:])
    if v.ndim > len(shape) or any(a not in (1, b) for a, b in zip(v.shape[::-1],
                                                                   shape[::-1])):
        raise ShapeError(f"x.at[...]: updates of shape {v.shape} cannot be broadcast to the "
                         f"indexed shape {tuple(shape)}.")
    return broadcast_to(v, tuple(shape))


def _scatter_flat(x, pos, v):
    """x raveled with v (shaped like pos) added at positions pos (all flat)."""
    flat = reshape(x, (x.size,))
    return scatter_add(flat, reshape(pos, (int(np.size(pos)),)),
                       reshape(v, (int(np.size(pos)),)), axis=0)


class _Updates:
    """The updates of `x.at[idx]` for in-bounds indices (see `_IndexRef`, which handles the
    out-of-bounds modes around them)."""

    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def add(self, values):
        x = asarray(self.x)
        pos = _positions(x, self.idx)
        v = _updates(x, values, np.shape(pos))
        return reshape(_scatter_flat(x, pos, v), x.shape)

    def subtract(self, values):
        v = asarray(values)
        return self.add(E.neg(v) if isinstance(v, Tracer) else -v)

    def set(self, values):
        """Replace the selected elements. Repeated concrete indices: the last update wins, as
        in numpy. Repeated traced indices: their updates are averaged (JAX leaves the choice
        unspecified), which is exact whenever they write the same value."""
        x = asarray(self.x)
        pos = _positions(x, self.idx)
        v = _updates(x, values, np.shape(pos))
        n = x.size
        flat = reshape(x, (n,))
        zeros = np.zeros(n, x.dtype)
        if not isinstance(pos, Tracer):
            flat_pos = np.asarray(pos).reshape(-1)
            uniq, first_from_end = np.unique(flat_pos[::-1], return_index=True)
            keep = flat_pos.size - 1 - first_from_end  # the last occurrence of each position
            v_kept = gather(reshape(v, (flat_pos.size,)), keep, axis=0)
            new = scatter_add(zeros, uniq, v_kept, axis=0)
            hit = np.zeros(n, np.bool_)
            hit[uniq] = True
            return reshape(E.select(hit, new, flat), x.shape)
        m = int(np.size(pos))
        pos = reshape(pos, (m,))
        counts = scatter_add(np.zeros(n, np.intp), pos, np.ones(m, np.intp), axis=0)
        hit = E.gt_p.bind(counts, np.zeros((), np.intp))
        work = x.dtype if np.issubdtype(x.dtype, np.inexact) else np.dtype(np.intp)
        total = scatter_add(np.zeros(n, work), pos,
                            convert_element_type(reshape(v, (m,)), work), axis=0)
        safe = E.select(hit, convert_element_type(counts, work), np.ones((), work))
        mean = convert_element_type(E.div(total, safe), x.dtype)
        return reshape(E.select(hit, mean, flat), x.shape)

    def multiply(self, values):
        """x[idx] *= values; a repeated index multiplies by each of its updates."""
        return self._combine(values, R.reduce_prod, "multiply")

    def divide(self, values):
        """x / (ones.at[idx].multiply(values)), as JAX defines it."""
        from functrans.numpy._elementwise import true_divide
        x = asarray(self.x)
        return true_divide(x, _Updates(np.ones(x.shape, x.dtype), self.idx).multiply(values))

    def power(self, values):
        """x ** (ones.at[idx].multiply(values)), as JAX defines it (repeated indices multiply
        their exponents)."""
        from functrans.numpy._elementwise import power
        x = asarray(self.x)
        return power(x, _Updates(np.ones(x.shape, x.dtype), self.idx).multiply(values))

    def min(self, values):
        """x[idx] = minimum(x[idx], values) over every update of each position; at ties the
        derivative is shared evenly by all the tied entries (as reduce_min shares it)."""
        return self._combine(values, R.reduce_min, "min")

    def max(self, values):
        """x[idx] = maximum(x[idx], values) over every update of each position; ties as min."""
        return self._combine(values, R.reduce_max, "max")

    def _combine(self, values, reduce, name):
        """Each selected position of x reduced with all its updates: a table with one row per
        position, x's entry first and then its updates (padded with the reduction's identity),
        reduced along the row by `reduce`, so derivatives come from reduce's rule."""
        x = asarray(self.x)
        pos = _positions(x, self.idx)
        m = int(np.size(pos))
        v = reshape(_updates(x, values, np.shape(pos)), (m,))
        n = x.size
        flat = reshape(x, (n,))
        if m == 0:
            return x
        fill = np.asarray(_identity(name, x.dtype), x.dtype)
        if isinstance(pos, Tracer):
            # traced positions: a dense (n, m) table of which update hits which entry
            hits = E.eq(reshape(pos, (1, m)), np.arange(n, dtype=pos.dtype)[:, None])
            table = E.select(hits, broadcast_to(reshape(v, (1, m)), (n, m)), fill)
            rows = S.concatenate([reshape(flat, (n, 1)), table], 1)
            return reshape(reduce(rows, (1,)), x.shape)
        p = np.asarray(pos).reshape(-1)
        uniq, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
        k, width = uniq.size, int(counts.max())
        order = np.argsort(inverse, kind="stable")         # updates grouped by position
        slot = np.arange(m) - np.repeat(np.cumsum(counts) - counts, counts)
        index = np.zeros((k, width), np.intp)
        valid = np.zeros((k, width), np.bool_)
        index[inverse[order], slot] = order
        valid[inverse[order], slot] = True
        table = E.select(valid, gather(v, index, axis=0), fill)
        rows = S.concatenate([reshape(gather(flat, uniq, axis=0), (k, 1)), table], 1)
        new = scatter_add(np.zeros(n, x.dtype), uniq, reduce(rows, (1,)), axis=0)
        hit = np.zeros(n, np.bool_)
        hit[uniq] = True
        return reshape(E.select(hit, new, flat), x.shape)


_MODES = (None, "promise_in_bounds", "clip", "drop", "fill")


class _IndexRef:
    """`x.at[idx]`: each method returns a new array (x is never modified), as in JAX; the
    keyword arguments are JAX's. `mode` says what an out-of-bounds integer index does: None
    or "promise_in_bounds" (the default: a concrete one raises IndexError, as numpy does; a
    traced one is clamped), "clip" (clamped into range), "drop" (its updates are skipped) or
    "fill" (`get` gives `fill_value` there). `indices_are_sorted` and `unique_indices` are
    hints JAX's compiler may use; they change nothing here."""

    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        """x[idx]; with mode="fill", `fill_value` where an index is out of bounds (NaN for
        floats, the most negative integer, the largest unsigned one, True: JAX's defaults)."""
        x = asarray(self.x)
        _check_mode(mode, "get")
        if mode in (None, "promise_in_bounds"):
            return as_array(getitem(x, self.idx))
        key, padded = _mode_key(x, self.idx, mode)
        if padded:  # "drop" or "fill": an out-of-bounds index reads the fill slot
            fill = _default_fill(x.dtype) if fill_value is None else fill_value
            x = _pad(x, padded, fill)
        return as_array(getitem(x, key))

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """Replace the selected elements. Repeated concrete indices: the last update wins, as
        in numpy. Repeated traced indices: their updates are averaged (JAX leaves the choice
        unspecified), which is exact whenever they write the same value."""
        return self._update("set", values, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x[idx] += values; a repeated index adds each of its updates."""
        return self._update("add", values, mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x[idx] -= values; a repeated index subtracts each of its updates."""
        return self._update("subtract", values, mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x[idx] *= values; a repeated index multiplies by each of its updates."""
        return self._update("multiply", values, mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x / (ones.at[idx].multiply(values)), as JAX defines it."""
        return self._update("divide", values, mode)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x ** (ones.at[idx].multiply(values)), as JAX defines it (repeated indices multiply
        their exponents)."""
        return self._update("power", values, mode)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x[idx] = minimum(x[idx], values) over every update of each position; at ties the
        derivative is shared evenly by all the tied entries (as reduce_min shares it)."""
        return self._update("min", values, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """x[idx] = maximum(x[idx], values) over every update of each position; ties as min."""
        return self._update("max", values, mode)

    def _update(self, op, values, mode):
        x = asarray(self.x)
        _check_mode(mode, op)
        if mode in (None, "promise_in_bounds"):
            return as_array(getattr(_Updates(x, self.idx), op)(values))
        key, padded = _mode_key(x, self.idx, mode)
        if not padded:  # "clip", or no integer index to drop
            return as_array(getattr(_Updates(x, key), op)(values))
        # "drop"/"fill": update a copy with one spare slot per indexed axis, where the
        # out-of-bounds indices point, then cut the slots off
        out = getattr(_Updates(_pad(x, padded, 0), key), op)(values)
        return as_array(slice_(out, [0] * x.ndim, list(x.shape), [1] * x.ndim))


def _check_mode(mode, op):
    if mode not in _MODES:
        raise ArgumentError(f"x.at[...].{op}: mode={mode!r} is not one of JAX's modes "
                            "(None, 'promise_in_bounds', 'clip', 'drop', 'fill'); pass one "
                            "of those (docs/arrays.md says what each does).")


def _mode_key(x, idx, mode):
    """The index `idx` with its integer indices rewritten for `mode`: clamped into range
    ("clip"), or sent to a spare slot past the end of their axis when out of bounds ("drop",
    "fill"); and the axes that need that slot."""
    key, padded, axis = [], [], 0
    for k, v in _parse(x, idx):
        if k == "sep":  # the Ellipsis, now covering no axis (the fill slices follow it)
            key.append(Ellipsis)
        elif k == "none":
            key.append(None)
        elif k == "bool0":
            key.append(v)
        else:
            if k == "slice":
                key.append(v)
            else:  # "int" or "adv"
                key.append(_rewritten_index(v, x.shape[axis], mode))
                if mode != "clip":
                    padded.append(axis)
            axis += 1
    return tuple(key), padded


def _rewritten_index(i, d, mode):
    """An integer index (Python int, numpy or traced array) for an axis of size d: negative
    ones wrapped, then clamped ("clip") or sent to d when out of bounds ("drop", "fill")."""
    if isinstance(i, Tracer):
        i = convert_element_type(i, np.intp) if i.dtype != np.intp else i
        n = E.select(E.lt_p.bind(i, np.zeros((), np.intp)), E.add(i, np.asarray(d, np.intp)), i)
        if mode == "clip":
            return clamp_index(n, d)
        slot = np.asarray(d, np.intp)
        out = E.select(E.lt_p.bind(n, np.zeros((), np.intp)), slot, n)
        return E.select(E.ge_p.bind(out, slot), slot, out)
    arr = np.asarray(i, np.intp)
    n = np.where(arr < 0, arr + d, arr)
    out = np.clip(n, 0, max(d - 1, 0)) if mode == "clip" else np.where((n < 0) | (n >= d), d, n)
    return int(out) if isinstance(i, int) else out


def _pad(x, axes, fill):
    """x with one more entry, `fill`, at the end of each axis in `axes`."""
    for ax in axes:
        shape = list(x.shape)
        shape[ax] = 1
        x = S.concatenate([x, np.full(shape, fill, x.dtype)], ax)
    return x


def _default_fill(dtype):
    """JAX's fill for out-of-bounds reads: NaN, the most negative or largest integer, True."""
    if dtype == np.bool_:
        return True
    if np.issubdtype(dtype, np.signedinteger):
        return np.iinfo(dtype).min
    if np.issubdtype(dtype, np.unsignedinteger):
        return np.iinfo(dtype).max
    return np.nan


def _identity(name, dtype):
    """The identity element of the reduction `name` in `dtype`."""
    if name == "multiply":
        return 1
    if dtype == np.bool_:
        return name == "min"
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.max if name == "min" else info.min
    return np.inf if name == "min" else -np.inf


class _IndexHelper:
    """`x.at[idx]`: functional updates, as in JAX (x itself is never modified). Tracers and
    functrans's concrete arrays (`Array`, what functrans.numpy returns) have `.at`; plain
    numpy arrays do not (wrap one with functrans.numpy.asarray).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.grad(lambda x: fnp.sum(x.at[1].set(x[0] * 3.0)))(fnp.ones(3)).tolist()
    [4.0, 0.0, 1.0]
    """

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _IndexRef(self.x, idx)


install_array_methods({
    "__getitem__": getitem,
    "at": property(_IndexHelper),
    "take": lambda self, indices, axis=None, mode=None: take(self, indices, axis, mode),
})


def _device(self):
    """The device holding the array: the CPU (JAX's `Array.device`)."""
    from functrans.cpu_device import devices
    return devices()[0]


# functrans's concrete arrays: a key holding a tracer goes to `getitem` (any other stays
# numpy's), and `.at[...]` as on tracers
install_concrete_methods(getitem, {"at": property(_IndexHelper), "device": property(_device)})
