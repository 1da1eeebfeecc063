"""Products: mm, mv, dot, bmm, matmul, outer, einsum."""

from __future__ import annotations

import functrans.numpy as fnp
from functrans.primitives.registry import REGISTRY
from functrans.torch import _dtype
from functrans.torch._elementwise import mul
from functrans.torch._ops import _operand, as_tensor
from functrans.torch._record import composite, run

# --- products --------------------------------------------------------------------------------

@composite("MmBackward0")
def _mm(a, b):
    return REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((1,), (0,)), ((), ())))


@composite("MvBackward0")
def _mv(a, b):
    return REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((1,), (0,)), ((), ())))


@composite("DotBackward0")
def _dot(a, b):
    return REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((0,), (0,)), ((), ())))


@composite("BmmBackward0")
def _bmm(a, b):
    return REGISTRY["dot_general"].bind(a, b, dimension_numbers=(((2,), (1,)), ((0,), (0,))))


@composite("UnsafeViewBackward0")
def _matmul_nd(a, b):
    return fnp.matmul(a, b)


def _check_same_dtype(name, a, b):
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
    a, b = as_tensor(input), as_tensor(mat2)
    if a._value.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._value.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_same_dtype("mm", a, b)
    if a._value.shape[1] != b._value.shape[0]:
        raise _mat_shape_error(a, b)
    return run(_mm, (a, b), (a._value, b._value))


def mv(input, vec):
    a, b = as_tensor(input), as_tensor(vec)
    _check_same_dtype("mv", a, b)
    if a._value.ndim != 2 or b._value.ndim != 1 or a._value.shape[1] != b._value.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a._value.shape[0]}), mat "
                           f"({'x'.join(map(str, a._value.shape))}), vec ({b._value.shape[0]})")
    return run(_mv, (a, b), (a._value, b._value))


def dot(input, other):
    a, b = as_tensor(input), as_tensor(other)
    if a._value.ndim != 1 or b._value.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._value.ndim}D and "
                           f"{b._value.ndim}D tensors")
    if a._value.shape != b._value.shape:
        raise RuntimeError("inconsistent tensor size, expected tensor [{}] and src [{}] to have "
                           "the same number of elements, but got {} and {} elements "
                           "respectively".format(a._value.shape[0], b._value.shape[0],
                                                 a._value.shape[0], b._value.shape[0]))
    _check_same_dtype("dot", a, b)
    return run(_dot, (a, b), (a._value, b._value))


inner = dot


def bmm(input, mat2):
    a, b = as_tensor(input), as_tensor(mat2)
    _check_same_dtype("bmm", a, b)
    return run(_bmm, (a, b), (a._value, b._value))


def matmul(input, other):
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
        from functrans.torch._shape import SQUEEZE4, _view_op
        return _view_op(SQUEEZE4, mm(unsqueeze(a, 0), b), {"dimensions": (0,)}, ((0,),))
    _check_same_dtype("matmul", a, b)
    return run(_matmul_nd, (a, b), (a._value, b._value))


def outer(input, vec2):
    """a[:, None] * b, recorded as PyTorch does: a view, then MulBackward0."""
    from functrans.torch._shape import reshape
    a, b = as_tensor(input), as_tensor(vec2)
    return mul(reshape(a, (a._value.shape[0], 1)), b)


ger = outer


@composite("ViewBackward0")
def _einsum(*xs, spec):
    return fnp.einsum(spec, *xs)


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    ts = [as_tensor(o) for o in operands]
    dt = _dtype.result_type(*ts)
    return run(_einsum, ts, [_operand(t, dt) for t in ts], {"spec": equation}, (equation,))


# --- shape ops used here (full set in _shape) ------------------------------------------------

def squeeze(x, dim=None):
    from functrans.torch._shape import squeeze as sq
    return sq(x, dim)


def unsqueeze(x, dim):
    from functrans.torch._shape import unsqueeze as unsq
    return unsq(x, dim)


