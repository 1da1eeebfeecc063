"""Products: mm, mv, dot, bmm, matmul, outer, einsum, addmm; cdist."""

from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from functrans.primitives.ad_control import stop_gradient_p
from functrans.primitives.linalg import dot_general
from functrans.primitives.norms import p_norm
from functrans.torch import _dtype
from functrans.torch._elementwise import mul
from functrans.torch._ops import _operand, as_tensor
from functrans.torch._record import check_broadcast, composite, run
from functrans.torch._reductions import vector_norm
from functrans.torch._shape import SQUEEZE4, expand, reshape, unsqueeze, view_op
from functrans.torch._tensor import _dim, warn_once


def _contraction(name, contract, batch=((), ())):
    dn = (contract, batch)
    return composite(name)(lambda a, b: dot_general(a, b, dn))


_mm = _contraction("MmBackward0", ((1,), (0,)))
_mv = _contraction("MvBackward0", ((1,), (0,)))
_dot = _contraction("DotBackward0", ((0,), (0,)))
_bmm = _contraction("BmmBackward0", ((2,), (1,)), ((0,), (0,)))
_matmul_nd = composite("UnsafeViewBackward0")(fnp.matmul)
_einsum = composite("ViewBackward0")(lambda *xs, spec: fnp.einsum(spec, *xs))


def _operands(*args, same_dtype=True, promoted=False):
    """The tensors of `args`, and their arrays (in one dtype if `promoted`); refused as
    PyTorch refuses mixed dtypes."""
    ts = [as_tensor(a) for a in args]
    if promoted:
        dt = _dtype.result_type(*ts)
        return ts, [_operand(t, dt) for t in ts]
    a, b = ts[-2:]
    if same_dtype and a._value.dtype != b._value.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_dtype.cpp_name(a._value.dtype)} != "
                           f"{_dtype.cpp_name(b._value.dtype)}")
    return ts, [t._value for t in ts]


def _check_matrices(ts, first):
    """PyTorch's checks of mm's and addmm's matrices, in its order."""
    va, vb = ts[-2]._value, ts[-1]._value
    for v, name in ((va, first), (vb, "mat2")):
        if v.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix" + (
                f", got {v.ndim}-D tensor" if first == "mat1" else ""))
    _operands(*ts[-2:])
    if va.shape[1] != vb.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({va.shape[0]}x"
                           f"{va.shape[1]} and {vb.shape[0]}x{vb.shape[1]})")


def mm(input, mat2):
    """torch.mm: the product of two matrices."""
    ts, vs = _operands(input, mat2, same_dtype=False)
    _check_matrices(ts, "self")
    return run(_mm, ts, vs)


def mv(input, vec):
    """torch.mv: the product of a matrix and a vector."""
    ts, (a, b) = _operands(input, vec)
    if a.ndim != 2 or b.ndim != 1 or a.shape[1] != b.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat "
                           f"({'x'.join(map(str, a.shape))}), vec ({b.shape[0]})")
    return run(_mv, ts, [a, b])


def dot(input, other):
    """torch.dot (also inner): the inner product of two 1-d tensors."""
    ts, (a, b) = _operands(input, other, same_dtype=False)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    return run(_dot, *_operands(*ts))


inner = dot


def bmm(input, mat2):
    """torch.bmm: a batch of matrix products, (b, n, m) @ (b, m, p)."""
    return run(_bmm, *_operands(input, mat2))


def matmul(input, other):
    """torch.matmul: the matrix product with numpy's broadcasting rules (input @ other)."""
    a, b = as_tensor(input), as_tensor(other)
    na, nb = a._value.ndim, b._value.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if na <= 2 and nb <= 2 and (na, nb) != (1, 2):
        return {(1, 1): dot, (2, 1): mv, (2, 2): mm}[(na, nb)](a, b)
    if na == 1 and nb == 2:  # PyTorch squeezes the product in place: SqueezeBackward4
        return view_op(SQUEEZE4, mm(unsqueeze(a, 0), b), {"dimensions": (0,)})
    return run(_matmul_nd, *_operands(a, b))


def outer(input, vec2):
    """a[:, None] * b, recorded as PyTorch does: a view, then MulBackward0."""
    a, b = as_tensor(input), as_tensor(vec2)
    return mul(reshape(a, (a._value.shape[0], 1)), b)


ger = outer


def einsum(equation, *operands):
    """torch.einsum: the contraction the equation names, over the operands."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    return run(_einsum, *_operands(*operands, promoted=True), {"spec": equation})


@composite("AddmmBackward0")
def _addmm(x, a, b, *, beta, alpha):
    prod = dot_general(a, b, (((1,), (0,)), ((), ())))
    if alpha != 1:
        prod = E.mul(prod, np.asarray(alpha, prod.dtype))
    if x.shape != prod.shape:
        x = fnp.broadcast_to(x, prod.shape)
    if beta == 0:  # input is ignored (its NaN too); its gradient is zero
        return E.add(prod, E.select(np.zeros((), np.bool_), x, np.zeros((), x.dtype)))
    return E.add(x if beta == 1 else E.mul(x, np.asarray(beta, x.dtype)), prod)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)."""
    (x, a, b), vs = _operands(input, mat1, mat2, same_dtype=False)
    _check_matrices((a, b), "mat1")
    expand(x.detach(), (vs[1].shape[0], vs[2].shape[1]))  # PyTorch's message: no broadcast
    if vs[0].dtype != vs[1].dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_dtype.cpp_name(vs[0].dtype).title()} and "
                           f"{_dtype.cpp_name(vs[2].dtype).title()}")
    return run(_addmm, (x, a, b), vs, {"beta": beta, "alpha": alpha})


@composite("CdistBackward0")
def _cdist(a, b, *, p):
    diff = E.sub(fnp.expand_dims(a, -2), fnp.expand_dims(b, -3))
    if p == 1:  # p_norm's PyTorch rule, as cdist_backward: sign(diff), 0 at 0 and NaN at NaN
        return p_norm(diff, 1.0, (diff.ndim - 1,))
    if p != float("inf"):  # the norm rows: PyTorch's derivative is 0 at zero distance
        return vector_norm(diff, p, (diff.ndim - 1,))
    # p = inf: every coordinate at the maximum gets the whole gradient, times sign(diff)
    ad = E.mul(diff, E.sign(diff))
    top = stop_gradient_p.bind(fnp.max(ad, axis=-1, keepdims=True))
    at_top = E.select(E.eq(ad, top), E.sub(ad, stop_gradient_p.bind(ad)), np.zeros((), a.dtype))
    return E.add(fnp.squeeze(top, -1), fnp.sum(at_top, axis=-1))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 and x2 (computed directly, not by
    matrix products: PyTorch's mm route, taken above 25 rows, rounds differently)."""
    ts, vs = _operands(x1, x2, same_dtype=False)
    for v, name in zip(vs, ("X1", "X2")):
        if v.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {v.ndim}D")
    if vs[0].shape[-1] != vs[1].shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{vs[0].shape[-1]} X2: {vs[1].shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    return run(_cdist, *_operands(*ts, promoted=True), {"p": float(p)})


# --- kron, cross and distances -----------------------------------------------------------------

_KRON = composite("UnsafeViewBackward0")(fnp.kron)
_CROSS = composite("LinalgCrossBackward0")(lambda a, b, *, dim: fnp.linalg.cross(a, b, axis=dim))
CROSS_DIM_WARNING = (
    "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
    "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
    "agree with that of linalg.cross in a future release.")


def kron(input, other):
    """torch.kron: the Kronecker product (the blocks input[i, j] * other)."""
    return run(_KRON, *_operands(input, other, promoted=True))


def cross(input, other, dim=None):
    """torch.cross: the cross product of 3-vectors along dim (without dim, PyTorch's deprecated
    default: the first dimension of size 3)."""
    a, b = as_tensor(input), as_tensor(other)
    if dim is None:
        warn_once("cross_dim", CROSS_DIM_WARNING, 1)
        dim = next((i for i, s in enumerate(a._value.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    va, vb = a._value, b._value
    if va.ndim != vb.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _dim(dim, va.ndim)
    if va.shape[d] != 3 or vb.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{va.shape[d]} and {vb.shape[d]}")
    check_broadcast(va.shape, vb.shape)
    return run(_CROSS, *_operands(a, b, promoted=True), {"dim": d})


_DIST = composite("DistBackward0")(
    lambda a, b, *, p: vector_norm(E.sub(a, b), p, tuple(range(max(a.ndim, b.ndim)))))


def dist(input, other, p=2):
    """torch.dist: the p-norm of input - other (broadcast); zero gradient where they are equal,
    as PyTorch's norm at zero."""
    ts, vs = _operands(input, other, promoted=True)
    if vs[0].dtype.kind not in "fc":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {_dtype.kind(vs[0].dtype)} instead.")
    check_broadcast(vs[0].shape, vs[1].shape)
    return run(_DIST, ts, vs, {"p": float(p)})


def _clamped_norm(x, dim, eps):
    """The 2-norm of x along dim, raised to eps where smaller; the gradient is the norm's (PyTorch
    clamps it in place under no_grad)."""
    n = vector_norm(x, 2, (dim,))
    raised = E.add(E.sub(n, stop_gradient_p.bind(n)), np.asarray(eps, n.dtype))
    return fnp.expand_dims(E.select(E.ge(n, np.asarray(eps, n.dtype)), n, raised), dim)


@composite("SumBackward1")
def _cosine_similarity(a, b, *, dim, eps):
    a, b = fnp.broadcast_arrays(a, b)
    return fnp.sum(E.mul(E.div(a, _clamped_norm(a, dim, eps)),
                         E.div(b, _clamped_norm(b, dim, eps))), axis=dim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.cosine_similarity: the cosine of the angle between x1 and x2 along dim, each divided
    by its norm raised to eps, as PyTorch computes it."""
    ts, vs = _operands(x1, x2, promoted=True)
    dt = vs[0].dtype
    if dt.kind != "f":
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype.kind(dt)}")
    shape = check_broadcast(vs[0].shape, vs[1].shape)
    return run(_cosine_similarity, ts, vs, {"dim": _dim(dim, len(shape)), "eps": float(eps)})


@composite("NormBackward1")
def _pairwise_distance(a, b, *, p, eps, keepdim):
    d = E.add(E.sub(a, b), np.asarray(eps, a.dtype))
    n = vector_norm(d, p, (d.ndim - 1,))
    return fnp.expand_dims(n, -1) if keepdim else n


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """torch.pairwise_distance: the p-norm of x1 - x2 + eps along the last dimension."""
    ts, vs = _operands(x1, x2, promoted=True)
    check_broadcast(vs[0].shape, vs[1].shape)
    return run(_pairwise_distance, ts, vs, {"p": float(p), "eps": float(eps),
                                            "keepdim": bool(keepdim)})
