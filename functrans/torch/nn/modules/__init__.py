"""The modules of torch.nn, one file per family as in PyTorch."""

from functrans.torch.nn.modules import (activation, container, conv, dropout, flatten, linear,
                                        loss, module, normalization, pooling)
from functrans.torch.nn.modules import batchnorm, instancenorm, sparse
from functrans.torch.nn.modules.activation import *  # noqa: F401,F403
from functrans.torch.nn.modules.container import *  # noqa: F401,F403
from functrans.torch.nn.modules.conv import *  # noqa: F401,F403
from functrans.torch.nn.modules.dropout import *  # noqa: F401,F403
from functrans.torch.nn.modules.flatten import *  # noqa: F401,F403
from functrans.torch.nn.modules.linear import *  # noqa: F401,F403
from functrans.torch.nn.modules.loss import *  # noqa: F401,F403
from functrans.torch.nn.modules.normalization import *  # noqa: F401,F403
from functrans.torch.nn.modules.pooling import *  # noqa: F401,F403
from functrans.torch.nn.modules.module import Module
from functrans.torch.nn.modules.batchnorm import *  # noqa: F401,F403
from functrans.torch.nn.modules.instancenorm import *  # noqa: F401,F403
from functrans.torch.nn.modules.sparse import *  # noqa: F401,F403

__all__ = list(dict.fromkeys([
    "Module", *activation.__all__, *container.__all__, *dropout.__all__, *flatten.__all__,
    *linear.__all__, *loss.__all__, *normalization.__all__, *conv.__all__, *pooling.__all__,
    "activation", "container", "conv", "dropout", "flatten", "linear", "loss", "module",
    "normalization", "pooling",
    *batchnorm.__all__, *instancenorm.__all__, *sparse.__all__, "batchnorm", "instancenorm",
    "sparse"]))
