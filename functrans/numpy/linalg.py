"""functrans.numpy.linalg: norms (numpy.linalg's API), written with the same primitives; qr and
svd (functrans/primitives/decompositions.py), and lstsq built on svd as JAX builds it; solve,
inv, det, slogdet and cholesky come from functrans/numpy/_square_matrices.py.

Derivatives at zero follow JAX's formulas, which these are: the 2-norm and Frobenius norm are
sqrt(sum(x * x)), so their gradient at an all-zero vector is nan (sqrt'(0) = inf times 0),
exactly as in JAX (PyTorch instead returns 0 there). |x| differentiates to 1 at 0 (JAX's abs
rule), so the 1-norm's gradient at 0 is finite; max-type norms combine with an initial 0 the
way JAX's amax(..., initial=0) does, so ties with it share the derivative. The general p-norm
computes |x|^p and s^(1/p) with zero-guarded powers: its gradient is finite at 0 (JAX's too
for entries that are 0 when p > 1; JAX returns nan for an all-zero vector where we return 0).

>>> import numpy as np, functrans.numpy as fnp
>>> float(fnp.linalg.norm(np.array([3.0, 4.0])))
5.0
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from functrans.errors import DTypeError
from functrans.numpy._core import asarray, to_float
from functrans.numpy._linalg import cross as _cross
from functrans.numpy._linalg import matmul as _matmul
from functrans.numpy._linalg import outer as _outer
from functrans.numpy._linalg import tensordot as _tensordot
from functrans.numpy._reductions import _combine_initial, normalize_axes
from functrans.numpy._square_matrices import (  # noqa: F401
    SlogdetResult, cholesky, det, inv, slogdet, solve)
from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives.shape_ops import convert_element_type, reshape
from functrans.primitives.decompositions import qr as qr_p
from functrans.primitives.decompositions import svd as svd_p

__all__ = ['norm', 'vector_norm', 'matrix_norm', 'solve', 'inv', 'det', 'slogdet', 'cholesky',
           'svd', 'qr', 'lstsq',
           'trace', 'diagonal', 'matmul', 'outer', 'tensordot', 'cross']


def _abs(x):
    # d|x| = select(x >= 0, dx, -dx): JAX's rule, derivative 1 at 0
    return E.select(E.ge_p.bind(x, np.zeros((), x.dtype)), x, E.neg(x))


def _pow_nonneg(c, p):
    """c ** p for c >= 0 as exp(p log c), guarded at c == 0 (value 0 for p > 0, inf for
    p < 0; derivative 0 there, with no log(0) evaluated)."""
    zero = np.zeros((), c.dtype)
    pos = E.gt_p.bind(c, zero)
    safe = E.select(pos, c, np.ones((), c.dtype))
    powered = E.exp_p.bind(E.mul(np.asarray(p, c.dtype), E.log_p.bind(safe)))
    return E.select(pos, powered, np.asarray(0.0 if p > 0 else np.inf, c.dtype))


def _sum(x, axes):
    return R.reduce_sum(x, axes)


def _keepdims(x, shape, axes):
    return reshape(x, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def _squeeze_out(x, shape, axes, keepdims):
    if keepdims:
        return x
    return reshape(x, tuple(s for i, s in enumerate(shape) if i not in axes))


def _vector(x, ord, axes):
    """The vector norm of `x` over `axes`, with the reduced axes kept (size 1)."""
    shape = x.shape
    if ord is None or ord == 2:
        res = E.sqrt_p.bind(_sum(E.mul(x, x), axes))
    elif isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors; use a number, "
                         "fnp.inf or -fnp.inf.")
    elif ord == np.inf:
        a = _abs(x)
        res = R.reduce_max(a, axes) if all(shape[i] for i in axes) else \
            R.reduce_sum(a, axes)  # empty: the initial 0
        res = _combine_initial(R.reduce_max_p, res, 0)
    elif ord == -np.inf:
        res = R.reduce_min(_abs(x), axes)
    elif ord == 0:
        nonzero = E.ne_p.bind(x, np.zeros((), x.dtype))
        res = _sum(convert_element_type(nonzero, x.dtype), axes)
    elif ord == 1:
        res = _sum(_abs(x), axes)
    else:
        p = float(ord)
        res = _pow_nonneg(_sum(_pow_nonneg(_abs(x), p), axes), 1.0 / p)
    return _keepdims(res, shape, axes)


def _matrix(x, ord, row, col):
    """The matrix norm over (row, col), with both axes kept (size 1)."""
    shape = x.shape
    axes = tuple(sorted((row, col)))
    if ord is None or ord in ("fro", "f"):
        return _keepdims(E.sqrt_p.bind(_sum(E.mul(x, x), axes)), shape, axes)
    if ord in (1, -1, np.inf, -np.inf):
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        sums = _keepdims(_sum(_abs(x), (inner,)), shape, (inner,))
        if ord > 0:
            res = R.reduce_max(sums, (outer,)) if shape[outer] else R.reduce_sum(sums, (outer,))
            res = _combine_initial(R.reduce_max_p, res, 0)
        else:
            res = R.reduce_min(sums, (outer,))
        return _keepdims(res, sums.shape, (outer,))
    if ord in ("nuc", 2, -2):
        raise NotImplementedError(f"norm: ord={ord!r} matrix norms need singular values, and "
                                  "functrans has no SVD primitive yet. Use ord='fro', 1, -1, "
                                  "inf or -inf.")
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices; use None, 'fro', 1, -1, "
                     "inf, -inf (or 'nuc', 2, -2 once an SVD exists).")


def _prepare(x, name):
    x = to_float(asarray(x))
    if np.issubdtype(x.dtype, np.complexfloating):
        raise DTypeError(f"{name}: complex inputs are not supported yet (they need |x|^2 via "
                         "conj); pass the real and imaginary parts separately.")
    return x


def _one_axis(a, ndim, name):
    return normalize_axes(a, ndim, name)[0] if ndim else 0


def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm: vector norms over one axis, matrix norms over two.

    >>> import numpy as np, functrans.numpy as fnp
    >>> x = np.array([[3.0, -4.0], [0.0, 12.0]])
    >>> float(fnp.linalg.norm(x)), float(fnp.linalg.norm(x, 1))
    (13.0, 16.0)
    >>> fnp.linalg.norm(x, np.inf, axis=1)
    array([ 4., 12.])
    """
    x = _prepare(x, "norm")
    nd = x.ndim
    if axis is None:
        if ord is None:
            axes = tuple(range(nd))
            res = _keepdims(E.sqrt_p.bind(_sum(E.mul(x, x), axes)), x.shape, axes)
            return _squeeze_out(res, x.shape, axes, keepdims)
        if nd not in (1, 2):
            raise ValueError(f"norm: improper number of dimensions to norm: ord={ord!r} with "
                             f"axis=None needs a 1-d or 2-d array, got shape {x.shape}. Pass "
                             "axis= to choose the axes.")
        axis = tuple(range(nd))
    axes = (axis,) if isinstance(axis, int | np.integer) else tuple(axis)
    axes = tuple(_one_axis(a, nd, "norm") for a in axes)
    if len(axes) == 1:
        res = _vector(x, ord, axes)
    elif len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError(f"norm: duplicate axes given ({axis!r}); name two different axes.")
        res = _matrix(x, ord, *axes)
    else:
        raise ValueError(f"norm: improper number of dimensions to norm: axis={axis!r}. Pass "
                         "one axis for a vector norm or two for a matrix norm.")
    return _squeeze_out(res, x.shape, tuple(sorted(axes)), keepdims)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """numpy.linalg.vector_norm: any `axis` (None flattens), treated as one vector each."""
    x = _prepare(x, "vector_norm")
    shape = x.shape
    axes = normalize_axes(axis, x.ndim, "vector_norm")
    kept = [i for i in range(x.ndim) if i not in axes]
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    from functrans.primitives.shape_ops import transpose
    flat = reshape(transpose(x, (*kept, *axes)), (*(shape[i] for i in kept), n))
    res = reshape(_vector(flat, ord, (len(kept),)), tuple(shape[i] for i in kept))
    return _keepdims(res, shape, axes) if keepdims else res


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """numpy.linalg.matrix_norm: the matrix norm over the last two axes."""
    x = _prepare(x, "matrix_norm")
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: needs at least 2 dimensions, got shape {x.shape}.")
    return norm(x, ord, (-2, -1), keepdims)


# --- numpy.linalg's array-API functions: the last two axes, where numpy's own take the first --

def trace(x, /, *, offset=0, dtype=None):
    """numpy.linalg.trace: the sum along a diagonal of the last two axes (numpy.trace takes the
    first two).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.trace(np.arange(8.0).reshape(2, 2, 2)).tolist()
    [3.0, 11.0]
    """
    from functrans.numpy._linalg import trace as trace_axes
    return trace_axes(x, offset, -2, -1, dtype)


def diagonal(x, /, *, offset=0):
    """numpy.linalg.diagonal: the diagonal of the last two axes (numpy.diagonal takes the first
    two).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.diagonal(np.arange(8.0).reshape(2, 2, 2)).tolist()
    [[0.0, 3.0], [4.0, 7.0]]
    """
    from functrans.numpy._shape import diagonal as diagonal_axes
    return diagonal_axes(x, offset, -2, -1)


def matmul(x1, x2, /):
    """numpy.linalg.matmul: numpy.matmul."""
    return _matmul(x1, x2)


def outer(x1, x2, /):
    """numpy.linalg.outer: the outer product of two vectors (numpy.outer flattens other
    shapes; this one refuses them, as numpy.linalg.outer does)."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer: needs two vectors, got shapes {x1.shape} and "
                         f"{x2.shape}. Use functrans.numpy.outer to flatten its operands first.")
    return _outer(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """numpy.linalg.tensordot: numpy.tensordot with `axes` keyword-only."""
    return _tensordot(x1, x2, axes)


def cross(x1, x2, /, *, axis=-1):
    """numpy.linalg.cross: the cross product of 3-vectors along `axis` (numpy.cross also takes
    2-vectors; this one refuses them, as numpy.linalg.cross does)."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim == 0 or x2.ndim == 0 or x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"linalg.cross: both inputs need 3 components along axis {axis}, got "
                         f"shapes {x1.shape} and {x2.shape}. Use functrans.numpy.cross for "
                         "2-vectors.")
    return _cross(x1, x2, axis=axis)


# --- svd and least squares --------------------------------------------------------------------

class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """numpy.linalg.svd: a = U @ diag(S) @ Vh for a matrix or a stack of them; S alone with
    compute_uv=False. Differentiable (JAX's rule) for the thin factors (full_matrices=False)
    or S alone, with distinct singular values.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.svd(np.array([[3.0, 0.0], [0.0, -2.0]]), compute_uv=False)
    array([3., 2.])
    """
    a, = _svd_operand("svd", a)
    m, n = a.shape[-2:]
    if not compute_uv:
        s, = svd_p(a, compute_uv=False)
        return s
    # thin and full factors agree for square matrices: keep the differentiable (thin) form
    s, u, vt = svd_p(a, full_matrices=bool(full_matrices) and m != n)
    return SVDResult(u, s, vt)


class QRResult(NamedTuple):
    Q: Any
    R: Any


def qr(a, mode="reduced"):
    """numpy.linalg.qr: a = Q @ R (LAPACK's factors, as numpy's and JAX's) for a matrix or a
    stack of them; mode 'reduced' (Q with min(m, n) columns), 'complete' (Q square) or 'r'
    (R alone). Differentiable (JAX's rule) with mode 'reduced' where rows >= columns.

    >>> import numpy as np, functrans.numpy as fnp
    >>> q, r = fnp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> r.round(6)
    array([[-5. , -2.2],
           [ 0. ,  0.4]])
    """
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode {mode!r} is not available; use 'reduced', 'complete' or "
                         "'r' ('raw' and 'economic' are numpy's LAPACK-level forms).")
    a, = _svd_operand("qr", a)
    m, n = a.shape[-2:]
    q, r = qr_p(a, full_matrices=mode == "complete" and m > n)
    return r if mode == "r" else QRResult(q, r)


def _svd_operand(name, *xs):
    from functrans.numpy._square_matrices import _float_operands
    xs = _float_operands(name, *xs)
    if xs[0].ndim < 2:
        raise np.linalg.LinAlgError(
            f"{xs[0].ndim}-dimensional array given. Array must be at least two-dimensional "
            f"({name} takes a matrix or a stack of matrices).")
    return xs


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """numpy.linalg.lstsq with JAX's signature: (x, residuals, rank, s), x minimising
    ||b - a @ x|| (the minimum-norm one when a lacks rank), from a's SVD as in JAX;
    singular values below rcond * s[0] count as zero (rcond default: eps * max(m, n)).
    As jax.numpy.linalg.lstsq, residuals are always the squared column norms of b - a @ x
    unless numpy_resid=True (then empty where numpy gives none, which needs a concrete rank).
    Differentiable in a and b where a has full rank.

    >>> import numpy as np, functrans.numpy as fnp
    >>> a = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> x, resid, rank, s = fnp.linalg.lstsq(a, np.array([1.0, 2.0, 2.0]))
    >>> x.round(6), resid.round(6), int(rank)
    (array([1.166667, 0.5     ]), array([0.166667]), 2)
    """
    from functrans.numpy import _elementwise as _E
    from functrans.numpy import _reductions as _R
    a, b = _svd_operand("lstsq", a, b)
    if a.ndim != 2:
        raise TypeError(f"lstsq: {a.ndim}-dimensional array given. Array must be "
                        "two-dimensional (functrans, as JAX, takes one matrix).")
    if b.ndim not in (1, 2):
        raise TypeError(f"lstsq: b must be 1- or 2-dimensional, got shape {tuple(b.shape)}.")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"lstsq: a has {a.shape[0]} rows but b has {b.shape[0]} (shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}): the leading dimensions of "
                         "the arrays must match.")
    vector = b.ndim == 1
    if vector:
        b = reshape(b, (b.shape[0], 1))
    m, n = a.shape
    dtype = a.dtype
    eps = float(np.finfo(dtype).eps)
    if rcond is None:
        rcond = eps * max(n, m)
    else:
        rcond = _E.where(asarray(rcond) < 0, eps, rcond)
    if a.size == 0:
        s = np.zeros((0,), dtype)
        rank = np.asarray(0)
        x = np.zeros((n, b.shape[1]), dtype)
    else:
        s, u, vt = svd_p(a)
        mask = s >= convert_element_type(asarray(rcond), dtype) * s[0]
        rank = _R.sum(mask)
        safe_s = _E.where(mask, s, np.ones((), dtype))
        s_inv = _E.where(mask, np.ones((), dtype) / safe_s, np.zeros((), dtype))
        x = _matmul(vt.T, reshape(s_inv, (s_inv.shape[0], 1)) * _matmul(u.T, b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = np.zeros((0,), dtype)
    else:
        r = b - _matmul(a, x)
        resid = _R.sum(r * r, axis=0)
    if vector:
        x = reshape(x, (n,))
    return x, resid, rank, s
