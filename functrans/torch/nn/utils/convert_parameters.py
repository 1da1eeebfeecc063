"""parameters_to_vector / vector_to_parameters: all parameters as one flat vector and back."""

from __future__ import annotations

from collections.abc import Iterable

from functrans.torch import _shape as S
from functrans.torch._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters flattened and concatenated, in order (on the graph, as in PyTorch)."""
    return S.cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Slice vec into the parameters' shapes and make each slice that parameter's data."""
    if not isinstance(vec, Tensor):
        from functrans.torch.nn.modules.module import typename
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    pointer = 0
    for param in parameters:
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param
