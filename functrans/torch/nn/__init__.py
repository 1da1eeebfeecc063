"""torch.nn, the small part autograd tutorials use: Parameter and the functional ops."""

from __future__ import annotations

from functrans.torch._tensor import Tensor, _init
from functrans.torch.nn import functional  # noqa: F401

__all__ = ["Parameter", "functional"]


class Parameter(Tensor):
    """A leaf tensor that requires grad by default."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        import numpy as np

        from functrans.torch._dtype import get_default_dtype
        value = np.zeros(0, get_default_dtype().dtype) if data is None else \
            getattr(data, "_value", np.asarray(data))
        _init(self, value, False, None, 0)
        self.requires_grad = requires_grad

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
