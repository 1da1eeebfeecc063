"""Dropout: zeroes each entry with probability p in training (torch.nn.functional.dropout),
passes its input through in evaluation (`module.eval()`)."""

from __future__ import annotations

from functrans.torch.nn import functional as F
from functrans.torch.nn.modules.module import Module

__all__ = ["Dropout"]


class Dropout(Module):
    """In training, each entry zeroed with probability p and the others scaled by 1 / (1 - p);
    the input itself in evaluation."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
