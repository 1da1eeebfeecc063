"""functrans.numpy.linalg: norms (numpy.linalg's API, the nuclear and spectral ones from the
singular values), written with the same primitives; qr, svd, eigh, eig, pinv
(functrans/primitives/decompositions.py), lstsq built on svd as JAX builds it, and the
compositions cond, matrix_rank, matrix_power, multi_dot, tensorsolve and tensorinv; solve, inv,
det, slogdet and cholesky come from functrans/numpy/_square_matrices.py.

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
from functrans.primitives.shape_ops import convert_element_type, reshape, transpose
from functrans.primitives import decompositions as D
from functrans.primitives.decompositions import qr as qr_p
from functrans.primitives.decompositions import svd as svd_p

__all__ = ['norm', 'vector_norm', 'matrix_norm', 'solve', 'inv', 'det', 'slogdet', 'cholesky',
           'svd', 'svdvals', 'qr', 'lstsq', 'eigh', 'eigvalsh', 'eig', 'eigvals', 'pinv',
           'matrix_power', 'matrix_rank', 'cond', 'multi_dot', 'tensorsolve', 'tensorinv',
           'trace', 'diagonal', 'matmul', 'outer', 'tensordot', 'cross',
           'SVDResult', 'QRResult', 'EighResult', 'EigResult', 'SlogdetResult']


def _abs(x):
    if x.dtype.kind == "c":
        return E.abs(x)
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


def _squares(x):
    """|x|^2 entrywise: x * x, or re(x conj(x)) for complex x (JAX's form)."""
    return E.real(E.mul(x, E.conj(x))) if x.dtype.kind == "c" else E.mul(x, x)


def _conj_t(x):
    """x^H of one matrix (x^T for a real one)."""
    return E.conj(x.T) if x.dtype.kind == "c" else x.T


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
        res = E.sqrt_p.bind(_sum(_squares(x), axes))
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
        res = _sum(convert_element_type(nonzero, np.finfo(x.dtype).dtype), axes)
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
        return _keepdims(E.sqrt_p.bind(_sum(_squares(x), axes)), shape, axes)
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
        # from the singular values, as numpy and JAX: their sum, largest or smallest
        rest = [i for i in range(len(shape)) if i not in (row, col)]
        s, = svd_p(transpose(x, (*rest, row, col)), compute_uv=False)
        last = (s.ndim - 1,)
        res = _sum(s, last) if ord == "nuc" else \
            R.reduce_max(s, last) if ord == 2 else R.reduce_min(s, last)
        return reshape(res, tuple(1 if i in axes else n for i, n in enumerate(shape)))
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices; use None, 'fro', 'nuc', "
                     "1, -1, 2, -2, inf or -inf.")


def _prepare(x, _name):
    return to_float(asarray(x))


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
            res = _keepdims(E.sqrt_p.bind(_sum(_squares(x), axes)), x.shape, axes)
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
    """svd's results: a = U @ diag(S) @ Vh."""
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
    """qr's results: a = Q @ R."""
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
    from functrans.numpy._square_matrices import float_operands
    xs = float_operands(name, *xs)
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
    dtype = np.finfo(a.dtype).dtype          # the singular values' (real) dtype
    eps = float(np.finfo(dtype).eps)
    if rcond is None:
        rcond = eps * max(n, m)
    else:
        rcond = _E.where(asarray(rcond) < 0, eps, rcond)
    if a.size == 0:
        s = np.zeros((0,), dtype)
        rank = np.asarray(0)
        x = np.zeros((n, b.shape[1]), a.dtype)
    else:
        s, u, vt = svd_p(a)
        mask = s >= convert_element_type(asarray(rcond), dtype) * s[0]
        rank = _R.sum(mask)
        safe_s = _E.where(mask, s, np.ones((), dtype))
        s_inv = _E.where(mask, np.ones((), dtype) / safe_s, np.zeros((), dtype))
        x = _matmul(_conj_t(vt), reshape(s_inv, (s_inv.shape[0], 1)) * _matmul(_conj_t(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = np.zeros((0,), dtype)
    else:
        r = b - _matmul(a, x)
        resid = _R.sum(_squares(r), axis=0)
    if vector:
        x = reshape(x, (n,))
    return x, resid, rank, s


def svdvals(x, /):
    """numpy.linalg.svdvals: the singular values, descending (svd with compute_uv=False)."""
    x, = _svd_operand("svdvals", x)
    s, = svd_p(x, compute_uv=False)
    return s


# --- eigenvalues ------------------------------------------------------------------------------

class EighResult(NamedTuple):
    """eigh's results: ascending eigenvalues and the eigenvectors (columns)."""
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    """eig's results: complex eigenvalues and right eigenvectors (columns)."""
    eigenvalues: Any
    eigenvectors: Any


def _square_operand(name, a):
    from functrans.numpy._square_matrices import float_operands, _square
    a, = float_operands(name, a)
    _square(name, a)
    return a


def _uplo_lower(uplo, name):
    if uplo not in ("L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {uplo!r}.")
    return uplo == "L"


def eigh(a, UPLO="L"):
    """numpy.linalg.eigh: ascending eigenvalues and orthonormal eigenvectors (columns) of a
    symmetric matrix or a stack of them, read from the lower ('L') or upper ('U') triangle.
    Differentiable (JAX's rule: the tangent is symmetrised, as jax.numpy.linalg.eigh
    symmetrises its input); the eigenvectors' derivative is inf/nan at repeated eigenvalues,
    as JAX's.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> fnp.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
    array([1., 3.])
    >>> ft.grad(lambda a: fnp.linalg.eigvalsh(a)[1])(np.array([[2.0, 1.0], [1.0, 2.0]]))
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    a = _square_operand("eigh", a)
    w, v = D.eigh(a, lower=_uplo_lower(UPLO, "eigh"))
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    """numpy.linalg.eigvalsh: the ascending eigenvalues of a symmetric matrix (one triangle
    read); the derivative is finite at repeated eigenvalues too."""
    return eigh(a, UPLO).eigenvalues


def eig(a):
    """numpy.linalg.eig: eigenvalues and right eigenvectors (columns, unit norm) of a real
    or complex square matrix or a stack of them, LAPACK's as numpy's. Always complex, as
    JAX's (numpy returns real arrays when every eigenvalue is real). Differentiable as
    jax.lax.linalg.eig with enable_eigvec_derivs=True: the eigenvectors' tangent keeps
    LAPACK's normalisation (unit norm, largest entry real); inf/nan at repeated eigenvalues.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.eigvals(np.array([[0.0, 1.0], [-1.0, 0.0]]))
    array([0.+1.j, 0.-1.j])
    """
    a = _square_operand("eig", a)
    w, v = D.eig(a)
    return EigResult(w, v)


def eigvals(a):
    """numpy.linalg.eigvals: the (complex) eigenvalues of a real square matrix, as eig's."""
    a = _square_operand("eigvals", a)
    w, = D.eig(a, compute_v=False)
    return w


# --- pseudo-inverse, rank, condition number ---------------------------------------------------

def _static_float(value, name, what):
    try:
        return float(value)
    except TypeError:
        raise TypeError(f"{name}: {what} must be a Python or numpy scalar (one cutoff for the "
                        f"whole stack), got {type(value).__name__}; for per-matrix cutoffs, "
                        "vmap over the stack.") from None


_NO_VALUE = object()


def pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """numpy.linalg.pinv: the Moore-Penrose pseudo-inverse; singular values at most
    rcond * max(s) count as zero (numpy's defaults: rcond 1e-15, or rtol = max(m, n) * eps
    when rtol=None). `hermitian` is accepted and changes nothing but speed in numpy: the
    values here come from the general SVD. Differentiable (JAX's rule, exact where the rank
    is constant).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.pinv(np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]))
    array([[1. , 0. , 0. ],
           [0. , 0.5, 0. ]])
    """
    a, = _svd_operand("pinv", a)
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * float(np.finfo(a.dtype).eps)
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise ValueError("pinv: `rtol` and `rcond` can't be both set; pass one.")
    return D.pinv(a, rcond=_static_float(rcond, "pinv", "rcond"))


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """numpy.linalg.matrix_rank: the number of singular values above tol (default
    max(s) * max(m, n) * eps, or max(s) * rtol). A value, not differentiable (an integer).

    >>> import numpy as np, functrans.numpy as fnp
    >>> int(fnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    from functrans.numpy import _elementwise as _E
    from functrans.numpy import _reductions as _R
    from functrans.numpy._shape import expand_dims
    if rtol is not None and tol is not None:
        raise ValueError("matrix_rank: `tol` and `rtol` can't be both set; pass one.")
    A = asarray(A)
    if A.ndim < 2:
        return _E.logical_not(_R.all(A == 0)).astype(np.int64)
    A, = _svd_operand("matrix_rank", A)
    s, = svd_p(A, compute_uv=False)
    if tol is None:
        rtol = max(A.shape[-2:]) * float(np.finfo(s.dtype).eps) if rtol is None else \
            expand_dims(asarray(rtol), -1)
        tol = _R.max(s, axis=-1, keepdims=True, initial=0) * rtol
    else:
        tol = expand_dims(asarray(tol), -1)
    return _R.count_nonzero(s > tol, axis=-1)


def cond(x, p=None):
    """numpy.linalg.cond: the condition number, s_max / s_min for p None or 2 (s_min / s_max
    for -2), else norm(x, p) * norm(inv(x), p); nan from a singular matrix becomes inf, as in
    numpy. Differentiable where the matrix is invertible (and, for p None, 2, -2, where the
    extreme singular values are simple).

    >>> import numpy as np, functrans.numpy as fnp
    >>> float(fnp.linalg.cond(np.array([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    """
    from functrans.numpy import _elementwise as _E
    from functrans.numpy import _reductions as _R
    x, = _svd_operand("cond", x)
    if x.shape[-1] == 0 or x.shape[-2] == 0:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays (got shape "
                                    f"{tuple(x.shape)}).")
    if p is None or p in (2, -2):
        s, = svd_p(x, compute_uv=False)
        first, last = s[..., 0], s[..., -1]
        with np.errstate(divide="ignore", invalid="ignore"):   # singular: inf, as numpy
            r = last / first if p == -2 else first / last
    else:
        r = norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))
    bad = _E.isnan(r) & ~_R.any(_E.isnan(x), axis=(-2, -1))
    return _E.where(bad, np.inf, r)


# --- products and powers ----------------------------------------------------------------------

def matrix_power(a, n):
    """numpy.linalg.matrix_power: a @ a @ ... (n times) by repeated squaring, numpy's order of
    products; n = 0 gives the identity, n < 0 powers of inv(a).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.matrix_power(np.array([[1.0, 1.0], [0.0, 1.0]]), 3)
    array([[1., 3.],
           [0., 1.]])
    """
    import operator
    from functrans.numpy._shape import broadcast_to
    a = asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise np.linalg.LinAlgError(f"matrix_power: needs a square matrix or a stack of them "
                                    f"(..., m, m), got shape {tuple(a.shape)}.")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent must be an integer, got {n!r}.") from None
    if n == 0:
        return broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape) + \
            np.zeros((), a.dtype)
    if n < 0:
        a = inv(a)
        n = abs(n)
    if n == 1:
        return a + np.zeros((), a.dtype)
    if n == 2:
        return _matmul(a, a)
    if n == 3:
        return _matmul(_matmul(a, a), a)
    result = z = None
    while n > 0:
        z = a if z is None else _matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else _matmul(result, z)
    return result


def _chain_order(shapes):
    """numpy's optimal parenthesisation of a chain of matrix products (dynamic programming
    over the cost in scalar multiplications): s[i][j] splits the product of i..j."""
    n = len(shapes)
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = np.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, out=None):
    """numpy.linalg.multi_dot: the product of a chain of matrices in the cheapest order; the
    first array may be a vector (a row), the last one a vector (a column).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.multi_dot([np.ones(2), np.eye(2), np.ones((2, 3))])
    array([2., 2., 2.])
    """
    from functrans.numpy._core import promote
    if out is not None:
        raise TypeError("multi_dot: out= is not supported (functrans arrays are immutable); "
                        "use the returned value.")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays.")
    arrays = list(promote(*map(asarray, arrays)))
    first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vec:
        arrays[0] = reshape(arrays[0], (1, arrays[0].shape[0]))
    if last_vec:
        arrays[-1] = reshape(arrays[-1], (arrays[-1].shape[0], 1))
    for i, x in enumerate(arrays):
        if x.ndim != 2:
            raise np.linalg.LinAlgError(f"multi_dot: array {i} has {x.ndim} dimensions; the "
                                        "first and last may be 1-d, the others must be "
                                        "2-d.")
    split = _chain_order([tuple(x.shape) for x in arrays])

    def product(i, j):
        if i == j:
            return arrays[i]
        return _matmul(product(i, split[i][j]), product(split[i][j] + 1, j))

    res = product(0, len(arrays) - 1)
    if first_vec and last_vec:
        return reshape(res, ())
    if first_vec or last_vec:
        return reshape(res, (res.shape[1],) if first_vec else (res.shape[0],))
    return res


def tensorsolve(a, b, axes=None):
    """numpy.linalg.tensorsolve: x with tensordot(a, x, x.ndim) == b, x of shape
    a.shape[b.ndim:] (after moving `axes` of a to the end).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.tensorsolve(2.0 * np.eye(4).reshape(4, 2, 2), np.ones(4)).shape
    (2, 2)
    """
    from functrans.numpy._core import promote
    a, b = promote(asarray(a), asarray(b))
    an = a.ndim
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k % an)
            order.append(k % an)
        a = transpose(a, tuple(order))
    old = tuple(a.shape[b.ndim:])
    size = int(np.prod(old, dtype=np.int64))
    if a.size != size ** 2:
        raise np.linalg.LinAlgError(
            f"tensorsolve: input arrays must satisfy prod(a.shape[b.ndim:]) == "
            f"prod(a.shape[:b.ndim]); got a {tuple(a.shape)}, b {tuple(b.shape)}.")
    x = solve(reshape(a, (size, size)), reshape(b, (size,)))
    return reshape(x, old)


def tensorinv(a, ind=2):
    """numpy.linalg.tensorinv: the inverse of `a` as a map from its first `ind` axes' worth of
    entries to the rest, with shape a.shape[ind:] + a.shape[:ind].

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.tensorinv(np.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = asarray(a)
    if ind <= 0:
        raise ValueError(f"tensorinv: invalid ind argument {ind!r}; pass a positive number of "
                         "leading axes.")
    old = tuple(a.shape)
    size = int(np.prod(old[ind:], dtype=np.int64))
    if size * size != a.size:
        raise np.linalg.LinAlgError(
            f"tensorinv: a {old} is not square as a map from its first {ind} axes to the "
            f"rest ({a.size // max(size, 1)} x {size} entries).")
    return reshape(inv(reshape(a, (size, size))), old[ind:] + old[:ind])
