"""torch.optim.RMSprop: PyTorch's single-tensor RMSprop update (centered, momentum, weight decay,
maximize)."""

from __future__ import annotations

from functrans.torch import _creation as C
from functrans.torch._tensor import Tensor
from functrans.torch.optim.optimizer import (
    Optimizer,
    check_scalar,
    check_unsupported,
    lerp_,
    step_counter,
    to_scalar,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop as PyTorch computes it, per parameter:

        v <- alpha * v + (1 - alpha) * g * g;  avg <- sqrt(v) + eps
        (centered: gbar <- lerp(gbar, g, 1 - alpha), avg <- sqrt(v - gbar^2) + eps)
        p <- p - lr * g / avg, or with momentum: buf <- momentum * buf + g / avg, p <- p - lr*buf
    """

    def __init__(self, params, lr=1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_unsupported("RMSprop", capturable=capturable, differentiable=differentiable)
        check_scalar("learning rate", lr, 0.0 <= to_scalar(lr))
        check_scalar("epsilon value", eps, 0.0 <= eps)
        check_scalar("momentum value", momentum, 0.0 <= momentum)
        check_scalar("weight_decay value", weight_decay, 0.0 <= weight_decay)
        check_scalar("alpha value", alpha, 0.0 <= alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("momentum", 0), ("centered", False), ("foreach", None),
                               ("maximize", False), ("differentiable", False),
                               ("capturable", False)):
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = step_counter(p_state["step"])

    def step(self, closure=None):
        """One RMSprop step; `closure` (optional) re-evaluates the loss, which is returned."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = to_scalar(group["lr"]), group["alpha"], group["eps"]
            weight_decay, momentum = group["weight_decay"], group["momentum"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self.state[param]
                if len(state) == 0:
                    state["step"] = step_counter()
                    state["square_avg"] = C.zeros_like(param)
                    if momentum > 0:
                        state["momentum_buffer"] = C.zeros_like(param)
                    if group["centered"]:
                        state["grad_avg"] = C.zeros_like(param)
                grad = param.grad if not group["maximize"] else -param.grad
                square_avg = state["square_avg"]
                state["step"] += 1
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if group["centered"]:
                    grad_avg = lerp_(state["grad_avg"], grad, 1 - alpha)
                    avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(grad, avg)
                    param.add_(buf, alpha=-lr)
                else:
                    param.addcdiv_(grad, avg, value=-lr)
        return loss
