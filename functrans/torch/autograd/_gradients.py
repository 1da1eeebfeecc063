"""torch.autograd.backward and grad, and the Jacobian by rows that functional and gradcheck use."""

from __future__ import annotations

import numpy as np

from functrans.torch._creation import zeros_like
from functrans.torch._engine import run_backward
from functrans.torch._shape import stack
from functrans.torch._tensor import Tensor, wrap
from functrans.torch.autograd.graph import GradientEdge


def _tensors(x):
    return (x,) if isinstance(x, Tensor | GradientEdge) else None if x is None else tuple(x)


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
    """Accumulate the gradients of `tensors` into the leaves' `.grad` (or `inputs`' only)."""
    tensors, inputs = _tensors(tensors), _tensors(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _grads(grad_tensors if grad_variables is None else grad_variables, len(tensors),
                   "grad_tensors")
    retain_graph = create_graph if retain_graph is None else retain_graph
    run_backward(tensors, grads, retain_graph=retain_graph, create_graph=create_graph,
                 inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, returned (not accumulated).

    >>> import functrans.torch as torch
    >>> a = torch.tensor([3.], requires_grad=True)
    >>> db_da = torch.autograd.grad(a * a * a, a, create_graph=True)[0]
    >>> torch.autograd.grad(db_da, a)[0]
    tensor([18.])
    """
    outputs = _tensors(outputs)
    if type(inputs) is dict:  # PyTorch answers a dict of inputs with a dict of gradients
        return dict(zip(inputs, grad(outputs, tuple(inputs.values()), grad_outputs, retain_graph,
                                     create_graph, only_inputs, allow_unused, is_grads_batched,
                                     materialize_grads)))
    inputs = _tensors(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    retain_graph = create_graph if retain_graph is None else retain_graph
    grads = _grads(grad_outputs, len(outputs), "grad_outputs")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    captured = run_backward(outputs, grads, retain_graph=retain_graph,
                            create_graph=create_graph, inputs=inputs, accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if materialize_grads and isinstance(t, GradientEdge):
                raise RuntimeError("materialize_grads cannot be used when the given input is a "
                                   "GradientEdge")
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            g = zeros_like(t, requires_grad=create_graph) if materialize_grads else None
        elif not isinstance(g, Tensor):
            g = np.asarray(g)
            g = wrap(g if g.flags.writeable and g.base is None else g.copy())
        result.append(g)
    return tuple(result)


def _batched_grad(outs, inputs, gos, retain_graph, create_graph, allow_unused, materialize):
    """grad with is_grads_batched=True: a backward per entry of the grad_outputs' first axis."""
    batch = None
    for i, (o, g) in enumerate(zip(outs, gos)):
        if g is None:
            continue
        if g.ndim == 0 or tuple(g.shape[1:]) != tuple(o.shape):
            first = g[0] if g.ndim else g  # PyTorch reports the first entry's trailing shape
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of torch.Size({list(first.shape[1:])}) "
                f"and output[{i}] has a shape of torch.Size({list(o.shape)}). If you only want "
                "some tensors in `grad_output` to be considered batched, consider using vmap.")
        batch = g.shape[0] if batch is None else batch
    if batch is None:  # nothing batched: an ordinary grad
        return grad(outs, inputs, gos, retain_graph, create_graph, allow_unused=allow_unused,
                    materialize_grads=materialize)
    rows = [grad(outs, inputs, [None if g is None else g[b] for g in gos],
                 retain_graph=retain_graph or b < batch - 1, create_graph=create_graph,
                 allow_unused=allow_unused)
            for b in range(batch)]
    result = []
    for x, col in zip(inputs, zip(*rows)):
        if col[0] is None:  # unused: materialized unbatched, as PyTorch does after its vmap
            st = zeros_like(x) if materialize else None
        else:
            st = stack(col)
            st = st.view(tuple(st.shape)) if create_graph else st.detach()
        result.append(st)
    return tuple(result)


def jacobian_rows(output: Tensor, inputs, create_graph: bool = False) -> list:
    """The Jacobian's rows: per element of `output`, its gradients for `inputs` (None: unused)."""
    v = output._value
    return [grad(output, inputs, wrap(np.eye(1, v.size, m, dtype=v.dtype).reshape(v.shape)),
                 retain_graph=True, create_graph=create_graph, allow_unused=True)
            for m in range(v.size)]
