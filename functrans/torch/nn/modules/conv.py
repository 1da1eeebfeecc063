"""Conv1d and Conv2d: learnable cross-correlations, with PyTorch's initialisation, padding
modes and printing."""

from __future__ import annotations

import math

from functrans.torch._creation import empty
from functrans.torch.nn import functional as F
from functrans.torch.nn import init
from functrans.torch.nn.modules.module import Module
from functrans.torch.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d"]


def _ntuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,) * n


class _ConvNd(Module):
    """What Conv1d and Conv2d share: the checks, the parameters (weight of shape (out,
    in / groups, *kernel_size)) and their initialisation, the padding modes, the repr."""

    _dims = 0
    _functional = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__()
        n = self._dims
        kernel_size, stride, dilation = (_ntuple(v, n) for v in (kernel_size, stride, dilation))
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.dilation = kernel_size, stride, dilation
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.transposed, self.output_padding = False, (0,) * n
        self.groups, self.padding_mode = groups, padding_mode
        # F.pad's order: (low, high) pairs from the last axis backwards
        if isinstance(self.padding, str):
            pads = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i], pads[2 * i + 1] = total // 2, total - total // 2
        else:
            pads = [p for p in reversed(self.padding) for _ in range(2)]
        self._reversed_padding_repeated_twice = pads
        self.weight = Parameter(empty((out_channels, in_channels // groups, *kernel_size),
                                      device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """kaiming_uniform_(a=sqrt(5)) on the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on
        the bias, drawn in that order from the global generator, as in PyTorch."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        conv = type(self)._functional
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, self.weight, self.bias, self.stride, (0,) * self._dims,
                        self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """A 1-d convolution layer over (N, C, L) or (C, L) input.

    >>> import functrans.torch as torch
    >>> torch.nn.Conv1d(2, 4, 3, stride=2)
    Conv1d(2, 4, kernel_size=(3,), stride=(2,))
    """

    _dims = 1
    _functional = staticmethod(F.conv1d)


class Conv2d(_ConvNd):
    """A 2-d convolution layer over (N, C, H, W) or (C, H, W) input.

    >>> import functrans.torch as torch
    >>> torch.nn.Conv2d(1, 6, 5)
    Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    """

    _dims = 2
    _functional = staticmethod(F.conv2d)
