"""torch.autograd.graph: `Node` (every grad_fn's base), `GradientEdge`, version bumps and the
saved-tensor hooks."""

from __future__ import annotations

from typing import NamedTuple

from functrans.torch._graph import Node
from functrans.torch._saved_hooks import (disable_saved_tensors_hooks, save_on_cpu,
                                          saved_tensors_hooks)
from functrans.torch._tensor import Tensor, _shared_vc, edge

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version",
           "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class GradientEdge(NamedTuple):
    """One input slot of a graph node: (node, output_nr), as PyTorch's GradientEdge."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge `tensor`'s gradient flows along: (grad_fn or AccumulateGrad, output number)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(*edge(tensor))


def increment_version(tensor) -> None:
    """Bump the version counter of `tensor` (or of each of an iterable), as in-place ops do."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if t.is_inference():
            continue  # inference tensors have no version counter
        _shared_vc(t)[0] += 1
