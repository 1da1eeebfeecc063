"""torch.nn: Module and its layers, containers, activations and losses, Parameter, init,
functional and utils, with PyTorch's names, registration rules and printing."""

from __future__ import annotations

from functrans.torch.nn import functional, init, modules, parameter, utils  # noqa: F401
from functrans.torch.nn.modules import *  # noqa: F401,F403
from functrans.torch.nn.parameter import Parameter

# the star import brought the family modules too; torch.nn reaches them as nn.modules.<family>
del activation, container, conv, flatten, linear, loss, module, pooling  # noqa: F821
del batchnorm, instancenorm, sparse  # noqa: F821

__all__ = ["Parameter", "functional", "init", "utils", "modules", "parameter",
           *(n for n in modules.__all__ if n[0].isupper())]
