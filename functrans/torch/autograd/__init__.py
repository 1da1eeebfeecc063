"""torch.autograd: backward, grad, Function, gradcheck, and the grad-mode switches."""

from __future__ import annotations

import contextlib

from functrans.torch._grad_mode import (  # noqa: F401
    _force_original_view_tracking, enable_grad, inference_mode, is_grad_enabled, no_grad,
    set_grad_enabled)
from functrans.torch._tensor import Tensor
from functrans.torch.autograd import functional, graph  # noqa: F401
from functrans.torch.autograd.function import (  # noqa: F401
    Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable)
from functrans.torch.autograd.gradcheck import (  # noqa: F401
    GradcheckError, gradcheck, gradgradcheck)
from functrans.torch.autograd._gradients import backward, grad  # noqa: F401

class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """torch.autograd.Variable (deprecated in PyTorch, still called by old code):
    `Variable(data, requires_grad=...)` is `data.detach().requires_grad_(requires_grad)`, a new
    leaf sharing data; every tensor is an instance of Variable."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            from functrans.torch._creation import tensor
            return tensor([], requires_grad=requires_grad)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)

__all__ = ["backward", "grad", "Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction",
           "once_differentiable", "gradcheck", "gradgradcheck", "GradcheckError", "Variable",
           "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "set_detect_anomaly", "detect_anomaly", "functional", "function", "graph"]


class set_detect_anomaly(contextlib.nullcontext):
    """Accepted for compatibility; functrans.torch has no anomaly mode."""

    def __init__(self, mode=True, check_nan=True):
        super().__init__()
        self.mode = mode


detect_anomaly = set_detect_anomaly
