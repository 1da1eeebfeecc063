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


def _zeros_for_none(gs, like):
    return tuple(wrap(np.zeros(x._value.shape, x._value.dtype)) if g is None else g
                 for g, x in zip(gs, like))


def _result(ts, is_tuple, create_graph):
    ts = ts if create_graph else tuple(t.detach() for t in ts)
    return ts if is_tuple else ts[0]


def _v_or_ones(v, like, name):
    if v is not None:
        return _tuple(v)[0]
    if any(x._value.size != 1 for x in like):
        raise RuntimeError(f"The vector v can only be None if the input to the user-provided "
                           f"function is a single Tensor with a single element.")
    return tuple(wrap(np.ones(x._value.shape, x._value.dtype)) for x in like)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by the double-backward trick PyTorch uses: J v is the gradient,
    with respect to a dummy cotangent u, of u^T J applied to v."""
    from functrans.torch.autograd import grad
    ins, is_tuple = _tuple(inputs)
    ins = _prepare(ins, create_graph)
    vs = _v_or_ones(v, ins, "jvp")
    out = func(*ins)
    outs, out_tuple = _tuple(out)
    us = [wrap(np.zeros(o._value.shape, o._value.dtype), True) for o in outs]
    gs = grad(outs, ins, us, create_graph=True, allow_unused=True)
    pairs = [(g, w) for g, w in zip(gs, vs) if g is not None]
    if pairs:
        jv = grad([g for g, _ in pairs], us, [w for _, w in pairs], create_graph=create_graph,
                  allow_unused=True)
    else:
        jv = (None,) * len(us)
    jv = _zeros_for_none(jv, outs)
    return _result(tuple(outs), out_tuple, create_graph), _result(jv, out_tuple, create_graph)


def _scalar_out(func, ins, name):
    out = func(*ins)
    outs, _ = _tuple(out)
    if len(outs) != 1 or outs[0]._value.size != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain "
                           f"a single element")
    return outs[0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    from functrans.torch.autograd import grad
    ins, is_tuple = _tuple(inputs)
    ins = _prepare(ins, create_graph)
    vs = _v_or_ones(v, ins, "vhp")
    out = _scalar_out(func, ins, "vhp")
    gs = _zeros_for_none(grad(out, ins, create_graph=True, allow_unused=True), ins)
    live = [(g, w) for g, w in zip(gs, vs) if g._requires_grad]
    hv = grad([g for g, _ in live], ins, [w for _, w in live], create_graph=create_graph,
              allow_unused=True) if live else (None,) * len(ins)
    hv = _zeros_for_none(hv, ins)
    return _result((out,), False, create_graph), \
        _result(hv, is_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function (H is symmetric: the same as v^T H)."""
    return vhp(func, inputs, v, create_graph, strict)
