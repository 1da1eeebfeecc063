"""torch.optim.Adam and AdamW: PyTorch's single-tensor Adam update (amsgrad, maximize, coupled or
decoupled weight decay), in the same order of floating-point operations."""

from __future__ import annotations

from functrans.torch import _creation as C
from functrans.torch._elementwise import maximum
from functrans.torch._tensor import Tensor
from functrans.torch.optim.optimizer import (
    Optimizer,
    check_scalar,
    check_unsupported,
    get_value,
    lerp_,
    step_counter,
    to_scalar,
)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam as PyTorch computes it, per parameter:

        m <- lerp(m, g, 1 - beta1);  v <- beta2 * v + (1 - beta2) * g * g
        denom <- sqrt(v) / sqrt(1 - beta2^t) + eps   (v -> max(v_max, v) with amsgrad)
        p <- p - lr / (1 - beta1^t) * m / denom
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        name = "AdamW" if decoupled_weight_decay else "Adam"
        check_unsupported(name, capturable=capturable, differentiable=differentiable,
                          fused=fused)
        check_scalar("learning rate", lr, 0.0 <= to_scalar(lr))
        check_scalar("epsilon value", eps, 0.0 <= eps)
        check_scalar("beta parameter at index 0", betas[0], 0.0 <= betas[0] < 1.0)
        check_scalar("beta parameter at index 1", betas[1], 0.0 <= betas[1] < 1.0)
        check_scalar("weight_decay value", weight_decay, 0.0 <= weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        betas = tuple(to_scalar(b) for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("amsgrad", False), ("maximize", False), ("foreach", None),
                               ("capturable", False), ("differentiable", False),
                               ("decoupled_weight_decay", False), ("fused", None)):
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
                    p_state["step"] = step_counter(p_state["step"])

    def _state_of(self, p, amsgrad: bool) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = step_counter()
            state["exp_avg"] = C.zeros_like(p)
            state["exp_avg_sq"] = C.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = C.zeros_like(p)
        return state

    def step(self, closure=None):
        """One Adam step; `closure` (optional) re-evaluates the loss, which is returned."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr = to_scalar(group["lr"])
            weight_decay, eps, amsgrad = group["weight_decay"], group["eps"], group["amsgrad"]
            for param in group["params"]:
                if param.grad is None:
                    continue
                state = self._state_of(param, amsgrad)
                grad = param.grad if not group["maximize"] else -param.grad
                exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], \
                    state["step"]
                step_t += 1
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param.mul_(1 - lr * weight_decay)
                    else:
                        grad = grad.add(param, alpha=weight_decay)
                lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                step = get_value(step_t)
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                if amsgrad:
                    max_exp_avg_sq = state["max_exp_avg_sq"]
                    max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq))
                    denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                else:
                    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                param.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


class AdamW(Adam):
    """AdamW: Adam with decoupled weight decay (p <- p * (1 - lr * weight_decay) before the
    Adam update), PyTorch's defaults (weight_decay=1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
