"""torch.nn: Module and its layers, containers, activations and losses, Parameter, init,
functional and utils, with PyTorch's names, registration rules and printing."""

from __future__ import annotations

from functrans.torch.nn import functional, init, utils  # noqa: F401
from functrans.torch.nn.modules import *  # noqa: F401,F403
from functrans.torch.nn.modules import activation, container, flatten, linear, loss, module
from functrans.torch.nn.parameter import Parameter  # noqa: F401

__all__ = ["Parameter", "functional", "init", "utils", "modules",
           *activation.__all__, *container.__all__, *flatten.__all__, *linear.__all__,
           *loss.__all__, "Module"]
__all__ = list(dict.fromkeys(__all__))
