"""`out=` on torch functions: the result written into a given tensor, with PyTorch's rules.

The out tensor is resized when its shape differs (warning unless it was empty), receives the
result cast to its own dtype when PyTorch's casting allows it, and is returned. As in
PyTorch, `out=` does not record for autograd: with grad on, an argument requiring grad is an
error.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from functrans.torch import _dtype
from functrans.torch._grad_mode import MODE
from functrans.torch._tensor import Tensor, _shared_vc, is_inference


def _type_name(dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(dtype.name,
                                                                             dtype.name)


def write_out(name, result, out, args):
    """Write `result` into `out` as PyTorch's out= variants do; returns `out`."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if MODE.enabled and (out.requires_grad or any(
            isinstance(a, Tensor) and a.requires_grad for a in args)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if is_inference(out) and not MODE.inference:
        from functrans.torch._inplace import INFERENCE_INPLACE_ERROR
        raise RuntimeError(INFERENCE_INPLACE_ERROR)
    if _dtype._category(result._value.dtype) > _dtype._category(out._value.dtype):
        raise RuntimeError(f"result type {_type_name(result._value.dtype)} can't be cast to "
                           f"the desired output type {_type_name(out._value.dtype)}")
    value = result._value
    if out._value.shape != value.shape:
        if out._value.size:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._value.shape)}, which does not match the required output shape "
                f"{list(value.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", UserWarning, stacklevel=3)
        out._value = np.array(value, dtype=out._value.dtype)
    else:
        out._value[...] = value
    _shared_vc(out)[0] += 1
    return out


def supports_out(fn, name=None):
    """`fn` with an `out=` keyword (the function itself when out is not given)."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        if out is None:
            return result
        return write_out(name, result, out, args)
    return with_out
