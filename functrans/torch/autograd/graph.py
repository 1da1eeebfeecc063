"""torch.autograd.graph: `Node` (the base of every grad_fn), `GradientEdge` (one input slot of a
node, accepted by autograd.grad and backward wherever a tensor is) and version bumps."""

from __future__ import annotations

from typing import NamedTuple

from functrans.torch._graph import Node
from functrans.torch._tensor import Tensor, _shared_vc, edge

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version"]


class GradientEdge(NamedTuple):
    """One input slot of a graph node: (node, output_nr), as PyTorch's GradientEdge."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge the gradient of `tensor` flows along: its grad_fn and output number, or its
    AccumulateGrad node for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = edge(tensor)
    return GradientEdge(node, nr)


def increment_version(tensor) -> None:
    """Bump the version counter of `tensor` (or of each tensor of an iterable), as an in-place
    change would: saved copies of it then refuse to be used in backward."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if t.is_inference():
            continue  # inference tensors have no version counter
        _shared_vc(t)[0] += 1
