"""torch.autograd.functional: vjp, jacobian and hessian of functions of tensors, built from
`autograd.grad` (reverse mode, one row of the Jacobian per output element)."""

from __future__ import annotations

import numpy as np

from functrans.torch._tensor import wrap


def _tuple(x):
    return (tuple(x), True) if isinstance(x, tuple | list) else ((x,), False)


def _prepare(inputs, create_graph):
    out = []
    for x in inputs:
        t = x.detach() if not create_graph or not x.requires_grad else x
        if not t.requires_grad:
            t = wrap(t._value, True) if not create_graph else t.detach().requires_grad_()
        out.append(t)
    return out


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    from functrans.torch.autograd import grad
    ins, is_tuple = _tuple(inputs)
    ins = _prepare(ins, create_graph)
    out = func(*ins)
    outs, out_tuple = _tuple(out)
    vs = _tuple(v)[0] if v is not None else [None] * len(outs)
    gs = grad(outs, ins, vs, create_graph=create_graph, allow_unused=True)
    gs = tuple(wrap(np.zeros(i._value.shape, i._value.dtype)) if g is None else g
               for g, i in zip(gs, ins))
    out_ret = out if create_graph else (tuple(o.detach() for o in outs) if out_tuple
                                         else outs[0].detach())
    return out_ret, (gs if is_tuple else gs[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func(inputs) / d inputs, shaped output.shape + input.shape."""
    from functrans.torch.autograd import grad
    ins, is_tuple = _tuple(inputs)
    ins = _prepare(ins, create_graph)
    out = func(*ins)
    outs, out_tuple = _tuple(out)
    result = []
    for o in outs:
        rows = [np.zeros((o._value.size,) + i._value.shape, i._value.dtype) for i in ins]
        row_tensors = [[] for _ in ins]
        for m in range(o._value.size):
            onehot = np.zeros(o._value.size, o._value.dtype)
            onehot[m] = 1
            gs = grad(o, ins, wrap(onehot.reshape(o._value.shape)), retain_graph=True,
                      create_graph=create_graph, allow_unused=True)
            for k, g in enumerate(gs):
                if g is not None:
                    rows[k][m] = g._value
                row_tensors[k].append(g)
        per_in = []
        for k, i in enumerate(ins):
            shape = o._value.shape + i._value.shape
            if create_graph:
                from functrans.torch._shape import stack
                gs = [g if g is not None else wrap(np.zeros(i._value.shape, i._value.dtype))
                      for g in row_tensors[k]]
                per_in.append(stack(gs).reshape(shape) if gs else wrap(rows[k].reshape(shape)))
            else:
                per_in.append(wrap(rows[k].reshape(shape)))
        result.append(tuple(per_in) if is_tuple else per_in[0])
    return tuple(result) if out_tuple else result[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its gradient."""
    from functrans.torch.autograd import grad
    ins, is_tuple = _tuple(inputs)

    def grad_fn(*xs):
        out = func(*xs)
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        gs = tuple(g if g is not None else wrap(np.zeros(x._value.shape, x._value.dtype))
                   for g, x in zip(gs, xs))
        return gs if is_tuple else gs[0]

    return jacobian(grad_fn, inputs, create_graph=create_graph)
