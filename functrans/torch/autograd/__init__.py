"""torch.autograd: backward, grad, Function, gradcheck, and the grad-mode switches."""

from __future__ import annotations

import numpy as np

from functrans.torch._engine import run_backward
from functrans.torch._grad_mode import (  # noqa
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from functrans.torch._tensor import Tensor, wrap
from functrans.torch.autograd import functional  # noqa: F401
from functrans.torch.autograd.function import (  # noqa: F401
    Function,
    FunctionCtx,
    InplaceFunction,
    NestedIOFunction,
    once_differentiable,
)
from functrans.torch.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: F401

Variable = Tensor


def _tensors(x, what):
    if isinstance(x, Tensor):
        return (x,)
    if x is None:
        return None
    return tuple(x)


def _grads(grad_tensors, n, what):
    if grad_tensors is None:
        return [None] * n
    grads = [grad_tensors] if isinstance(grad_tensors, Tensor) else list(grad_tensors)
    if len(grads) != n:
        raise RuntimeError(f"{what} should be a sequence of length {n} (one per output), got "
                           f"{len(grads)}")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate the gradients of `tensors` into the `.grad` of the graph's leaves (or of
    `inputs` only)."""
    tensors = _tensors(tensors, "tensors")
    if grad_variables is not None:
        grad_tensors = grad_variables
    inputs = _tensors(inputs, "inputs")
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _grads(grad_tensors, len(tensors), "grad_tensors")
    if retain_graph is None:
        retain_graph = create_graph
    run_backward(tensors, grads, retain_graph=retain_graph, create_graph=create_graph,
                 inputs=inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated).

    >>> import functrans.torch as torch
    >>> a = torch.tensor([3.], requires_grad=True)
    >>> db_da = torch.autograd.grad(a * a * a, a, create_graph=True)[0]
    >>> torch.autograd.grad(db_da, a)[0]
    tensor([18.])
    """
    if is_grads_batched:
        raise NotImplementedError("functrans.torch.autograd.grad: is_grads_batched=True is not "
                                  "supported; loop over the batch of grad_outputs instead.")
    outputs = _tensors(outputs, "outputs")
    inputs = _tensors(inputs, "inputs")
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    grads = _grads(grad_outputs, len(outputs), "grad_outputs")
    if retain_graph is None:
        retain_graph = create_graph
    captured = run_backward(outputs, grads, retain_graph=retain_graph,
                            create_graph=create_graph, inputs=inputs, accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            result.append(wrap(np.zeros(t._value.shape, t._value.dtype))
                          if materialize_grads else None)
        elif isinstance(g, Tensor):
            result.append(g)
        else:
            g = np.asarray(g)
            result.append(wrap(g if g.flags.writeable and g.base is None else g.copy()))
    return tuple(result)


class set_detect_anomaly:
    """Accepted for compatibility; functrans.torch has no anomaly mode."""

    def __init__(self, mode=True, check_nan=True):
        self.mode = mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


detect_anomaly = set_detect_anomaly
