"""torch.nn.Parameter: a leaf tensor that a Module registers when it is assigned as an attribute."""

from __future__ import annotations

from functrans.torch._tensor import Tensor, _init

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A tensor that is a module parameter: it holds `data`'s storage (no copy, as in PyTorch)
    and requires grad unless told otherwise.

    >>> import functrans.torch as torch
    >>> p = torch.nn.Parameter(torch.zeros(2))
    >>> p.requires_grad, p.is_leaf
    (True, True)
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from functrans.torch._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError("_make_subclass(): argument 'data' (position 2) must be Tensor, not "
                            f"{type(data).__name__}")
        if requires_grad and data._value.dtype.kind not in "fc":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        _init(self, data._value, False, None, 0)
        self.requires_grad = requires_grad

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.data.clone(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)
