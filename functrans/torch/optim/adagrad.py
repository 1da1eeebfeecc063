"""torch.optim.Adagrad: PyTorch's single-tensor (dense) Adagrad update."""

from __future__ import annotations

from functrans.torch import _creation as C
from functrans.torch._tensor import Tensor
from functrans.torch.optim.optimizer import (
    Optimizer,
    check_scalar,
    check_unsupported,
    get_value,
    step_counter,
    to_scalar,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad as PyTorch computes it, per parameter:

        clr <- lr / (1 + (t - 1) * lr_decay);  s <- s + g * g
        p <- p - clr * g / (sqrt(s) + eps)
    """

    def __init__(self, params, lr=1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        check_unsupported("Adagrad", differentiable=differentiable, fused=fused)
        check_scalar("learning rate", lr, 0.0 <= to_scalar(lr))
        check_scalar("lr_decay value", lr_decay, 0.0 <= lr_decay)
        check_scalar("weight_decay value", weight_decay, 0.0 <= weight_decay)
        check_scalar("initial_accumulator_value value", initial_accumulator_value,
                     0.0 <= initial_accumulator_value)
        check_scalar("epsilon value", eps, 0.0 <= eps)
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        # unlike the others, Adagrad's state exists from the start (PyTorch's layout)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = step_counter()
                state["sum"] = C.full_like(p, initial_accumulator_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("foreach", None), ("maximize", False),
                               ("differentiable", False), ("fused", None)):
                group.setdefault(key, value)
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], Tensor):
                s["step"] = step_counter(s["step"])

    def step(self, closure=None):
        """One Adagrad step; `closure` (optional) re-evaluates the loss, which is returned."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, lr_decay = to_scalar(group["lr"]), group["lr_decay"]
            weight_decay, eps = group["weight_decay"], group["eps"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                step_t, state_sum = state["step"], state["sum"]
                step_t += 1
                step = get_value(step_t)
                grad = param.grad if not group["maximize"] else -param.grad
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum.addcmul_(grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                param.addcdiv_(grad, std, value=-clr)
        return loss
