"""torch.optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov and weight
decay, PyTorch's single-tensor update step for step."""

from __future__ import annotations

from functrans.torch.optim.optimizer import (
    Optimizer,
    check_scalar,
    check_unsupported,
    required,
    to_scalar,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD as PyTorch defines it:

        g <- -grad if maximize else grad;  g <- g + weight_decay * p
        buf <- g (first step) | momentum * buf + (1 - dampening) * g
        g <- g + momentum * buf (nesterov) | buf
        p <- p - lr * g
    """

    def __init__(self, params, lr=1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        check_unsupported("SGD", differentiable=differentiable, fused=fused)
        if lr is not required:
            check_scalar("learning rate", lr, not to_scalar(lr) < 0.0)
        check_scalar("momentum value", momentum, not momentum < 0.0)
        check_scalar("weight_decay value", weight_decay, not weight_decay < 0.0)
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """One SGD step; `closure` (optional) re-evaluates the loss, which is returned."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = to_scalar(group["lr"])
            momentum, dampening = group["momentum"], group["dampening"]
            weight_decay = group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad if not group["maximize"] else -p.grad
                if weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = grad.detach().clone()
                    else:
                        buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                    state["momentum_buffer"] = buf
                    grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
                p.add_(grad, alpha=-lr)
        return loss
