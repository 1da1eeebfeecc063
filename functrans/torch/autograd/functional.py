"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp and hvp of functions of tensors,
built on `autograd.grad` as PyTorch builds them (jvp and hvp by the double-backward trick)."""

from __future__ import annotations

import numpy as np

from functrans.torch._creation import zeros_like
from functrans.torch._grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from functrans.torch._shape import stack
from functrans.torch._tensor import Tensor, wrap
from functrans.torch.autograd._gradients import grad, jacobian_rows

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]

_STRICT = " This is not allowed in strict mode."
# strict mode's errors: a tensor that does not require grad, by the stage that made it
_NO_GRAD = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when running "
               "in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function." + _STRICT,
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input." + _STRICT +
                " You should ensure that your function is twice differentiable and that the "
                "jacobian depends on the inputs (this would be violated by a linear function for "
                "example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input." + _STRICT + " You should ensure that your function "
               "is thrice differentiable and that the hessian depends on the inputs.",
}
# strict mode's errors: a gradient that is None, by the backward stage that found it
_INDEPENDENT = {
    "back": "The output of the user-provided function is independent of input {i}." + _STRICT,
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients." + _STRICT,
    "double_back": "The jacobian of the user-provided function is independent of input {i}."
                   + _STRICT,
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}
_FORWARD_ONLY = ("torch.autograd.functional.jacobian: `{0}=True` and `strategy=\"forward-mode\"` "
                 "are not supported together (yet). Please either set `{0}=False` or "
                 "`strategy=\"reverse-mode\"`.")
_STRATEGY = 'Expected strategy to be either "forward-mode" or "reverse-mode".'


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


def _grad_preprocess(inputs, create_graph, need_graph=True):
    """New input tensors: views keeping history under create_graph, else detached leaves."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad
                 else x.detach().requires_grad_(need_graph) for x in inputs)


def _inputs(inputs, create_graph, name):
    is_tuple, ins = _as_tuple(inputs, "inputs", name)
    return is_tuple, _grad_preprocess(ins, create_graph)


def _outputs(outputs, strict, name, scalar=False):
    """(whether a tuple, the outputs as one), checked for strict mode and, if `scalar`, size."""
    is_tuple, outs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outs, "outputs", strict)
    if scalar and is_tuple:
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if scalar and outs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                           "contain a single element")
    return is_tuple, outs


def _checked_v(v, other, is_other_tuple, create_graph, name, what="input"):
    """v, checked against `other` (vjp's outputs, jvp/vhp/hvp's inputs) as PyTorch does."""
    if v is None:
        if len(other) != 1 or other[0].numel() != 1:
            where = ("the input to the user-provided function is a single Tensor" if what ==
                     "input" else "the user-provided function returns a single Tensor")
            raise RuntimeError(f"The vector v can only be None if {where} with a single element.")
        return None
    _, v = _as_tuple(v, "v", name)
    v = _grad_preprocess(v, create_graph, need_graph=False)
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")
    return v


def _check_requires_grad(tensors, kind, strict):
    """In strict mode, PyTorch's error for a tensor None or not requiring grad (`kind`: stage)."""
    for i, t in enumerate(tensors if strict else ()):
        if t is None:
            raise RuntimeError(_INDEPENDENT["back"].format(i=i))
        if not t.requires_grad:
            raise RuntimeError(_NO_GRAD[kind].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False):
    """autograd.grad of the outputs that require grad (None for every input if none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not live:
        return (None,) * len(inputs)
    return grad([o for o, _ in live], inputs, [g for _, g in live], retain_graph=True,
                create_graph=create_graph, allow_unused=True)


def _filled(g, ref, strict, create_graph, independent, what, i):
    """g, or zeros like `ref` for None (in strict mode: the error `independent`, or another for
    a constant gradient under create_graph)."""
    if g is None:
        if strict:
            raise RuntimeError(independent)
        return zeros_like(ref)
    if strict and create_graph and not g.requires_grad:
        raise RuntimeError(f"The {what} of the user-provided function is independent of input "
                           f"{i}. This is not allowed in strict mode when create_graph=True.")
    return g


def _last_backward(outputs, inputs, v, refs, strict, create_graph, stage):
    """The last backward pass, None gradients filled with zeros like `refs` (see _filled)."""
    what = "hessian" if "double" in stage else "jacobian"
    with set_grad_enabled(create_graph or is_grad_enabled()):
        gs = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        return tuple(_filled(g, refs[i], strict, create_graph,
                             _INDEPENDENT[stage].format(i=i), what, i) for i, g in enumerate(gs))


def _result(ts, is_tuple, create_graph):
    ts = tuple(ts) if create_graph else tuple(t.detach() for t in ts)
    return ts if is_tuple else ts[0]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    with enable_grad():
        is_inputs_tuple, ins = _inputs(inputs, create_graph, "vjp")
        is_outputs_tuple, outs = _outputs(func(*ins), strict, "vjp")
        v = _checked_v(v, outs, is_outputs_tuple, create_graph, "vjp", what="output")
    res = _last_backward(outs, ins, v, ins, strict, create_graph, "back")
    return (_result(outs, is_outputs_tuple, create_graph),
            _result(res, is_inputs_tuple, create_graph))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by PyTorch's double-backward trick: J v = d(u^T J v)/du."""
    with enable_grad():
        is_inputs_tuple, ins = _inputs(inputs, create_graph, "jvp")
        v = _checked_v(v, ins, is_inputs_tuple, create_graph, "jvp")
        is_outputs_tuple, outs = _outputs(func(*ins), strict, "jvp")
        # u^T J is linear in u: any finite u gives the same second backward
        us = tuple(zeros_like(o, requires_grad=True) for o in outs)
        grad_inputs = _autograd_grad(outs, ins, us, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    res = _last_backward(grad_inputs, us, v, outs, strict, create_graph, "back_trick")
    return (_result(outs, is_outputs_tuple, create_graph),
            _result(res, is_outputs_tuple, create_graph))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func(inputs) / d inputs, shaped output.shape + input.shape, a backward per element."""
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    jac, is_outputs_tuple = _jacobian(func, ins, create_graph, strict, vectorize, strategy)
    if not is_inputs_tuple:
        jac = tuple(r[0] for r in jac)
    return jac if is_outputs_tuple else jac[0]


def _jacobian(func, ins, create_graph, strict, vectorize, strategy, tangent_graph=False):
    """(a tuple per output, whether func returned a tuple); `tangent_graph`: hessian's outer."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY + ' Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(_FORWARD_ONLY.format("create_graph"))
        if strict:
            raise RuntimeError(_FORWARD_ONLY.format("strict"))
        if not vectorize:  # sic: PyTorch's message lacks the space
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                      "Hessian isonly implemented for `vectorize=True`.")
        # PyTorch's forward tangents have history when the primal computation has: keep the
        # graph then, laid out as PyTorch's transposed batch of tangents is
        keep = tangent_graph or any(x.requires_grad for x in ins)
        jac, is_outputs_tuple = _jacobian(func, ins, keep, False, False, "reverse-mode")
        if keep:
            jac = tuple(tuple(_forward_layout(j, x) for j, x in zip(row, ins)) for row in jac)
        return jac, is_outputs_tuple
    with enable_grad():
        ins = _grad_preprocess(ins, create_graph)
        is_outputs_tuple, outs = _outputs(func(*ins), strict, "jacobian")
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        jac = []
        for i, out in enumerate(outs):
            rows = jacobian_rows(out, ins, create_graph) if out.requires_grad else \
                [(None,) * len(ins)] * out.numel()
            block = []
            for k, x in enumerate(ins):
                independent = (f"Output {i} of the user-provided function is independent of "
                               f"input {k}." + _STRICT)
                col = [_filled(r[k], x, strict, create_graph, independent, "jacobian", i)
                       for r in rows]
                # an empty output raises PyTorch's "stack expects a non-empty TensorList"
                block.append(stack(col, 0).view(tuple(out.shape) + tuple(x.shape)))
            jac.append(_result(block, True, create_graph))
    return tuple(jac), is_outputs_tuple


def _construct_standard_basis_for(tensors, tensor_numels):
    """The identity's (total numel, numel_i) block per tensor (a private helper PyTorch tests)."""
    assert len(tensors) == len(tensor_numels) > 0
    starts = np.cumsum((0, *tensor_numels))
    return tuple(wrap(np.ascontiguousarray(np.eye(starts[-1], dtype=t._value.dtype)[:, a:b]))
                 for t, a, b in zip(tensors, starts, starts[1:]))


def _forward_layout(j, x):
    """J (out.shape + x.shape) laid out as PyTorch's forward mode builds it."""
    out_shape = tuple(j.shape[:j.ndim - x.ndim])
    tangents = j.reshape(-1, x.numel()).t().contiguous().view((x.numel(),) + out_shape)
    return tangents.permute(*range(1, tangents.ndim), 0).reshape(out_shape + tuple(x.shape))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the Jacobian of its Jacobian."""
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY)

    def jac_func(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(x.requires_grad_(True) for x in xs)
        jac = jacobian(lambda *a: _outputs(func(*a), strict, "hessian", True)[1][0].squeeze(),
                       xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res, _ = _jacobian(jac_func, ins, create_graph, strict, vectorize, outer_jacobian_strategy,
                       tangent_graph=True)
    return res if is_inputs_tuple else res[0][0]


def _gradient_of_scalar(func, inputs, v, create_graph, strict, name):
    """(is_inputs_tuple, inputs, v, outputs, gradient) of a scalar function, with its graph."""
    is_inputs_tuple, ins = _inputs(inputs, create_graph, name)
    v = _checked_v(v, ins, is_inputs_tuple, create_graph, name)
    outs = _outputs(func(*ins), strict, name, scalar=True)[1]
    jac = _autograd_grad(outs, ins, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, ins, v, outs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    with enable_grad():
        is_inputs_tuple, ins, v, outs, jac = _gradient_of_scalar(func, inputs, v, create_graph,
                                                                 strict, "vhp")
    res = _last_backward(jac, ins, v, ins, strict, create_graph, "double_back")
    return _result(outs, False, create_graph), _result(res, is_inputs_tuple, create_graph)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar function, by PyTorch's double-backward trick."""
    with enable_grad():
        is_inputs_tuple, ins, v, outs, jac = _gradient_of_scalar(func, inputs, v, create_graph,
                                                                 strict, "hvp")
        grad_jac = tuple(zeros_like(x, requires_grad=True) for x in ins)
        double_back = _autograd_grad(jac, ins, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    res = _last_backward(double_back, grad_jac, v, ins, strict, create_graph, "double_back_trick")
    return _result(outs, False, create_graph), _result(res, is_inputs_tuple, create_graph)
