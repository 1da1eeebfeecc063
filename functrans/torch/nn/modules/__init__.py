"""The modules of torch.nn, one file per family as in PyTorch."""

from functrans.torch.nn.modules.activation import *  # noqa: F401,F403
from functrans.torch.nn.modules.container import *  # noqa: F401,F403
from functrans.torch.nn.modules.flatten import *  # noqa: F401,F403
from functrans.torch.nn.modules.linear import *  # noqa: F401,F403
from functrans.torch.nn.modules.loss import *  # noqa: F401,F403
from functrans.torch.nn.modules.module import *  # noqa: F401,F403
