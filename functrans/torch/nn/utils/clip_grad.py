"""Gradient clipping: by total norm (clip_grad_norm_) and by value (clip_grad_value_)."""

from __future__ import annotations

from collections.abc import Iterable

from functrans.torch import _creation as C
from functrans.torch import _reductions as RD
from functrans.torch import _shape as S
from functrans.torch._grad_mode import no_grad
from functrans.torch._tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _grads(parameters) -> tuple[list, list]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return params, [p.grad for p in params if p.grad is not None]


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The norm of the norms of `tensors`: the norm of all their entries as one vector."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return C.tensor(0.0)
    with no_grad():
        norms = [RD.norm(S.reshape(t, (-1,)), norm_type) for t in tensors]
        total = RD.norm(S.stack(norms), norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` "
                           "is non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale every .grad by max_norm / (total_norm + 1e-6) when that is below 1."""
    _, grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """Scale the gradients of `parameters` in place so that their total norm is at most
    max_norm; returns the total norm before clipping. (`foreach` is accepted and ignored.)"""
    params, grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach=None) -> None:
    """Clamp every gradient of `parameters` to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    _, grads = _grads(parameters)
    with no_grad():
        for g in grads:
            g.clamp_(min=-clip_value, max=clip_value)
