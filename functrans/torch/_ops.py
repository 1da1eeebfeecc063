"""Running PyTorch's ops on the primitive table: a torch function promotes its operands and runs
one `Op` (a row, or a composite recorded as one node, see `_record`); conversions."""

from __future__ import annotations

import numpy as np

from functrans.primitives import shape_ops as S
from functrans.primitives.registry import REGISTRY
from functrans.torch import _dtype
from functrans.torch._grad_mode import MODE
from functrans.torch._record import Op, check_broadcast, prim_op, run, run1, run2
from functrans.torch._tensor import Tensor, wrap


def as_tensor(x, dtype=None) -> Tensor:
    """`x` as a Tensor (no copy for Tensors and numpy arrays of the right dtype)."""
    if isinstance(x, Tensor):
        return x if dtype is None else to_dtype(x, _dtype.to_numpy(dtype))
    return wrap(_dtype.tensor_value(x, dtype))


def _default_float() -> np.dtype:
    return _dtype.get_default_dtype().dtype


def _operand(x, dt):
    """The raw array of a Tensor or constant operand, in dtype `dt`."""
    if isinstance(x, Tensor):
        v = x._value
        return v if v.dtype == dt else v.astype(dt)
    if isinstance(x, (bool, int, float, complex)):
        try:
            return dt.type(x)
        except OverflowError:  # PyTorch wraps an out-of-range integer scalar around
            return np.asarray(x, np.int64 if isinstance(x, int) else None).astype(dt)
    return np.asarray(getattr(x, "_value", x), dt)


def _float_value(x):
    v = x._value
    return v if v.dtype.kind in "fc" else v.astype(_default_float())


def _prim(name, torch_name=None) -> Op:
    return prim_op(REGISTRY[name], torch_name)


_PROMOTED: dict = {}


def _promoted(op: Op) -> Op:
    """`op` on operands converted to one dtype, as one node (gradients in each one's dtype)."""
    p = _PROMOTED.get(op)
    if p is None:
        def fn(*xs, dt):
            return op.traced(*[S.convert_element_type(x, dt) for x in xs])
        p = _PROMOTED.setdefault(op, Op(op.name, fn, fn, op.multiple))  # one per op
    return p


def nary(op: Op, args, dt=None, scalar_overload=False):
    """`op` on `args` promoted to one dtype (`scalar_overload`: numbers are not node inputs)."""
    if dt is None:
        dt = _dtype.result_type(*args)
    vals = []
    mixed = False
    for a in args:
        if isinstance(a, Tensor):
            v = a._value
            if v.dtype != dt:
                mixed = mixed or a._requires_grad
                v = v.astype(dt)
            vals.append(v)
        else:
            vals.append(_operand(a, dt))
    inputs = tuple(a if isinstance(a, Tensor) else None for a in args) if scalar_overload \
        else args
    if not mixed:  # a converted operand needing no gradient: the node saves the converted value
        inputs = tuple(wrap(v) if isinstance(a, Tensor) and v is not a._value else a
                       for a, v in zip(inputs, vals))
    try:
        if mixed and MODE.enabled:
            raw = [a._value if isinstance(a, Tensor) else v for a, v in zip(args, vals)]
            return run(_promoted(op), inputs, raw, {"dt": dt})
        return run(op, inputs, vals)
    except ValueError:
        check_broadcast(*[np.shape(v) for v in vals])
        raise


def fast_binary(op: Op, fallback=None, float_only=False):
    """`op` on two operands, the common cases in one frame, the others `fallback(a, b)`'s."""
    def fn(a, b):
        if type(a) is Tensor:
            va = a._value
            tb = type(b)
            if tb is float or tb is int:
                dt = va.dtype
                if dt.kind == "f":
                    return run2(op, a, b, va, dt.type(b))
            elif tb is Tensor:
                vb = b._value
                if vb.dtype == va.dtype and (not float_only or va.dtype.kind == "f"):
                    return run2(op, a, b, va, vb)
        elif type(b) is Tensor and type(a) is float and b._value.dtype.kind == "f":
            vb = b._value
            return run2(op, a, b, vb.dtype.type(a), vb)
        return nary(op, (a, b)) if fallback is None else fallback(a, b)
    return fn


def named(fn, name: str, doc: str):
    """`fn` named `name` (a function a factory made), with docstring `doc`."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def fast_unary_float(op: Op, name: str):
    """The torch function of a unary float op, the common case in one frame."""
    def fn(input):
        if type(input) is Tensor:
            v = input._value
            if v.dtype.kind in "fc":
                return run1(op, input, v)
        return unary_float(op, input)
    return named(fn, name, f"torch.{name}: PyTorch's elementwise {name}; integer and bool "
                 "tensors go to the default float dtype.")


def unary_float(op: Op, x, params=None):
    """An elementwise function of floats: integer and bool tensors go to the default dtype."""
    x = as_tensor(x)
    v = x._value
    if params or v.dtype.kind not in "fc":
        return run(op, (x,), (_float_value(x),), params)
    return run1(op, x, v)


def unary(op: Op, x, params=None):
    """`op` of one tensor (or number), with `params`."""
    x = as_tensor(x)
    return run(op, (x,), (x._value,), params) if params else run1(op, x, x._value)


# --- conversions -----------------------------------------------------------------------------

TO_COPY = _prim("convert_element_type", "ToCopyBackward0")


def to_dtype(x, np_dtype):
    """`x` converted to `np_dtype` (ToCopyBackward0 for a float target, no graph otherwise)."""
    np_dtype = np.dtype(np_dtype)
    v = x._value
    if v.dtype == np_dtype:
        return x
    if np_dtype.kind not in "fc":
        return wrap(v.astype(np_dtype))
    return run(TO_COPY, (x,), (v,), {"new_dtype": np_dtype})


def _copy(x):
    return x.copy() if isinstance(x, np.ndarray) else x  # traced: the identity


_clone = Op("CloneBackward0", _copy, lambda x: x)
_copy_for_grad = Op("CopyBackwards", _copy, lambda x: x)


def clone(input, *, memory_format=None):
    """torch.clone: a copy of input that stays on the graph (CloneBackward0)."""
    return unary(_clone, input)


def copy_for_grad(g):
    """The copy AccumulateGrad makes of a gradient that requires grad (create_graph=True)."""
    return unary(_copy_for_grad, g)
