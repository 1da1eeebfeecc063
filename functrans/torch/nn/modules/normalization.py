"""LayerNorm, RMSNorm and GroupNorm: each sample normalised over its last axes
(torch.nn.functional.layer_norm, rms_norm) or over groups of channels (group_norm), then scaled
(and shifted) by learned parameters."""

from __future__ import annotations

from functrans.torch._creation import empty
from functrans.torch.nn import functional as F
from functrans.torch.nn import init
from functrans.torch.nn.modules.module import Module
from functrans.torch.nn.parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]


def affine_parameters(module: Module, shape, affine: bool, bias: bool, device, dtype) -> None:
    """The parameters `weight` and `bias` of a normalisation layer, of `shape`: both None
    without `affine`, `bias` None without `bias` (reset_affine gives them their values)."""
    def new():
        return Parameter(empty(shape, device=device, dtype=dtype))

    module.register_parameter("weight", new() if affine else None)
    module.register_parameter("bias", new() if affine and bias else None)


def reset_affine(module: Module) -> None:
    """Weight back to ones, bias to zeros (those the layer has)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) over the last len(normalized_shape) axes, times `weight`
    (ones at the start) plus `bias` (zeros), as PyTorch's."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(d) for d in shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight back to ones, bias to zeros."""
        reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """The channels split into num_groups groups, each sample's group normalised by its mean
    and biased variance, then times `weight` (ones at the start) plus `bias` (zeros), one per
    channel, as PyTorch's."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        affine_parameters(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight back to ones, bias to zeros."""
        reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) over the last len(normalized_shape) axes, times `weight` (ones
    at the start), as PyTorch's; eps None means the dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        self.normalized_shape = tuple(int(d) for d in shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Weight back to ones."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
