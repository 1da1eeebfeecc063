"""Products: mm, mv, dot, bmm, matmul, outer, einsum."""

from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.primitives import elementwise as E
from functrans.primitives import shape_ops as S
from functrans.primitives.ad_control import stop_gradient_p
from functrans.primitives.registry import REGISTRY
from functrans.torch import _dtype
from functrans.torch._elementwise import mul
from functrans.torch._ops import _operand, as_tensor
from functrans.torch._record import composite, run

def _contraction(name, contract, batch=((), ())):
    dn = (contract, batch)
    return composite(name)(lambda a, b: REGISTRY["dot_general"].bind(a, b, dimension_numbers=dn))


_mm = _contraction("MmBackward0", ((1,), (0,)))
_mv = _contraction("MvBackward0", ((1,), (0,)))
_dot = _contraction("DotBackward0", ((0,), (0,)))
_bmm = _contraction("BmmBackward0", ((2,), (1,)), ((0,), (0,)))
_matmul_nd = composite("UnsafeViewBackward0")(fnp.matmul)


def _check_same_dtype(a, b):
    if a._value.dtype != b._value.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_long(a)} != {_long(b)}")


def _long(t):
    return {"float32": "float", "float64": "double", "int64": "long int"}.get(
        t._value.dtype.name, t._value.dtype.name)


def _mat_shape_error(a, b):
    sa, sb = a._value.shape, b._value.shape
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and "
                        f"{sb[0]}x{sb[1]})")


def mm(input, mat2):
    """torch.mm: the product of two matrices."""
    a, b = as_tensor(input), as_tensor(mat2)
    if a._value.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._value.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_same_dtype(a, b)
    if a._value.shape[1] != b._value.shape[0]:
        raise _mat_shape_error(a, b)
    return run(_mm, (a, b), (a._value, b._value))


def mv(input, vec):
    """torch.mv: the product of a matrix and a vector."""
    a, b = as_tensor(input), as_tensor(vec)
    _check_same_dtype(a, b)
    if a._value.ndim != 2 or b._value.ndim != 1 or a._value.shape[1] != b._value.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a._value.shape[0]}), mat "
                           f"({'x'.join(map(str, a._value.shape))}), vec ({b._value.shape[0]})")
    return run(_mv, (a, b), (a._value, b._value))


def dot(input, other):
    """torch.dot (also inner): the inner product of two 1-d tensors."""
    a, b = as_tensor(input), as_tensor(other)
    if a._value.ndim != 1 or b._value.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._value.ndim}D and "
                           f"{b._value.ndim}D tensors")
    if a._value.shape != b._value.shape:
        raise RuntimeError("inconsistent tensor size, expected tensor [{}] and src [{}] to have "
                           "the same number of elements, but got {} and {} elements "
                           "respectively".format(a._value.shape[0], b._value.shape[0],
                                                 a._value.shape[0], b._value.shape[0]))
    _check_same_dtype(a, b)
    return run(_dot, (a, b), (a._value, b._value))


inner = dot


def bmm(input, mat2):
    """torch.bmm: a batch of matrix products, (b, n, m) @ (b, m, p)."""
    a, b = as_tensor(input), as_tensor(mat2)
    _check_same_dtype(a, b)
    return run(_bmm, (a, b), (a._value, b._value))


def matmul(input, other):
    """torch.matmul: the matrix product with numpy's broadcasting rules (input @ other)."""
    a, b = as_tensor(input), as_tensor(other)
    na, nb = a._value.ndim, b._value.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if na == 1 and nb == 1:
        return dot(a, b)
    if na == 2 and nb == 1:
        return mv(a, b)
    if na == 2 and nb == 2:
        return mm(a, b)
    if na == 1 and nb == 2:  # PyTorch squeezes the product in place: SqueezeBackward4
        from functrans.torch._shape import SQUEEZE4, unsqueeze, view_op
        return view_op(SQUEEZE4, mm(unsqueeze(a, 0), b), {"dimensions": (0,)})
    _check_same_dtype(a, b)
    return run(_matmul_nd, (a, b), (a._value, b._value))


def outer(input, vec2):
    """a[:, None] * b, recorded as PyTorch does: a view, then MulBackward0."""
    from functrans.torch._shape import reshape
    a, b = as_tensor(input), as_tensor(vec2)
    return mul(reshape(a, (a._value.shape[0], 1)), b)


ger = outer


_einsum = composite("ViewBackward0")(lambda *xs, spec: fnp.einsum(spec, *xs))


def einsum(equation, *operands):
    """torch.einsum: the contraction the equation names, over the operands."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    ts = [as_tensor(o) for o in operands]
    dt = _dtype.result_type(*ts)
    return run(_einsum, ts, [_operand(t, dt) for t in ts], {"spec": equation})


@composite("AddmmBackward0")
def _addmm(x, a, b, *, beta, alpha):
    prod = REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((1,), (0,)), ((), ())))
    if alpha != 1:
        prod = E.mul(prod, np.asarray(alpha, prod.dtype))
    if x.shape != prod.shape:
        x = fnp.broadcast_to(x, prod.shape)
    if beta == 0:  # input is ignored (its NaN too); its gradient is zero
        return E.add(prod, E.select(np.zeros((), np.bool_), x, np.zeros((), x.dtype)))
    if beta != 1:
        x = E.mul(x, np.asarray(beta, x.dtype))
    return E.add(x, prod)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2)."""
    x, a, b = as_tensor(input), as_tensor(mat1), as_tensor(mat2)
    if a._value.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a._value.ndim}-D tensor")
    if b._value.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {b._value.ndim}-D tensor")
    _check_same_dtype(a, b)
    if a._value.shape[1] != b._value.shape[0]:
        raise _mat_shape_error(a, b)
    out_shape = (a._value.shape[0], b._value.shape[1])
    from functrans.torch._shape import expand
    expand(x.detach(), out_shape)  # PyTorch's message when input does not broadcast
    if x._value.dtype != a._value.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_long(x).title()} "
                           f"and {_long(b).title()}")
    params = {"beta": beta, "alpha": alpha}
    return run(_addmm, (x, a, b), (x._value, a._value, b._value), params)


@composite("CdistBackward0")
def _cdist(a, b, *, p):
    diff = E.sub(fnp.expand_dims(a, -2), fnp.expand_dims(b, -3))
    zero = np.zeros((), a.dtype)
    if p == 0:  # the number of differing coordinates: a zero gradient
        return fnp.sum(S.convert_element_type(E.ne(diff, zero), a.dtype), axis=-1)
    if p == 2:  # the norm_sqrt row: PyTorch's derivative is 0 at zero distance
        return E.norm_sqrt(fnp.sum(E.mul(diff, diff), axis=-1))
    ad = E.mul(diff, E.sign(diff))  # |diff| with cdist_backward's derivative sign(diff): 0 at
    # 0 and NaN at NaN (abs's PyTorch rule, sgn, gives 0 at NaN)
    if p == 1:
        return fnp.sum(ad, axis=-1)
    if p == float("inf"):  # every coordinate at the maximum gets the whole gradient
        top = stop_gradient_p.bind(fnp.max(ad, axis=-1, keepdims=True))
        at_top = E.select(E.eq(ad, top), E.sub(ad, stop_gradient_p.bind(ad)), zero)
        return E.add(fnp.squeeze(top, -1), fnp.sum(at_top, axis=-1))
    s = fnp.sum(REGISTRY["pow"].bind(ad, np.asarray(p, a.dtype)), axis=-1)
    pos = E.gt(s, zero)
    root = REGISTRY["pow"].bind(E.select(pos, s, np.ones((), a.dtype)),
                                np.asarray(1.0 / p, a.dtype))
    return E.select(pos, root, zero)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 and x2 (computed directly, not by
    matrix products: PyTorch's mm route, taken above 25 rows, rounds differently)."""
    a, b = as_tensor(x1), as_tensor(x2)
    if a._value.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: "
                           f"{a._value.ndim}D")
    if b._value.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: "
                           f"{b._value.ndim}D")
    if a._value.shape[-1] != b._value.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{a._value.shape[-1]} X2: {b._value.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    p = float(p)
    dt = _dtype.result_type(a, b)
    return run(_cdist, (a, b), (_operand(a, dt), _operand(b, dt)), {"p": p})
