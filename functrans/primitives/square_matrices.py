"""Square-matrix primitives: solve, triangular_solve, inv, det, slogdet, the cofactor matrix
det's rule needs, and cholesky.

Every operand is a stack of matrices (..., n, n) (solve's right side (..., n, k), with the same
leading axes: functrans.numpy.linalg broadcasts them first). The impls are numpy.linalg's, so a
singular matrix raises numpy's LinAlgError in solve and inv. The rules, with A^-1 never formed
where a solve does:
  solve   x = A^-1 b:        dx = A^-1 (db - dA x);  linear in b, ct_b = A^-T ct
  triangular_solve, the same with T = op(tri(A)), the triangle the solve reads (unit diagonal:
          its strict part): dx = T^-1 (db - op(tri(dA)) x);  ct_b = T^-T ct
  inv     Y = A^-1:          dY = -Y dA Y
  det     d det = tr(adj(A) dA) = sum(cofactor(A) * dA), exact at singular A as well
  slogdet d logabsdet = Re tr(A^-1 dA); a real sign is piecewise constant (zero tangent), a
          complex one turns: d sign = i Im tr(A^-1 dA) sign (JAX's)
  cofactor C = adj(A)^T = det(A) A^-T:  dC = C tr(A^-1 dA) - (A^-1 dA C^T)^T
  cholesky A = L L^H:        dL = L Phi(L^-1 S L^-H), S = (dA + dA^H) / 2, Phi the lower
                             triangle with half the diagonal (JAX symmetrises dA so)
The cofactor impl goes through the SVD, A = U diag(s) V^T, C = det(U) det(V) U diag(p) V^T with
p_i the product of the other singular values (no division), so det's gradient at a singular
matrix is the cofactor matrix, as in JAX; its own derivative (det's second) needs A invertible.
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, ndim_of, shape_of
from functrans.core.symbolic import Zero, is_undefined
from functrans.errors import DTypeError, ShapeError
from functrans.primitives import xla_math
from functrans.primitives.elementwise import (add, conj, convert_element_type, imag, mul,
                                              neg, real, sub)
from functrans.primitives.linalg import dot_general
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import broadcast_to, moveaxis, reshape, transpose


# --- helpers: stacked matrix products, in primitives --------------------------------------

def matrix_transpose(x):
    """Swap the last two axes of a stack of matrices."""
    nd = ndim_of(x)
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def conj_transpose(x):
    """The conjugate transpose x^H of a stack of matrices (x^T for real ones)."""
    xt = matrix_transpose(x)
    return conj(xt) if np.dtype(x.dtype).kind == "c" else xt


def stacked_matmul(x, y):
    """(..., n, m) @ (..., m, k) with equal leading axes."""
    nb = ndim_of(x) - 2
    batch = tuple(range(nb))
    return dot_general(x, y, (((nb + 1,), (nb,)), (batch, batch)))


def _trace_of_product(x, y):
    """tr(x^T y) per matrix: sum over the last two axes of x * y."""
    nd = ndim_of(x)
    return reduce_sum(mul(x, y), (nd - 2, nd - 1))


def scipy_linalg(*arrays):
    """scipy.linalg where scipy is installed and `arrays` are numpy arrays, else None: scipy is
    an optional extra, so every impl that prefers it has a fallback on `xp`."""
    if not all(isinstance(a, np.ndarray) for a in arrays):
        return None
    try:
        import scipy.linalg
    except ImportError:
        return None
    return scipy.linalg


def _check_square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{name}: needs a stack of square matrices (..., n, n), got shape "
                         f"{a.shape}.")
    if a.dtype.kind not in "fc":
        raise DTypeError(f"{name}: needs float or complex matrices, got {a.dtype.name}. "
                         "Convert first (functrans.numpy.linalg converts integers to "
                         "float64).")


def batch_first(vals, dims):
    """Every operand with its batch axis first (unbatched ones broadcast to the batch size)."""
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not None)
    return [moveaxis(v, d, 0) if d is not None else
            broadcast_to(v, (size, *shape_of(v))) for v, d in zip(vals, dims)]


def _one_operand_batch(prim):
    def rule(vals, dims, **params):
        a, = batch_first(vals, dims)
        out = prim.bind(a, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    return rule


# --- solve ------------------------------------------------------------------------------------

def solve(a, b):
    """The solution x of a @ x = b for square `a` (batched over leading axes)."""
    return solve_p.bind(a, b)


def _solve_abstract(a, b):
    _check_square("solve", a)
    if b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1] or b.dtype != a.dtype:
        raise ShapeError(f"solve: the right-hand side must be (..., n, k) with the matrix's "
                         f"leading axes and dtype; got a: {a.dtype.name}{list(a.shape)}, b: "
                         f"{b.dtype.name}{list(b.shape)} (functrans.numpy.linalg.solve "
                         "broadcasts them first).")
    return ShapedArray(b.shape, b.dtype)


def _solve_jvp(primals, tangents):
    a, b = primals
    ta, tb = tangents
    x = solve(a, b)
    # dx = A^-1 (db - dA x)
    rhs = tb if type(ta) is Zero else (neg(stacked_matmul(ta, x)) if type(tb) is Zero
                                       else sub(tb, stacked_matmul(ta, x)))
    if type(rhs) is Zero:
        return x, Zero(ShapedArray(shape_of(x), x.dtype))
    return x, solve(a, rhs)


def _solve_transpose(ct, a, b):
    if is_undefined(a):
        raise TypeError("solve: the matrix is a linear input; A^-1 b is linear in b only.")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    return [None, solve(matrix_transpose(a), ct)]


def _solve_batch(vals, dims):
    a, b = vals
    da, db = dims
    if da is None:
        # one matrix, many right sides: the batch joins b's columns, one factorization
        nb = ndim_of(b) - 1          # b's rank without the batch axis
        b = moveaxis(b, db, nb - 1)  # (..., n, B, k)
        shape = shape_of(b)
        x = solve(a, reshape(b, (*shape[:-2], shape[-2] * shape[-1])))
        return reshape(x, shape), nb - 1
    a, b = batch_first(vals, dims)
    return solve(a, b), 0


solve_p = define("solve", impl=lambda a, b: xp.linalg.solve(a, b),
                 abstract=_solve_abstract, jvp=_solve_jvp, transpose=_solve_transpose,
                 batch=_solve_batch, props=("linear",), facts={"linear_operands": (1,)},
                 torch_name="LinalgSolveExBackward0")


# --- triangular_solve ---------------------------------------------------------------------

def triangular_solve(a, b, *, lower: bool, transpose_a: bool = False,
                     unit_diagonal: bool = False):
    """x with op(T) @ x = b, T the lower (or upper) triangle of `a` (unit diagonal: ones on it),
    op the transpose when `transpose_a`; the other triangle of `a` is never read."""
    return triangular_solve_p.bind(a, b, lower=bool(lower), transpose_a=bool(transpose_a),
                                   unit_diagonal=bool(unit_diagonal))


def triangle_mask(n: int, dtype, *, lower: bool, strict: bool = False):
    """The 0/1 mask of the lower (upper) triangle of an n x n matrix, without the diagonal
    when `strict`."""
    ones = np.ones((n, n), dtype)
    k = -1 if strict else 0
    return np.tril(ones, k) if lower else np.triu(ones, -k)


def _triangular_solve_impl(a, b, *, lower, transpose_a, unit_diagonal):
    a, b = xp.asarray(a), xp.asarray(b)
    linalg = scipy_linalg(a, b)
    if linalg is not None and a.shape[-1]:
        mats, rhs = a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:])
        out = [linalg.solve_triangular(m, r, trans=int(transpose_a), lower=lower,
                                       unit_diagonal=unit_diagonal, check_finite=False)
               for m, r in zip(mats, rhs)]
        return np.stack(out).reshape(b.shape).astype(b.dtype, copy=False) if out else \
            np.zeros(b.shape, b.dtype)
    # without scipy: numpy's LU solve of the triangle (the same solution, to rounding)
    n = a.shape[-1]
    t = a * triangle_mask(n, a.dtype, lower=lower, strict=unit_diagonal)
    if unit_diagonal:
        t = t + np.eye(n, dtype=a.dtype)
    if transpose_a:
        t = xp.swapaxes(t, -1, -2)
    return xp.linalg.solve(t, b)


def _triangular_solve_abstract(a, b, **params):
    _check_square("triangular_solve", a)
    if b.ndim != a.ndim or b.shape[:-1] != a.shape[:-1] or b.dtype != a.dtype:
        raise ShapeError(f"triangular_solve: the right-hand side must be (..., n, k) with the "
                         f"matrix's leading axes and dtype; got a: {a.dtype.name}"
                         f"{list(a.shape)}, b: {b.dtype.name}{list(b.shape)} "
                         "(functrans.scipy.linalg.solve_triangular broadcasts them first).")
    return ShapedArray(b.shape, b.dtype)


def _triangular_solve_jvp(primals, tangents, **params):
    a, b = primals
    ta, tb = tangents
    x = triangular_solve(a, b, **params)
    rhs = tb
    if type(ta) is not Zero:
        # the solve reads one triangle of A (its strict part with a unit diagonal): so does dA
        n = shape_of(a)[-1]
        t_tri = mul(ta, triangle_mask(n, ta.dtype, lower=params["lower"],
                                      strict=params["unit_diagonal"]))
        if params["transpose_a"]:
            t_tri = matrix_transpose(t_tri)
        dax = neg(stacked_matmul(t_tri, x))
        rhs = dax if type(tb) is Zero else add(tb, dax)
    if type(rhs) is Zero:
        return x, Zero(ShapedArray(shape_of(x), x.dtype))
    return x, triangular_solve(a, rhs, **params)        # dx = T^-1 (db - dT x)


def _triangular_solve_transpose(ct, a, b, *, lower, transpose_a, unit_diagonal):
    if is_undefined(a):
        raise TypeError("triangular_solve: the matrix is a linear input; T^-1 b is linear in "
                        "b only.")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    return [None, triangular_solve(a, ct, lower=lower, transpose_a=not transpose_a,
                                   unit_diagonal=unit_diagonal)]


def _triangular_solve_batch(vals, dims, **params):
    a, b = batch_first(vals, dims)
    return triangular_solve(a, b, **params), 0


triangular_solve_p = define(
    "triangular_solve", impl=_triangular_solve_impl, abstract=_triangular_solve_abstract,
    jvp=_triangular_solve_jvp, transpose=_triangular_solve_transpose,
    batch=_triangular_solve_batch, props=("linear",), facts={"linear_operands": (1,)},
    torch_name="LinalgSolveTriangularBackward0")


# --- inv --------------------------------------------------------------------------------------

def inv(a):
    """The inverse of square `a` (batched over leading axes)."""
    return inv_p.bind(a)


def _square_abstract(name):
    def abstract(a):
        _check_square(name, a)
        return ShapedArray(a.shape, a.dtype)
    return abstract


def _inv_jvp(primals, tangents):
    a, = primals
    ta, = tangents
    y = inv(a)
    return y, neg(stacked_matmul(stacked_matmul(y, ta), y))   # dY = -Y dA Y


inv_p = define("inv", impl=lambda a: xp.linalg.inv(a), abstract=_square_abstract("inv"),
               jvp=_inv_jvp, torch_name="LinalgInvExBackward0")
inv_p.rules["batch"] = _one_operand_batch(inv_p)


# --- cofactor ---------------------------------------------------------------------------------

def cofactor(a):
    """The cofactor matrix of square `a`, det(a) * inv(a).T, defined for singular `a` too."""
    return cofactor_p.bind(a)


def _products_of_others(s):
    """p[..., i] = prod_{j != i} s[..., j], from prefix and suffix products (no division)."""
    ones = xp.ones(s.shape[:-1] + (1,), s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.cumprod(xp.concatenate([ones, s[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return before * after


def _cofactor_impl(a):
    a = xp.asarray(a)
    if a.shape[-1] == 0:
        return xp.zeros(a.shape, a.dtype)
    u, s, vh = xp.linalg.svd(a)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)         # each of modulus 1
    p = _products_of_others(s) * sign[..., None]
    # A^-T = conj(U) S^-1 conj(V^H), det(A) = sign prod(s)
    return xp.matmul(xp.conj(u) * p[..., None, :], xp.conj(vh)).astype(a.dtype, copy=False)


def _cofactor_jvp(primals, tangents):
    a, = primals
    ta, = tangents
    c = cofactor(a)
    # C = det(A) A^-T: dC = C tr(A^-1 dA) - (A^-1 dA C^T)^T
    z = solve(a, ta)
    tr = reshape(_trace_of_eye(z), (*shape_of(a)[:-2], 1, 1))
    return c, sub(mul(c, tr), matrix_transpose(stacked_matmul(z, matrix_transpose(c))))


def _trace_of_eye(z):
    n = shape_of(z)[-1]
    return _trace_of_product(z, np.eye(n, dtype=z.dtype))


cofactor_p = define("cofactor", impl=_cofactor_impl,
                    abstract=_square_abstract("cofactor"), jvp=_cofactor_jvp)
cofactor_p.rules["batch"] = _one_operand_batch(cofactor_p)


# --- det --------------------------------------------------------------------------------------

def det(a):
    """The determinant of square `a` (batched over leading axes)."""
    return det_p.bind(a)


def _det_abstract(a):
    _check_square("det", a)
    return ShapedArray(a.shape[:-2], a.dtype)


def _det_jvp(primals, tangents):
    a, = primals
    ta, = tangents
    d = det(a)
    return d, _trace_of_product(cofactor(a), ta)   # d det = sum(C * dA)


det_p = define("det", impl=lambda a: xp.asarray(xp.linalg.det(a)),
               abstract=_det_abstract, jvp=_det_jvp, torch_name="LinalgDetBackward0")
det_p.rules["batch"] = _one_operand_batch(det_p)


# --- slogdet ----------------------------------------------------------------------------------

def slogdet(a):
    """The sign and log of |det(a)| of square `a`, as a pair."""
    return slogdet_p.bind(a)


def _slogdet_abstract(a):
    _check_square("slogdet", a)
    # a complex matrix: the sign is a complex phase, the log of |det| real
    return [ShapedArray(a.shape[:-2], a.dtype),
            ShapedArray(a.shape[:-2], np.finfo(a.dtype).dtype)]


def _slogdet_impl(a):
    sign, logabsdet = xp.linalg.slogdet(a)
    return [xp.asarray(sign), xp.asarray(logabsdet)]


def _slogdet_jvp(primals, tangents):
    a, = primals
    ta, = tangents
    sign, logabsdet = slogdet(a)
    d_log = _trace_of_eye(solve(a, ta))                                # tr(A^-1 dA)
    if np.dtype(a.dtype).kind != "c":
        return [sign, logabsdet], [Zero(ShapedArray(shape_of(sign), sign.dtype)), d_log]
    # complex (JAX's): d log|det| = Re tr(A^-1 dA), d sign = i Im tr(A^-1 dA) sign
    d_phase = convert_element_type(imag(d_log), a.dtype)
    d_sign = mul(mul(d_phase, np.asarray(1j, a.dtype)), sign)
    return [sign, logabsdet], [d_sign, real(d_log)]


slogdet_p = define("slogdet", impl=_slogdet_impl, abstract=_slogdet_abstract,
                   jvp=_slogdet_jvp, multiple_results=True,
                   torch_name="LinalgSlogdetBackward0")
slogdet_p.rules["batch"] = _one_operand_batch(slogdet_p)


# --- cholesky ---------------------------------------------------------------------------------

def cholesky(a):
    """The lower Cholesky factor of symmetric positive definite `a`."""
    return cholesky_p.bind(a)


def _cholesky_jvp(primals, tangents):
    a, = primals
    ta, = tangents
    low = cholesky(a)
    # A = L L^H with dA made Hermitian (the impl reads only A's lower triangle; JAX's
    # convention): L^-1 S L^-H is Hermitian, its half-diagonal lower triangle Phi gives dL = L Phi
    half = mul(add(ta, conj_transpose(ta)), np.asarray(0.5, ta.dtype))
    x = solve(low, conj_transpose(solve(low, half)))        # L^-1 (L^-1 S)^H = L^-1 S L^-H
    n = shape_of(a)[-1]
    phi = np.tril(np.ones((n, n), ta.dtype), -1) + 0.5 * np.eye(n, dtype=ta.dtype)
    return low, stacked_matmul(low, mul(x, phi))


def _cholesky_impl(a):
    # single precision: scipy's LAPACK where installed (JAX's values), else numpy's
    low = xla_math.scipy_lapack_single("cholesky", a, lower=True)
    return xp.linalg.cholesky(a) if low is None else low.astype(a.dtype, copy=False)


cholesky_p = define("cholesky", impl=_cholesky_impl,
                    abstract=_square_abstract("cholesky"), jvp=_cholesky_jvp,
                    torch_name="LinalgCholeskyExBackward0")
cholesky_p.rules["batch"] = _one_operand_batch(cholesky_p)
