"""torch.linalg: so far `cross` (the products and norms live at the top level: torch.matmul,
torch.norm, ...)."""

from __future__ import annotations

from functrans.torch import _linalg


def cross(input, other, *, dim=-1, out=None):
    """torch.linalg.cross: the cross product of 3-vectors along dim (last by default),
    broadcast over the other dimensions (LinalgCrossBackward0)."""
    if out is not None:
        raise TypeError("functrans.torch.linalg.cross does not take out=; assign the result")
    return _linalg.cross(input, other, dim)
