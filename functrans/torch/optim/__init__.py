"""torch.optim: PyTorch's optimisers and learning-rate schedulers on functrans.torch tensors.

Each optimiser runs PyTorch's single-tensor (CPU, non-foreach) update formulas in the same
order, as in-place ops on the parameters under `no_grad`, so a training loop takes PyTorch's
steps (to float rounding); `state_dict()` has PyTorch's layout.
`foreach=True` is accepted and runs the same single-tensor formulas (PyTorch's foreach kernels
differ from them only in rounding); `fused`, `capturable` and `differentiable` select kernels
not provided here and are refused with an `ArgumentError`.

>>> import functrans.torch as torch
>>> w = torch.tensor([1.0, 2.0], requires_grad=True)
>>> opt = torch.optim.SGD([w], lr=0.1)
>>> (w * w).sum().backward()
>>> opt.step()
>>> w
tensor([0.8000, 1.6000], requires_grad=True)
"""

from functrans.torch.optim import (  # noqa: F401  (modules, as torch.optim.adam etc.)
    adagrad,
    adam,
    lbfgs,
    lr_scheduler,
    optimizer,
    rmsprop,
    sgd,
)
from functrans.torch.optim.adagrad import Adagrad
from functrans.torch.optim.adam import Adam, AdamW
from functrans.torch.optim.lbfgs import LBFGS
from functrans.torch.optim.optimizer import Optimizer
from functrans.torch.optim.rmsprop import RMSprop
from functrans.torch.optim.sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "SGD", "adagrad", "adam",
           "lbfgs", "lr_scheduler", "optimizer", "rmsprop", "sgd"]
