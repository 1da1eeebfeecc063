"""Products over the one contraction primitive, dot_general: matmul (and `@`), dot, vdot,
inner, outer, tensordot, einsum, trace. Also exports the `linalg` submodule (norm).

>>> import numpy as np, functrans.numpy as fnp
>>> a, b = np.arange(6.).reshape(2, 3), np.arange(3.)
>>> fnp.matmul(a, b), fnp.einsum("ij,j->i", a, b)
(array([ 5., 14.]), array([ 5., 14.]))
"""

from __future__ import annotations

import numpy as np

from functrans.core.trace import install_array_methods
from functrans.errors import ArgumentError, ShapeError
from functrans.numpy._core import asarray, promote
from functrans.primitives import elementwise as E
from functrans.primitives.linalg import dot_general
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.shape_ops import reshape, slice_, squeeze, transpose

__all__ = ['matmul', 'dot', 'vdot', 'inner', 'outer', 'tensordot', 'einsum', 'trace', 'kron',
           'cross', 'convolve', 'linalg']


def _operands(name, *xs):
    return promote(*map(asarray, xs))


def _contract(a, b, a_axes, b_axes):
    return dot_general(a, b, ((tuple(a_axes), tuple(b_axes)), ((), ())))


def _not_aligned(name, a, b, ax_a, ax_b):
    return ShapeError(f"{name}: shapes {a.shape} and {b.shape} not aligned: {a.shape[ax_a]} "
                      f"(dim {ax_a}) != {b.shape[ax_b]} (dim {ax_b}). The contracted axes must "
                      "have the same length.")


# --- matmul ----------------------------------------------------------------------------------

def matmul(a, b):
    """numpy.matmul: 1-d operands act as vectors; leading (batch) axes broadcast.

    Batch axes present in both operands become dot_general batch dimensions; a batch axis of
    size 1 (or missing) on one side is never materialised: it stays a free axis of the other
    operand, and one transpose puts the result in numpy's order.
    """
    a, b = _operands("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands must be at least 1-d, got shapes {a.shape} and "
                         f"{b.shape}. Use * (multiply) for scalars.")
    ka, kb = a.ndim - 1, max(b.ndim - 2, 0)
    if a.shape[ka] != b.shape[kb]:
        raise ShapeError(f"matmul: shapes {a.shape} and {b.shape} do not align: the last axis "
                         f"of the first ({a.shape[ka]}) must equal the "
                         f"{'only' if b.ndim == 1 else 'second-to-last'} axis of the second "
                         f"({b.shape[kb]}).")
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    nb = max(len(a_batch), len(b_batch))
    try:
        out_batch = np.broadcast_shapes(a_batch, b_batch)
    except ValueError:
        raise ShapeError(f"matmul: the batch axes of shapes {a.shape} and {b.shape} "
                         f"({a_batch} and {b_batch}) do not broadcast (numpy rules, aligned "
                         "from the right).") from None
    # per output batch position: "both" (a dot_general batch dim), "a" or "b" (a free dim of
    # that operand); a size-1 axis facing a longer one is squeezed away.
    a_off, b_off = nb - len(a_batch), nb - len(b_batch)
    owner, a_sq, b_sq = [], [], []
    for p in range(nb):
        sa = a_batch[p - a_off] if p >= a_off else None
        sb = b_batch[p - b_off] if p >= b_off else None
        if sa is not None and sb is not None and sa == sb:
            owner.append("both")
        elif sb is None or (sa is not None and sb == 1):
            owner.append("a")
            if sb is not None:
                b_sq.append(p - b_off)
        else:
            owner.append("b")
            if sa is not None:
                a_sq.append(p - a_off)
    a, b = squeeze(a, a_sq), squeeze(b, b_sq)
    a_pos = {p: i for i, p in enumerate(p for p in range(a_off, nb) if p - a_off not in a_sq)}
    b_pos = {p: i for i, p in enumerate(p for p in range(b_off, nb) if p - b_off not in b_sq)}
    shared = [p for p in range(nb) if owner[p] == "both"]
    a_free = [p for p in range(nb) if owner[p] == "a"]
    b_free = [p for p in range(nb) if owner[p] == "b"]
    dn = ((a.ndim - 1,), (b.ndim - 1 if b.ndim == 1 else b.ndim - 2,))
    out = dot_general(a, b, (dn, (tuple(a_pos[p] for p in shared),
                                  tuple(b_pos[p] for p in shared))))
    # dot_general's layout: shared..., a's free batch..., [rows], b's free batch..., [cols]
    has_rows, has_cols = a.ndim - len(a_pos) == 2, b.ndim - len(b_pos) == 2
    layout = shared + a_free + (["rows"] if has_rows else []) + b_free + \
        (["cols"] if has_cols else [])
    target = list(range(nb)) + (["rows"] if has_rows else []) + (["cols"] if has_cols else [])
    return transpose(out, tuple(layout.index(t) for t in target))


# --- dot, vdot, inner, outer, tensordot ------------------------------------------------------

def dot(a, b):
    """numpy.dot: a sum product over the last axis of `a` and the second-to-last of `b`
    (the only axis when `b` is 1-d); scalars multiply."""
    a, b = _operands("dot", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return E.mul(a, b)
    kb = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[kb]:
        raise _not_aligned("dot", a, b, a.ndim - 1, kb)
    return _contract(a, b, (a.ndim - 1,), (kb,))


def vdot(a, b):
    """numpy.vdot: the dot product of the flattened operands, the first conjugated."""
    a, b = _operands("vdot", a, b)
    if a.size != b.size:
        raise ShapeError(f"vdot: operands of shapes {a.shape} and {b.shape} have different "
                         f"sizes ({a.size} != {b.size}); vdot flattens both.")
    if a.dtype.kind == "c":
        a = E.conj(a)
    return _contract(reshape(a, (a.size,)), reshape(b, (b.size,)), (0,), (0,))


def inner(a, b):
    """numpy.inner: a sum product over the last axes of both operands."""
    a, b = _operands("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return E.mul(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise _not_aligned("inner", a, b, a.ndim - 1, b.ndim - 1)
    return _contract(a, b, (a.ndim - 1,), (b.ndim - 1,))


def outer(a, b):
    """numpy.outer: out[i, j] = a.ravel()[i] * b.ravel()[j]."""
    a, b = promote(asarray(a), asarray(b))
    return E.mul(reshape(a, (a.size, 1)), reshape(b, (1, b.size)))


def tensordot(a, b, axes=2):
    """numpy.tensordot: `axes` is N (last N of `a` with first N of `b`) or a pair of axis
    sequences."""
    a, b = _operands("tensordot", a, b)
    if isinstance(axes, int | np.integer):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} must be in [0, {min(a.ndim, b.ndim)}] for "
                             f"shapes {a.shape} and {b.shape}.")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        try:
            ax_a, ax_b = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of axis sequences, got "
                            f"{axes!r}.") from None
        ax_a = [ax_a] if isinstance(ax_a, int | np.integer) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, int | np.integer) else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: shape-mismatch for sum: {len(ax_a)} axes of the "
                             f"first operand vs {len(ax_b)} of the second; give as many each.")
        for x, ax in ((a, ax_a), (b, ax_b)):
            for i in ax:
                if not -x.ndim <= i < x.ndim:
                    raise np.exceptions.AxisError(
                        f"tensordot: axis {i} is out of bounds for shape {x.shape}.")
        ax_a = [int(i) % a.ndim for i in ax_a]
        ax_b = [int(i) % b.ndim for i in ax_b]
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise _not_aligned("tensordot", a, b, i, j)
    return _contract(a, b, ax_a, ax_b)


# --- diagonals and trace ---------------------------------------------------------------------

def _diagonal(x, offset, axis1, axis2):
    """x's diagonal over (axis1, axis2), appended as the last axis (numpy.diagonal's layout):
    the two axes are moved last and flattened, then one strided slice (stride m + 1) picks the
    diagonal. No gather, no O(n^2) mask; its transpose is a strided pad."""
    nd = x.ndim
    rest = [i for i in range(nd) if i not in (axis1, axis2)]
    x = transpose(x, (*rest, axis1, axis2))
    lead = x.shape[:-2]
    n, m = x.shape[-2:]
    count = max(0, min(n, m - offset)) if offset >= 0 else max(0, min(n + offset, m))
    start = offset if offset >= 0 else -offset * m
    flat = reshape(x, (*lead, n * m))
    if count == 0:
        start = 0
    limit = start + (count - 1) * (m + 1) + 1 if count else 0
    nl = len(lead)
    return slice_(flat, (0,) * nl + (start,), (*lead, limit), (1,) * nl + (m + 1,))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """numpy.trace: the sum along a diagonal (ints accumulate in numpy's default integer)."""
    from functrans.numpy._reductions import normalize_axes, sum
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"trace: needs an array of at least 2 dimensions, got shape {a.shape}.")
    ax1 = normalize_axes(axis1, a.ndim, "trace")[0]
    ax2 = normalize_axes(axis2, a.ndim, "trace")[0]
    if ax1 == ax2:
        raise ValueError(f"trace: axis1 and axis2 cannot be the same (both {ax1}).")
    return sum(_diagonal(a, int(offset), ax1, ax2), -1, dtype, out)


# --- einsum ----------------------------------------------------------------------------------

def _parse_term(term, ndim, n_ell, where):
    """One operand's labels: letters, plus ('...', k) for its broadcast dims (k counts the
    ellipsis dims of the whole expression, right-aligned)."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ValueError(f"einsum: {where} {term!r} has a malformed ellipsis; use '...' once.")
    for ch in term.replace("...", ""):
        if not ch.isalpha() or not ch.isascii():
            raise ValueError(f"einsum: invalid subscript {ch!r} in {where} {term!r}; "
                             "subscripts are ASCII letters (and '...').")
    if "..." not in term:
        if ndim is not None and len(term) != ndim:
            raise ValueError(f"einsum: {where} {term!r} has {len(term)} subscripts but the "
                             f"operand has {ndim} dimensions; give one letter per axis (or "
                             "use '...').")
        return list(term)
    left, right = term.split("...")
    k = (ndim - len(left) - len(right)) if ndim is not None else n_ell
    if k < 0:
        raise ValueError(f"einsum: {where} {term!r} has more subscripts than the operand's "
                         f"{ndim} dimensions.")
    return list(left) + [("...", n_ell - k + i) for i in range(k)] + list(right)


def _parse_einsum(subscripts, shapes):
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, rhs = subscripts.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: the subscripts {subscripts!r} name {len(terms)} operands but "
                         f"{len(shapes)} were given.")
    n_ell = max([len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)
                 if "..." in t] or [0])
    ins = [_parse_term(t, len(s), n_ell, f"operand {i} subscripts")
           for i, (t, s) in enumerate(zip(terms, shapes))]
    ell = [("...", k) for k in range(n_ell)]
    if arrow:
        if "..." not in rhs and n_ell and any(("...", k) in lab for lab in ins
                                              for k in range(n_ell)):
            raise ValueError(f"einsum: the output {rhs!r} has no '...' although the operands "
                             "have broadcast ('...') dimensions; add '...' to the output.")
        out = _parse_term(rhs, None, n_ell, "output")
        letters = [ch for ch in out if isinstance(ch, str)]
        if len(set(letters)) != len(letters):
            raise ValueError(f"einsum: an output subscript appears more than once in {rhs!r}.")
        everywhere = {ch for lab in ins for ch in lab}
        for ch in letters:
            if ch not in everywhere:
                raise ValueError(f"einsum: output subscript {ch!r} appears in no operand.")
    else:  # implicit: broadcast dims, then the letters used exactly once, in ASCII order
        counts = {}
        for lab in ins:
            for ch in lab:
                if isinstance(ch, str):
                    counts[ch] = counts.get(ch, 0) + 1
        out = ell + sorted(ch for ch, c in counts.items() if c == 1)
    return ins, out


def _label_sizes(ins, shapes):
    sizes = {}
    for lab, shape in zip(ins, shapes):
        for ch, s in zip(lab, shape):
            prev = sizes.get(ch, 1)
            if s != 1 and prev != 1 and s != prev:
                name = "'...' dimension" if isinstance(ch, tuple) else f"subscript {ch!r}"
                raise ShapeError(f"einsum: {name} has sizes {prev} and {s} in operands of "
                                 f"shapes {shapes}; they must be equal (or 1, to broadcast).")
            sizes[ch] = max(prev, s) if s != 1 else prev
    return sizes


def _take_diagonals(x, labels, where):
    """Collapse repeated labels within one operand to a single diagonal axis."""
    labels = list(labels)
    while True:
        seen = {}
        dup = None
        for i, ch in enumerate(labels):
            if ch in seen:
                dup = (seen[ch], i)
                break
            seen[ch] = i
        if dup is None:
            return x, labels
        i, j = dup
        if x.shape[i] != x.shape[j]:
            raise ShapeError(f"einsum: dimensions in single operand for collapsing index "
                             f"{labels[i]!r} don't match ({x.shape[i]} != {x.shape[j]}) in "
                             f"{where}.")
        ch = labels[i]
        x = _diagonal(x, 0, i, j)
        labels = [c for k, c in enumerate(labels) if k not in (i, j)] + [ch]


def _sum_labels(x, labels, drop):
    axes = [i for i, ch in enumerate(labels) if ch in drop]
    if not axes:
        return x, labels
    return reduce_sum(x, axes), [ch for ch in labels if ch not in drop]


def _size(labels, sizes):
    return int(np.prod([sizes[ch] for ch in labels], dtype=np.int64))


def _sublist_subscripts(args):
    """numpy's interleaved form (op, sublist, op, sublist, ..., [out sublist]) as a subscripts
    string and the operands: subscript k is letter k of a-zA-Z, Ellipsis is '...'."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int | np.integer) and 0 <= s < len(letters):
                out.append(letters[s])
            else:
                raise ValueError(f"einsum: sublist entries must be integers in [0, 52) or "
                                 f"Ellipsis, got {s!r}.")
        return "".join(out)

    ops, terms = list(args[0::2]), args[1::2]
    out = None
    if len(args) % 2:  # an output sublist at the end
        out = ops.pop()
    if len(terms) != len(ops) or not ops:
        raise ValueError("einsum: the interleaved form takes (operand, sublist) pairs and an "
                         "optional output sublist, as einsum(a, [0, 1], b, [1, 2], [0, 2]).")
    subscripts = ",".join(term(t) for t in terms)
    if out is not None:
        subscripts += "->" + term(out)
    return subscripts, ops


def einsum(subscripts, *operands, optimize=None, dtype=None):
    """numpy.einsum over dot_general, transpose and reduce_sum.

    Supports explicit ('ij,jk->ik') and implicit ('ij,jk') outputs, '...' broadcasting,
    size-1 broadcasting of any subscript, and repeated subscripts within one operand
    (diagonals and traces: 'ii->i', 'ii', 'iij->j'). Operands are contracted pairwise,
    greedily choosing the pair with the smallest intermediate (`optimize`, any of numpy's
    values, is accepted and does not change the result). The interleaved form
    einsum(a, [0, 1], b, [1, 2], [0, 2]) is read as numpy reads it.

    >>> import numpy as np, functrans.numpy as fnp
    >>> float(fnp.einsum("ii", np.eye(3)))
    3.0
    >>> fnp.einsum("bij,bjk->bik", np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape
    (2, 3, 5)
    """
    if not isinstance(subscripts, str):  # einsum(a, [0, 1], b, [1, 2], [0, 2])
        subscripts, operands = _sublist_subscripts((subscripts, *operands))
    ops = _operands("einsum", *operands) if len(operands) > 1 else \
        [asarray(o) for o in operands]
    if dtype is not None:
        ops = promote(*ops, dtype=dtype)
    shapes = [tuple(o.shape) for o in ops]
    ins, out = _parse_einsum(subscripts, shapes)
    sizes = _label_sizes(ins, shapes)
    terms = []
    for k, (x, lab) in enumerate(zip(ops, ins)):
        x, lab = _take_diagonals(x, lab, f"operand {k}")
        # a size-1 axis facing a longer one broadcasts: drop it here, the other operand has it
        sq = [i for i, ch in enumerate(lab) if x.shape[i] == 1 and sizes[ch] != 1]
        x = squeeze(x, sq)
        terms.append((x, [ch for i, ch in enumerate(lab) if i not in sq]))

    def needed_elsewhere(skip):
        keep = set(out)
        for k, (_, lab) in enumerate(terms):
            if k not in skip:
                keep.update(lab)
        return keep

    while len(terms) > 1:
        # greedy: contract the pair with the smallest result
        best = None
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                keep = needed_elsewhere({i, j})
                li, lj = terms[i][1], terms[j][1]
                res = [ch for ch in dict.fromkeys(li + lj) if ch in keep]
                cost = _size(res, sizes)
                if best is None or cost < best[0]:
                    best = (cost, i, j)
        _, i, j = best
        keep = needed_elsewhere({i, j})
        (x, lx), (y, ly) = terms[i], terms[j]
        x, lx = _sum_labels(x, lx, {ch for ch in lx if ch not in keep and ch not in ly})
        y, ly = _sum_labels(y, ly, {ch for ch in ly if ch not in keep and ch not in lx})
        shared = [ch for ch in lx if ch in ly]
        batch = [ch for ch in shared if ch in keep]
        contract = [ch for ch in shared if ch not in keep]
        z = dot_general(x, y, ((tuple(lx.index(c) for c in contract),
                                tuple(ly.index(c) for c in contract)),
                               (tuple(lx.index(c) for c in batch),
                                tuple(ly.index(c) for c in batch))))
        lz = batch + [c for c in lx if c not in shared] + [c for c in ly if c not in shared]
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [(z, lz)]
    x, lx = terms[0]
    x, lx = _sum_labels(x, lx, {ch for ch in lx if ch not in out})
    return transpose(x, tuple(lx.index(ch) for ch in out))


install_array_methods({
    "__matmul__": matmul, "__rmatmul__": lambda self, other: matmul(other, self),
    "dot": dot,
    "trace": trace,
})

def kron(a, b):
    """numpy.kron: the Kronecker product, the block array a[i, j] * b (the operand with fewer
    axes gets leading ones).

    >>> import functrans.numpy as fnp
    >>> fnp.kron(fnp.array([1, 2]), fnp.array([1, 10])).tolist()
    [1, 10, 2, 20]
    """
    a, b = promote(asarray(a), asarray(b))
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    # (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...) interleaves the axes, then merge each pair
    a2 = reshape(a, tuple(d for s in sa for d in (s, 1)))
    b2 = reshape(b, tuple(d for s in sb for d in (1, s)))
    return reshape(E.mul(a2, b2), tuple(x * y for x, y in zip(sa, sb)))


def _component(x, i):
    return squeeze(slice_(x, (0,) * (x.ndim - 1) + (i,), x.shape[:-1] + (i + 1,)),
                   (x.ndim - 1,))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy.cross of 3-vectors (and of 2-vectors: the z component, a scalar per pair; a
    2-vector with a 3-vector has z = 0), broadcast over the other axes.

    >>> import functrans.numpy as fnp
    >>> fnp.cross(fnp.array([1.0, 0.0, 0.0]), fnp.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    from functrans.numpy._shape import broadcast_arrays, moveaxis
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = _operands("cross", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("cross: inputs must be arrays of vectors (at least 1-d).")
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product (dimension must be "
                         f"2 or 3), got vectors of {a.shape[-1]} and {b.shape[-1]} components.")
    ca = [_component(a, i) for i in range(a.shape[-1])]
    cb = [_component(b, i) for i in range(b.shape[-1])]
    z = E.sub(E.mul(ca[0], cb[1]), E.mul(ca[1], cb[0]))
    if len(ca) == 2 and len(cb) == 2:
        return z
    if len(ca) == 3 and len(cb) == 3:
        x = E.sub(E.mul(ca[1], cb[2]), E.mul(ca[2], cb[1]))
        y = E.sub(E.mul(ca[2], cb[0]), E.mul(ca[0], cb[2]))
    elif len(ca) == 3:   # b = (b0, b1, 0)
        x = E.neg(E.mul(ca[2], cb[1]))
        y = E.mul(ca[2], cb[0])
    else:                # a = (a0, a1, 0)
        x = E.mul(ca[1], cb[2])
        y = E.neg(E.mul(ca[0], cb[2]))
    from functrans.numpy._shape import stack
    out = stack(broadcast_arrays(x, y, z), axis=-1)
    return moveaxis(out, -1, axisc)


from functrans.numpy import linalg  # noqa: E402  (the submodule reads names defined above)


# --- convolve --------------------------------------------------------------------------------

def convolve(a, v, mode="full"):
    """numpy.convolve of two 1-d arrays, modes "full", "same" and "valid" (as numpy and JAX).

    The windows of the zero-padded longer operand are gathered (one static index table) and
    contracted with the reversed shorter one, so derivatives come from gather and dot_general.

    >>> import functrans.numpy as fnp
    >>> fnp.convolve(fnp.array([1.0, 2.0, 3.0]), fnp.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    from functrans.numpy._padding import pad

    a, v = _operands("convolve", a, v)
    if a.ndim != 1 or v.ndim != 1:
        raise ShapeError(f"convolve: operands must be 1-d, got shapes {a.shape} and {v.shape}. "
                         "Use vmap over the leading axes for a batch of signals.")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ShapeError(f"convolve: operands must not be empty, got shapes {a.shape} and "
                         f"{v.shape}.")
    if v.shape[0] > a.shape[0]:  # convolution commutes; numpy swaps likewise
        a, v = v, a
    n, m = a.shape[0], v.shape[0]
    spans = {"full": (0, n + m - 1), "same": ((m - 1) // 2, n), "valid": (m - 1, n - m + 1)}
    if mode not in spans:
        raise ArgumentError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}.")
    start, length = spans[mode]
    # out[k] = sum_j a[k - j] v[j] = sum_i padded[k + i] v[m - 1 - i], padded[p] = a[p - m + 1]
    padded = pad(a, (m - 1, m - 1))
    windows = np.arange(start, start + length)[:, None] + np.arange(m)[None, :]
    return _contract(padded[windows], v[::-1], (1,), (0,))
