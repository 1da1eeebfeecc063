"""torch.autograd.functional: vjp, jacobian and hessian of functions of tensors, built from
`autograd.grad` (reverse mode, one row of the Jacobian per output element)."""

from __future__ import annotations

import numpy as np

from functrans.torch._tensor import Tensor, wrap

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


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


_STRATEGY_HINT = ('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If '
                  'your function has more outputs than inputs, "forward-mode" tends to be more '
                  'performant. Otherwise, prefer to use "reverse-mode".')


def _as_tuple(x, arg_name, fn_name):
    """PyTorch's check that `x` is a Tensor or a tuple of Tensors; (was_tuple, tuple)."""
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, el in enumerate(xs):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_tuple, xs


def _grad_preprocess(inputs, create_graph):
    """New tensor objects for the inputs: views that keep their history under create_graph,
    detached leaves requiring grad otherwise."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad
                 else x.detach().requires_grad_(True) for x in inputs)


def _check_outputs_require_grad(outputs, strict):
    if strict:
        for i, o in enumerate(outputs):
            if not o.requires_grad:
                raise RuntimeError(f"Output {i} of the user-provided function does not require "
                                   "gradients. The outputs must be computed in a differentiable "
                                   "manner from the input when running in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False):
    """autograd.grad of the outputs that require grad (None for every input if none does)."""
    from functrans.torch.autograd import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not live:
        return (None,) * len(inputs)
    return grad([o for o, _ in live], inputs, [g for _, g in live], retain_graph=True,
                create_graph=create_graph, allow_unused=True)


def _unpack(res, is_outputs_tuple, is_inputs_tuple):
    if not is_inputs_tuple:
        res = tuple(r[0] for r in res)
    return res if is_outputs_tuple else res[0]


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func(inputs) / d inputs, shaped output.shape + input.shape, one reverse pass per output
    element (`vectorize` and forward-mode give the same values the same way)."""
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    jac, is_outputs_tuple = _jacobian(func, ins, create_graph, strict, vectorize, strategy)
    return _unpack(jac, is_outputs_tuple, is_inputs_tuple)


def _jacobian(func, ins, create_graph, strict, vectorize, strategy, tangent_graph=False):
    """jacobian of a tuple of inputs: (one tuple per output, whether func returned a tuple).
    `tangent_graph`: the function makes its inputs require grad (hessian's outer Jacobian)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY_HINT)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            # sic: PyTorch's message lacks the space
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                      "Hessian isonly implemented for `vectorize=True`.")
        # PyTorch's forward tangents have history when the primal computation has: keep the
        # graph then, laid out as PyTorch's transposed batch of tangents is
        keep = tangent_graph or any(x.requires_grad for x in ins)
        jac, is_outputs_tuple = _jacobian(func, ins, keep, False, False, "reverse-mode")
        if keep:
            jac = tuple(tuple(_forward_layout(j, x) for j, x in zip(row, ins)) for row in jac)
        return jac, is_outputs_tuple
    from functrans.torch._creation import zeros_like
    from functrans.torch._grad_mode import enable_grad
    from functrans.torch._shape import stack
    with enable_grad():
        ins = _grad_preprocess(ins, create_graph)
        outputs = func(*ins)
        is_outputs_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function",
                                           "jacobian")
        _check_outputs_require_grad(outs, strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        jac = []
        for i, out in enumerate(outs):
            flat = out.reshape(-1)
            rows = tuple([] for _ in ins)
            for j in range(out.numel()):
                vj = _autograd_grad((flat[j],), ins, create_graph=create_graph)
                for k, (g, x) in enumerate(zip(vj, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not allowed "
                                               "in strict mode.")
                        g = zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError("The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    rows[k].append(g)
            jac.append(tuple(
                stack(r, 0).view(tuple(out.shape) + tuple(x.shape)) if r
                else zeros_like(x).reshape(tuple(out.shape) + tuple(x.shape))
                for r, x in zip(rows, ins)))
    if not create_graph:
        jac = [tuple(t.detach() for t in row) for row in jac]
    return tuple(jac), is_outputs_tuple


def _forward_layout(j, x):
    """J (out.shape + x.shape) recomposed as PyTorch's forward mode builds it: one tangent per
    input element, then permute and reshape."""
    n_out = j.ndim - x.ndim
    out_shape = tuple(j.shape[:n_out])
    tangents = j.reshape(-1, x.numel()).t().contiguous().view((x.numel(),) + out_shape)
    return tangents.permute(*range(1, tangents.ndim), 0).reshape(out_shape + tuple(x.shape))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its Jacobian."""
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*xs):
        out = func(*xs)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_outputs_require_grad(outs, strict)
        if is_out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)
        jac = jacobian(single_output, xs, create_graph=True)
        if strict:
            for i, j in enumerate(jac):
                if not j.requires_grad:
                    raise RuntimeError(
                        "While computing the hessian, found that the jacobian of the "
                        f"user-provided function with respect to input {i} is independent of "
                        "the input. This is not allowed in strict mode. You should ensure that "
                        "your function is twice differentiable and that the jacobian depends on "
                        "the inputs (this would be violated by a linear function for example).")
        return jac

    res, _ = _jacobian(jac_func, ins, create_graph, strict, vectorize, outer_jacobian_strategy,
                       tangent_graph=True)
    return _unpack(res, is_inputs_tuple, is_inputs_tuple)


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
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
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
