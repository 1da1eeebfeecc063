"""Linear: y = x W^T + b, with PyTorch's default initialisation."""

from __future__ import annotations

import math

from functrans.torch._creation import empty
from functrans.torch.nn import functional as F
from functrans.torch.nn import init
from functrans.torch.nn.modules.activation import Identity
from functrans.torch.nn.modules.module import Module
from functrans.torch.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Linear(Module):
    """y = x W^T + b for W of shape (out_features, in_features); W starts from
    kaiming_uniform_(a=sqrt(5)) and b from U(-1/sqrt(in_features), 1/sqrt(in_features)), as in
    PyTorch, drawn from the global generator in that order.

    >>> import functrans.torch as torch
    >>> torch.nn.Linear(3, 2)
    Linear(in_features=3, out_features=2, bias=True)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weights (and bias) anew, as the constructor does."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T A x2 + b for A of shape (out_features, in1_features, in2_features); A and b
    start from U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as in PyTorch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), device=device,
                                      dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weights (and bias) anew, as the constructor does."""
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features="
                             f"{self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
