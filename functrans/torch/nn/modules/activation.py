"""Activation modules: each holds its settings and calls its torch.nn.functional function;
`extra_repr` prints the settings as PyTorch does."""

from __future__ import annotations

from functrans.torch._creation import empty
from functrans.torch.nn import functional as F
from functrans.torch.nn import init as nn_init
from functrans.torch.nn.modules.module import Module
from functrans.torch.nn.parameter import Parameter

__all__ = ["Identity", "ReLU", "ReLU6", "Tanh", "Sigmoid", "SiLU", "Mish", "GELU", "ELU",
           "CELU", "SELU", "LeakyReLU", "Softplus", "Softsign", "Tanhshrink", "LogSigmoid",
           "Hardtanh", "Hardswish", "Hardsigmoid", "Softmax", "LogSoftmax", "Softmin",
           "Threshold", "PReLU"]


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class _Stateless(Module):
    """An activation with no settings: forward is `fn(input)`."""

    fn = None

    def forward(self, input):
        return type(self).fn(input)


class Tanh(_Stateless):
    """tanh, elementwise."""
    fn = staticmethod(F.tanh)


class Sigmoid(_Stateless):
    """1 / (1 + exp(-x)), elementwise."""
    fn = staticmethod(F.sigmoid)


class Softsign(_Stateless):
    """x / (1 + |x|), elementwise."""
    fn = staticmethod(F.softsign)


class Tanhshrink(_Stateless):
    """x - tanh(x), elementwise."""
    fn = staticmethod(F.tanhshrink)


class LogSigmoid(_Stateless):
    """log(sigmoid(x)), elementwise."""
    fn = staticmethod(F.logsigmoid)


class _InPlaceOption(Module):
    """An activation whose only setting is `inplace`."""

    fn = None

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self).fn(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_InPlaceOption):
    """max(x, 0), elementwise."""
    fn = staticmethod(F.relu)


class SiLU(_InPlaceOption):
    """x * sigmoid(x), elementwise."""
    fn = staticmethod(F.silu)


class Mish(_InPlaceOption):
    """x * tanh(softplus(x)), elementwise."""
    fn = staticmethod(F.mish)


class SELU(_InPlaceOption):
    """scale * elu(x, alpha) with SELU's constants, elementwise."""
    fn = staticmethod(F.selu)


class Hardswish(_InPlaceOption):
    """x * relu6(x + 3) / 6, elementwise."""
    fn = staticmethod(F.hardswish)

    def extra_repr(self) -> str:
        return ""


class Hardsigmoid(_InPlaceOption):
    """relu6(x + 3) / 6, elementwise."""
    fn = staticmethod(F.hardsigmoid)

    def extra_repr(self) -> str:
        return ""


class GELU(Module):
    """x * Phi(x), or its tanh approximation (approximate='tanh')."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class ELU(Module):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class LeakyReLU(Module):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """x clipped to [0, 6]."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softmax(Module):
    """exp(x) / sum(exp(x)) along dim."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log(softmax(x)) along dim, computed stably."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmin(Softmax):
    """exp(-x) / sum(exp(-x)) along dim."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class Threshold(Module):
    """x where x > threshold, else value."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


class PReLU(Module):
    """x for x > 0, weight * x otherwise: one learned slope (init 0.25), or one per channel."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every slope back to init."""
        nn_init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
