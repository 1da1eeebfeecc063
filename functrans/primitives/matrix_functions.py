"""Primary matrix functions of stacks of real or complex square matrices (..., n, n): the
exponential and the principal square root, with scipy.linalg's values (scipy's impls where
scipy is installed, a numpy algorithm of the same accuracy otherwise).

The derivative of a primary matrix function f is its Frechet derivative L_f(A, E), and f of
the block upper-triangular matrix [[A, E], [0, A]] is [[f(A), L_f(A, E)], [0, f(A)]] (Higham,
Functions of Matrices, thm. 3.6). The JVP of f is the row matrix_function_frechet, L_f(A, dA),
computed so: no eigendecomposition, exact at repeated eigenvalues (expm's derivative at 0 is
E). L_f is linear in E, with the transpose L_f(A^T, .) (f(A)^T = f(A^T) for a power series; the
transpose pairs without conjugation, JAX's convention for complex values), and its own
derivative is the upper-right block of L_f(B, dB), B = [[A, E], [0, A]]: so every order of
derivative, forward or reverse, is the same row on larger blocks.
JAX's expm uses the same Frechet derivative (expm_frechet); jax.scipy.linalg.sqrtm has no
derivative (its Schur factorisation has none), so sqrtm's matches the Sylvester equation
X dX + dX X = dA that autograd solves.
"""

from __future__ import annotations

import math

import numpy as np

from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.core.symbolic import Zero, is_undefined
from functrans.errors import DTypeError, LinAlgError, ShapeError
from functrans.primitives.shape_ops import concatenate, slice_
from functrans.primitives.registry import define
from functrans.primitives.layout import instantiate
from functrans.primitives.square_matrices import batch_first, matrix_transpose, scipy_linalg


def _check_square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: needs a stack of square matrices (..., n, n), got shape "
                         f"{a.shape}.")
    if a.dtype.kind not in "fc":
        raise DTypeError(f"{name}: needs float or complex matrices, got {a.dtype.name}. "
                         "Convert first (functrans.scipy.linalg converts integers to float64).")


def _square_abstract(name):
    def abstract(a):
        _check_square(name, a)
        return ShapedArray(a.shape, a.dtype)
    return abstract


def _block(a, e):
    """[[a, e], [0, a]] for stacks of n x n matrices (the zero block a constant)."""
    nb = ndim_of(a) - 2
    zeros = np.zeros(shape_of(a), a.dtype)
    return concatenate([concatenate([a, e], nb + 1), concatenate([zeros, a], nb + 1)], nb)


def _upper_right(x, n):
    nb = ndim_of(x) - 2
    return slice_(x, (0,) * nb + (0, n), (*shape_of(x)[:-2], n, 2 * n))


def frechet(a, e, *, fn: str):
    """L_f(a, e), the Frechet derivative of the matrix function `fn` ("expm" or "sqrtm") at `a`
    in the direction `e`: linear in `e`."""
    return frechet_p.bind(a, e, fn=fn)


def _frechet_impl(a, e, *, fn):
    a, e = np.asarray(a), np.asarray(e)
    if fn == "sqrtm" and _is_real_valued_complex(a):
        # a real matrix (promoted to complex, as scipy's complex root of one is): L is complex-
        # linear in e, so L(a, e) = L(a, Re e) + i L(a, Im e) with real blocks, whose roots take
        # one branch on the negative real axis (a complex block's rounding picks either side)
        ar = a.real
        lr = _upper_right_of(_principal_root, ar, e.real)
        li = _upper_right_of(_principal_root, ar, e.imag)
        return (lr + 1j * li).astype(a.dtype, copy=False)
    return _upper_right_of(_IMPLS[fn], a, e)


def _upper_right_of(impl, a, e):
    """The upper-right block of impl([[a, e], [0, a]])."""
    n = a.shape[-1]
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([np.zeros_like(a), a], axis=-1)
    return impl(np.concatenate([top, bottom], axis=-2))[..., :n, n:]


def _frechet_abstract(a, e, *, fn):
    _check_square(fn, a)
    if e.shape != a.shape or e.dtype != a.dtype:
        raise ShapeError(f"frechet: the direction must have the matrix's shape and dtype; got "
                         f"a: {a.dtype.name}{list(a.shape)}, e: {e.dtype.name}{list(e.shape)}.")
    return ShapedArray(a.shape, a.dtype)


def _frechet_jvp(primals, tangents, *, fn):
    # L(A, E) is the upper-right block of f(B), B = [[A, E], [0, A]]: its derivative is the
    # upper-right block of L(B, dB), linear in (dA, dE) jointly
    a, e = primals
    ta, te = map(instantiate, tangents)
    out = frechet(a, e, fn=fn)
    n = shape_of(a)[-1]
    return out, _upper_right(frechet(_block(a, e), _block(ta, te), fn=fn), n)


def _frechet_transpose(ct, a, e, *, fn):
    if is_undefined(a):
        raise TypeError("frechet: the matrix is a linear input; L(A, E) is linear in E only.")
    if type(ct) is Zero:
        return [None, Zero(e.aval)]
    # f(A)^T = f(A^T): the transpose of L(A, .) is L(A^T, .) = L(A, (.)^T)^T. The second form
    # keeps A as it is: A is often a block [[A0, E], [0, A0]] with repeated eigenvalues, and
    # its lower-triangular transpose's Schur form splits each into a pair ~1e-8 off the real
    # axis, which sends sqrtm's roots to both sides of the cut on the negative real axis
    return [None, matrix_transpose(frechet(a, matrix_transpose(ct), fn=fn))]


def _frechet_batch(vals, dims, *, fn):
    a, e = batch_first(vals, dims)
    return frechet(a, e, fn=fn), 0


frechet_p = define("matrix_function_frechet", impl=_frechet_impl, abstract=_frechet_abstract,
                   jvp=_frechet_jvp, transpose=_frechet_transpose, batch=_frechet_batch,
                   props=("linear",), facts={"linear_operands": (1,)})


def _function_jvp(fn):
    def jvp(primals, tangents):
        a, = primals
        ta, = tangents
        return _IMPLS_PRIM[fn].bind(a), frechet(a, ta, fn=fn)
    return jvp


def _batch(prim):
    def rule(vals, dims):
        from functrans.primitives.layout import moveaxis
        a, = vals
        return prim.bind(moveaxis(a, dims[0], 0)), 0
    return rule


# --- expm -------------------------------------------------------------------------------------

def expm(a):
    """The matrix exponential of the square matrices `a`."""
    return expm_p.bind(a)


# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the
# [13/13] Pade approximant's coefficients and the 1-norm up to which it is exact to float64
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_pade(a):
    """scipy's algorithm at its largest degree: scale by 2^-s until the 1-norm is at most
    theta_13, the [13/13] Pade approximant, then square s times."""
    norm = float(np.max(np.sum(np.abs(a), axis=-2))) if a.size else 0.0
    s = max(0, math.ceil(math.log2(norm / _THETA13))) if norm > _THETA13 else 0
    a = a / (2.0 ** s)
    b = _PADE13
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
             + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _expm_impl(a):
    a = np.asarray(a)
    if a.shape[-1] == 0:
        return np.zeros(a.shape, a.dtype)
    linalg = scipy_linalg(a)
    out = linalg.expm(a) if linalg is not None else _expm_pade(a)
    return np.asarray(out).astype(a.dtype, copy=False)


expm_p = define("expm", impl=_expm_impl, abstract=_square_abstract("expm"),
                torch_name="LinalgMatrixExpBackward0")
expm_p.rules["jvp"] = _function_jvp("expm")
expm_p.rules["batch"] = _batch(expm_p)


# --- sqrtm ------------------------------------------------------------------------------------

def sqrtm(a):
    """The principal square root of the square matrices `a` (real: no eigenvalue on the closed
    negative real axis)."""
    return sqrtm_p.bind(a)


def _sqrtm_denman_beavers(a):
    """The Denman-Beavers iteration Y <- (Y + Z^-1) / 2, Z <- (Z + Y^-1) / 2 from Y = A,
    Z = I: Y converges quadratically to the principal square root."""
    y = a.copy()
    z = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()
    tol = np.finfo(a.dtype).eps * a.shape[-1]
    for _ in range(100):
        y_next = (y + np.linalg.inv(z)) / 2
        z = (z + np.linalg.inv(y)) / 2
        done = np.max(np.abs(y_next - y)) <= tol * max(np.max(np.abs(y_next)), 1.0)
        y = y_next
        if done:
            break
    return y


def _principal_root(a):
    """The principal square root as scipy computes it: complex when a real `a` has none."""
    linalg = scipy_linalg(a)
    if linalg is not None:
        return np.asarray(linalg.sqrtm(a))
    with np.errstate(all="ignore"):
        rotation = _cut_rotation(a)
        if rotation:
            # sqrt(z) = e^(i d/2) sqrt(z e^(-i d)) for every eigenvalue z but those at angles
            # within d below the negative real axis: that moves the cut there, so negative real
            # eigenvalues (with their rounding) are approached from above (+i sqrt|z|, scipy's
            # root of a real matrix), and Denman-Beavers converges (no eigenvalue on the cut)
            turned = a * np.exp(-1j * rotation)
            return (np.exp(0.5j * rotation) * _sqrtm_denman_beavers(turned)).astype(
                np.result_type(a.dtype, np.complex64), copy=False)
        return _sqrtm_denman_beavers(a)


def _cut_rotation(a) -> float:
    """0 when the matrices `a` have no eigenvalue on the negative real axis, else an angle
    d below every other eigenvalue's angle under that axis (see _principal_root). Only for
    numpy arrays: CuPy has no general eigvals (there a real matrix keeps its real root)."""
    if not isinstance(a, np.ndarray):
        return 0.0
    lam = np.linalg.eigvals(a).ravel()
    scale = max(float(np.max(np.abs(lam), initial=0.0)), np.finfo(a.dtype).tiny)
    near = np.abs(lam.imag) <= np.sqrt(np.finfo(a.dtype).eps) * scale
    if not np.any(near & (lam.real < 0)):
        return 0.0
    below = np.pi - np.abs(np.angle(lam[~near & (lam.imag < 0)]))
    return float(min(0.5 * np.min(below, initial=0.2), 0.1))


def _is_complex_root(a, out) -> bool:
    """Whether the root `out` of a real `a` has an imaginary part beyond rounding."""
    if not np.iscomplexobj(out) or np.iscomplexobj(a):
        return False
    scale = max(float(np.max(np.abs(out))), 1.0)
    return float(np.max(np.abs(out.imag))) > 1e3 * np.finfo(a.dtype).eps * scale


def has_real_sqrtm(a) -> bool:
    """Whether the concrete real matrix (or stack) `a` has a real principal square root, by the
    test the sqrtm row applies: scipy.linalg.sqrtm returns a complex root where it has not.
    Arrays of another library (CuPy) are not inspected: they keep the real root."""
    if not isinstance(a, np.ndarray | np.generic):
        return True
    a = np.asarray(a)
    if a.shape[-1] == 0 or np.iscomplexobj(a):
        return True
    return not _is_complex_root(a, _principal_root(a))


def _is_real_valued_complex(a) -> bool:
    return np.iscomplexobj(a) and a.size > 0 and not np.any(a.imag)


def _sqrtm_impl(a):
    a = np.asarray(a)
    if a.shape[-1] == 0:
        return np.zeros(a.shape, a.dtype)
    if _is_real_valued_complex(a):  # the root of the real matrix: one branch, as _frechet_impl
        return _principal_root(a.real).astype(a.dtype)
    out = _principal_root(a)
    if np.iscomplexobj(out) and not np.iscomplexobj(a):
        if _is_complex_root(a, out):
            raise LinAlgError("sqrtm: this real matrix has no real principal square root (it "
                             "has eigenvalues on the negative real axis), and the row's result "
                             "is real (scipy.linalg.sqrtm returns the complex root when it sees "
                             "the values; under jit the dtype is fixed while tracing). Pass the "
                             "matrix as complex (a + 0j) for its complex root.")
        out = out.real
    if not np.all(np.isfinite(out)):
        raise LinAlgError("sqrtm: the square root did not converge (the matrix is singular or "
                         "has eigenvalues on the negative real axis); such a matrix has no "
                         "differentiable real principal square root.")
    return out.astype(a.dtype, copy=False)


sqrtm_p = define("sqrtm", impl=_sqrtm_impl, abstract=_square_abstract("sqrtm"),
                 torch_name="SqrtmBackward0")
sqrtm_p.rules["jvp"] = _function_jvp("sqrtm")
sqrtm_p.rules["batch"] = _batch(sqrtm_p)

_IMPLS = {"expm": _expm_impl, "sqrtm": _sqrtm_impl}
_IMPLS_PRIM = {"expm": expm_p, "sqrtm": sqrtm_p}
