"""User-supplied derivative rules: `custom_jvp` and `custom_vjp`, as in JAX.

A decorated function applied to traced values is staged into a program and bound as a call
primitive that also holds the user's rule:

  custom_jvp_call  its JVP rule calls the user's rule on the primals and (materialised)
                   tangents. Under linearize the rule's primal work lands on the trace below and
                   its tangent work is staged; when the rule itself is differentiated (a higher
                   derivative), its own derivative comes from the primitives it uses.
  custom_vjp_call  its JVP rule runs the user's `fwd` on the primals and returns, as tangent,
                   `custom_lin` applied to (residuals..., tangents...): a linear primitive whose
                   transpose calls the user's `bwd`. Under reverse mode the `custom_lin` equation
                   is staged into the linear program; pure forward mode reaches its impl, which
                   raises (as JAX does).

Values the function closes over become operands of the call (programs in params are
const-free). For custom_jvp their derivatives flow through the function's own program; for
custom_vjp a differentiated closed-over value is an error, since `bwd` cannot return its
cotangent.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from functrans.core.avals import get_aval, is_float
from functrans.core.eval import eval_jaxpr
from functrans.core.pytree_fun import as_value
from functrans.core.staging import trace_to_jaxpr
from functrans.core.symbolic import Zero, is_undefined
from functrans.core.trace import Tracer, current_level
from functrans.errors import FunctransError, ShapeError
from functrans.primitives.elementwise import add_tangents
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import bdim_to_front, convert_element_type
from functrans.transforms.control_flow.programs import (HIGHER_ORDER, any_tracer, batch_jaxpr,
                                                        batch_size, instantiate_zeros, run,
                                                        stage)
from functrans.transforms.jvp import JVPTracer, jvp_jaxpr
from functrans.transforms.transpose import transpose_jaxpr
from functrans.transforms.vmap import batch_flat
from functrans.tree_util import broadcast_prefix, tree_flatten, tree_unflatten

M = "../transforms/custom"


class CustomVJPForwardModeError(FunctransError, TypeError):
    """Forward-mode differentiation reached a custom_vjp function."""


class CustomVJPClosureError(FunctransError, TypeError):
    """A custom_vjp function closes over a value that is being differentiated."""


def _forward_mode_error(*_, **__):
    raise CustomVJPForwardModeError(
        "can't apply forward-mode differentiation (jvp, jacfwd, linearize, hessian) to a "
        "custom_vjp function: it defines only a reverse-mode rule. Use reverse mode (grad, vjp, "
        "jacrev), or define the function with custom_jvp, whose rule serves both modes.")


# --- shared plumbing -------------------------------------------------------------------------

def _resolve_args(fun, args, kwargs, name):
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{name}: keyword-only arguments {sorted(bound.kwargs)} are not "
                        "supported by custom derivative rules; make them positional.")
    return tuple(bound.args)


def _split_nondiff(args, nondiff_argnums, name):
    """(nondiff values, diff args, rebuild(diff args) -> full argument tuple)."""
    nums = sorted({a % len(args) for a in nondiff_argnums}) if args else []
    for a in nondiff_argnums:
        if not -len(args) <= a < len(args):
            raise ValueError(f"{name}: nondiff_argnums entry {a} is out of range for a call "
                             f"with {len(args)} positional arguments.")
    for i in nums:
        if any(isinstance(x, Tracer) for x in tree_flatten(args[i])[0]):
            raise TypeError(
                f"{name}: argument {i} is listed in nondiff_argnums but holds a traced value. "
                "nondiff_argnums are for static values (functions, ints, config); pass arrays as "
                "ordinary arguments (a zero tangent / None cotangent leaves them undifferentiated"
                ").")
    nondiff = [args[i] for i in nums]
    diff = [a for i, a in enumerate(args) if i not in nums]

    def rebuild(diff_args):
        it = iter(diff_args)
        return tuple(args[i] if i in nums else next(it) for i in range(len(args)))

    return nondiff, diff, rebuild


def _stage_fun(fun, rebuild, leaves, in_tree, name):
    """Stage fun on the avals of `leaves`: (const-free program, consts, output tree)."""
    box = []

    def fun_flat(*xs):
        out = fun(*rebuild(tree_unflatten(in_tree, xs)))
        out_leaves, out_tree = tree_flatten(out)
        box.append(out_tree)
        return [as_value(o, name) for o in out_leaves]

    prog, consts = stage(fun_flat, [get_aval(x) for x in leaves], name)
    return prog, consts, box[-1]


def _conform(x, aval, what, name):
    """`x` typed like `aval` (float dtypes converted), or an error naming both shapes."""
    x = as_value(x, name)
    xa = get_aval(x)
    if xa.shape != aval.shape:
        raise ShapeError(f"{name}: {what} has shape {xa.shape} but must have shape {aval.shape} "
                         f"(the shape of the value it pairs with).")
    if xa.dtype != aval.dtype:
        if not (is_float(xa.dtype) or np.issubdtype(xa.dtype, np.integer)) or \
                not is_float(aval.dtype):
            raise TypeError(f"{name}: {what} has dtype {xa.dtype.name} but must have dtype "
                            f"{aval.dtype.name}.")
        x = convert_element_type(x, aval.dtype)
    return x


def _closure_converted(fn_flat, args, const_primals, name):
    """Call fn_flat(*args) with every closed-over tracer of the differentiating trace replaced
    by its primal (identified through the call's own closed-over operands)."""
    closed = trace_to_jaxpr(lambda *xs: [as_value(o, name) for o in fn_flat(*xs)],
                            [get_aval(a) for a in args], name=name)

    return eval_jaxpr(closed.jaxpr, [_substitute(c, const_primals) for c in closed.consts],
                      *args)


def _substitute(c, const_primals):
    """A closed-over value seen from the rule of the trace whose operands' primals are
    `const_primals`: the tracer (at any level above) whose primal chain reaches one of them
    is replaced by it."""
    x = c
    while isinstance(x, JVPTracer):
        x = x.primal
        for p in const_primals:
            if x is p:
                return p
    return c


def _batch_all(vals, dims):
    size = batch_size(vals, dims)
    return [bdim_to_front(v, d, size) for v, d in zip(vals, dims)], size


# --- custom_jvp --------------------------------------------------------------------------------

def _custom_jvp_call_impl(*args, call_jaxpr, jvp, num_consts, closes):
    return run(call_jaxpr, *args)


def _custom_jvp_call_abstract(*avals, call_jaxpr, jvp, num_consts, closes):
    return list(call_jaxpr.out_avals)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, closes):
    nc = num_consts
    consts, args = primals[:nc], primals[nc:]
    t_args = instantiate_zeros(tangents[nc:])
    n_out = len(call_jaxpr.out_avals)
    if closes:
        def flat(*xs):
            o, t = jvp(xs[:len(args)], xs[len(args):])
            return [*o, *instantiate_zeros(t)]

        res = _closure_converted(flat, [*args, *t_args], consts, "custom_jvp")
        out, t_out = res[:n_out], res[n_out:]
    else:
        out, t_out = jvp(list(args), t_args)
    t_out = [Zero(a) if not is_float(a.dtype) else t
             for t, a in zip(t_out, call_jaxpr.out_avals)]
    const_nz = [type(t) is not Zero for t in tangents[:nc]]
    if any(const_nz):
        # closed-over values being differentiated: their effect flows through the function
        prog, out_nz = jvp_jaxpr(call_jaxpr, const_nz + [False] * len(args))
        t_consts = [t for t, nz in zip(tangents[:nc], const_nz) if nz]
        extra = iter(eval_jaxpr(prog.jaxpr, prog.consts, *primals, *t_consts)[n_out:])
        t_out = [add_tangents(t, next(extra)) if nz else t for t, nz in zip(t_out, out_nz)]
    return list(out), t_out


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, jvp, num_consts, closes):
    # reached when a custom_jvp function is applied to tangents inside a linear program
    linear_in = [is_undefined(a) for a in args]
    prog = transpose_jaxpr(call_jaxpr, linear_in)
    known = [a for a in args if not is_undefined(a)]
    res = iter(eval_jaxpr(prog.jaxpr, prog.consts, *known,
                          *instantiate_zeros(cts, call_jaxpr.out_avals)))
    return [next(res) if lin else None for lin in linear_in]


def _custom_jvp_call_batch(vals, dims, *, call_jaxpr, jvp, num_consts, closes):
    vals, size = _batch_all(vals, dims)
    prog, consts, _ = batch_jaxpr(call_jaxpr, [0] * len(vals), size, True)
    n_out = len(call_jaxpr.out_avals)

    def batched_jvp(primals, tangents):
        n = len(primals)
        def flat(*xs):
            o, t = jvp(xs[:n], instantiate_zeros(xs[n:]))
            return [*o, *instantiate_zeros(t)]

        outs = batch_flat(flat, [*primals, *tangents], [0] * (2 * n), [0] * (2 * n_out), size)
        return outs[:n_out], outs[n_out:]

    outs = custom_jvp_call_p.bind(*consts, *vals, call_jaxpr=prog, jvp=batched_jvp,
                                  num_consts=len(consts) + num_consts, closes=closes)
    return outs, [0] * n_out


custom_jvp_call_p = define(
    "custom_jvp_call", module=M, impl=_custom_jvp_call_impl, abstract=_custom_jvp_call_abstract,
    jvp=_custom_jvp_call_jvp, transpose=_custom_jvp_call_transpose,
    batch=_custom_jvp_call_batch, multiple_results=True, props=HIGHER_ORDER)


class custom_jvp:
    """A function with a user-defined JVP rule, used by every transform (jvp, grad, vmap, jit)
    and, when differentiated again, differentiated itself.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> @custom_jvp
    ... def log1pexp(x):
    ...     return fnp.log(1.0 + fnp.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     x, = primals
    ...     x_dot, = tangents
    ...     return log1pexp(x), x_dot * (1.0 - 1.0 / (1.0 + fnp.exp(x)))
    >>> float(ft.grad(log1pexp)(100.0))
    1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    @property
    def _name(self):
        return f"custom_jvp function {getattr(self.fun, '__name__', repr(self.fun))!r}"

    def defjvp(self, jvp):
        """Set the rule `jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`;
        primals and tangents are tuples of the differentiable arguments."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """Set one rule per argument, `jvp_i(x_dot_i, primal_out, *primals) -> tangent`
        contribution (None for an argument with no derivative); contributions add up."""
        if self.nondiff_argnums:
            raise TypeError(f"{self._name}: defjvps does not support nondiff_argnums; use "
                            "defjvp.")

        def jvp(primals, tangents):
            out = self(*primals)
            acc = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                contrib = rule(t, out, *primals)
                acc = contrib if acc is None else _tree_add(acc, contrib)
            if acc is None:
                acc = _tree_zeros_like(out)
            return out, acc

        self.jvp = jvp
        return jvp

    def __call__(self, *args, **kwargs):
        name = self._name
        if self.jvp is None:
            raise TypeError(f"{name} has no JVP rule: define one with "
                            f"@{getattr(self.fun, '__name__', 'f')}.defjvp before calling it.")
        args = _resolve_args(self.fun, args, kwargs, name)
        nondiff, diff, rebuild = _split_nondiff(args, self.nondiff_argnums, name)
        leaves, in_tree = tree_flatten(tuple(diff))
        leaves = [as_value(x, name) for x in leaves]
        if current_level() == 0:  # no transform active: nothing to differentiate
            return self.fun(*args)
        prog, consts, out_tree = _stage_fun(self.fun, rebuild, leaves, in_tree, name)
        jvp_flat = _flat_jvp_rule(self.jvp, nondiff, in_tree, out_tree, prog.out_avals, name)
        outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=prog, jvp=jvp_flat,
                                      num_consts=len(consts), closes=any_tracer(consts))
        return tree_unflatten(out_tree, outs)


def _flat_jvp_rule(rule, nondiff, in_tree, out_tree, out_avals, name):
    def jvp_flat(primals, tangents):
        p = tree_unflatten(in_tree, list(primals))
        t = tree_unflatten(in_tree, list(tangents))
        res = rule(*nondiff, tuple(p), tuple(t))
        if not isinstance(res, tuple | list) or len(res) != 2:
            raise TypeError(f"{name}: the JVP rule must return a pair (primal_out, "
                            f"tangent_out), got {type(res).__name__}.")
        out, t_out = res
        out_leaves, ot = tree_flatten(out)
        t_leaves, tt = tree_flatten(t_out)
        for what, tree in (("primal output", ot), ("tangent output", tt)):
            if tree != out_tree:
                raise TypeError(f"{name}: the JVP rule's {what} has structure {tree}, but the "
                                f"function returns {out_tree}; they must match.")
        out_leaves = [_conform(o, a, f"primal output {i} of the JVP rule", name)
                      for i, (o, a) in enumerate(zip(out_leaves, out_avals))]
        t_leaves = [_conform(o, a, f"tangent output {i} of the JVP rule", name)
                    if is_float(a.dtype) else Zero(a)
                    for i, (o, a) in enumerate(zip(t_leaves, out_avals))]
        return out_leaves, t_leaves

    return jvp_flat


def _tree_add(a, b):
    from functrans.primitives.elementwise import add
    la, ta = tree_flatten(a)
    lb, _ = tree_flatten(b)
    return tree_unflatten(ta, [add(x, y) for x, y in zip(la, lb)])


def _tree_zeros_like(x):
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, instantiate_zeros([Zero(get_aval(as_value(v, "defjvps")))
                                                   for v in leaves]))


# --- custom_vjp --------------------------------------------------------------------------------

def _custom_vjp_call_impl(*args, call_jaxpr, fwd, bwd, num_consts, closes):
    return run(call_jaxpr, *args)


def _custom_vjp_call_abstract(*avals, call_jaxpr, fwd, bwd, num_consts, closes):
    return list(call_jaxpr.out_avals)


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts, closes):
    nc = num_consts
    if any(type(t) is not Zero for t in tangents[:nc]):
        raise CustomVJPClosureError(
            "a custom_vjp function closes over a value that is being differentiated (a traced "
            "value captured from an enclosing function), and its bwd rule cannot return a "
            "cotangent for it. Pass that value as an explicit argument of the function and "
            "return its cotangent from bwd.")
    consts, args = primals[:nc], primals[nc:]
    n_out = len(call_jaxpr.out_avals)
    if closes:
        res = _closure_converted(lambda *xs: [*sum(map(list, fwd(*xs)), [])], list(args),
                                 consts, "custom_vjp")
        out, residuals = res[:n_out], res[n_out:]
        bwd = _converted_bwd(bwd, residuals, call_jaxpr.out_avals, consts)
    else:
        out, residuals = fwd(*args)
    t_args = tangents[nc:]
    mask = tuple(type(t) is not Zero for t in t_args)
    t_out = custom_lin_p.bind(*residuals, *[t for t, m in zip(t_args, mask) if m],
                              num_res=len(residuals), bwd=bwd,
                              out_avals=tuple(call_jaxpr.out_avals), mask=mask)
    t_out = [t if is_float(a.dtype) else Zero(a) for t, a in zip(t_out, call_jaxpr.out_avals)]
    return list(out), t_out


def _converted_bwd(bwd, residuals, out_avals, consts):
    """bwd staged now, while the closed-over tracers it may read are alive, with those of the
    differentiating trace replaced by their primals."""
    n_res = len(residuals)
    res_avals = [get_aval(r) for r in residuals]
    closed = trace_to_jaxpr(
        lambda *xs: instantiate_zeros(bwd(list(xs[:n_res]), list(xs[n_res:]))),
        res_avals + list(out_avals), name="custom_vjp bwd")

    consts_sub = [_substitute(c, consts) for c in closed.consts]
    return lambda res, cts: eval_jaxpr(closed.jaxpr, consts_sub, *res, *cts)


def _custom_vjp_call_batch(vals, dims, *, call_jaxpr, fwd, bwd, num_consts, closes):
    vals, size = _batch_all(vals, dims)
    prog, consts, _ = batch_jaxpr(call_jaxpr, [0] * len(vals), size, True)
    n_out = len(call_jaxpr.out_avals)
    n_res_box = []

    def batched_fwd(*args):
        def flat(*xs):
            out, res = fwd(*xs)
            n_res_box.append(len(res))
            return [*out, *res]

        outs = batch_flat(flat, list(args), [0] * len(args),
                          lambda: [0] * (n_out + n_res_box[-1]), size)
        return outs[:n_out], outs[n_out:]

    def batched_bwd(res, cts):
        nr = len(res)
        return batch_flat(lambda *xs: instantiate_zeros(bwd(list(xs[:nr]), list(xs[nr:]))),
                          [*res, *instantiate_zeros(cts)], [0] * (nr + len(cts)),
                          lambda: [0] * (len(vals) - num_consts), size)

    outs = custom_vjp_call_p.bind(*consts, *vals, call_jaxpr=prog, fwd=batched_fwd,
                                  bwd=batched_bwd, num_consts=len(consts) + num_consts,
                                  closes=closes)
    return outs, [0] * n_out


custom_vjp_call_p = define(
    "custom_vjp_call", module=M, impl=_custom_vjp_call_impl, abstract=_custom_vjp_call_abstract,
    jvp=_custom_vjp_call_jvp, batch=_custom_vjp_call_batch, multiple_results=True,
    props=HIGHER_ORDER)


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, mask):
    res = list(args[:num_res])
    cts_in = bwd(res, instantiate_zeros(cts, out_avals))
    return [None] * num_res + [ct for ct, m in zip(cts_in, mask) if m]


def _custom_lin_batch(vals, dims, *, num_res, bwd, out_avals, mask):
    vals, size = _batch_all(vals, dims)

    def batched_bwd(res, cts):
        nr = len(res)
        return batch_flat(lambda *xs: instantiate_zeros(bwd(list(xs[:nr]), list(xs[nr:]))),
                          [*res, *instantiate_zeros(cts)], [0] * (nr + len(cts)),
                          lambda: [0] * len(mask), size)

    out_avals_b = tuple(a.update(shape=(size, *a.shape)) for a in out_avals)
    outs = custom_lin_p.bind(*vals, num_res=num_res, bwd=batched_bwd, out_avals=out_avals_b,
                             mask=mask)
    return outs, [0] * len(outs)


custom_lin_p = define(
    "custom_lin", module=M, impl=_forward_mode_error,
    abstract=lambda *avals, num_res, bwd, out_avals, mask: list(out_avals),
    jvp=_forward_mode_error, transpose=_custom_lin_transpose, batch=_custom_lin_batch,
    multiple_results=True, props=HIGHER_ORDER)


class custom_vjp:
    """A function with a user-defined reverse-mode rule: `fwd` returns the output and residuals,
    `bwd(residuals, output cotangent)` returns one cotangent per argument (None for zero).
    Works under grad, vjp, vmap and jit; forward mode raises, as in JAX.

    >>> import functrans as ft
    >>> @custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def fwd(x):
    ...     return x, None
    >>> def bwd(_, g):
    ...     return (ft.numpy.clip(g, -1.0, 1.0),)
    >>> clip_gradient.defvjp(fwd, bwd)
    >>> float(ft.grad(lambda x: 5.0 * clip_gradient(x))(2.0))
    1.0
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = None
        self.bwd = None

    @property
    def _name(self):
        return f"custom_vjp function {getattr(self.fun, '__name__', repr(self.fun))!r}"

    def defvjp(self, fwd, bwd):
        """Set `fwd(*args) -> (out, residuals)` and `bwd(*nondiff_args, residuals, ct) ->
        tuple of cotangents, one per differentiable argument` (None means zero)."""
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args, **kwargs):
        name = self._name
        if self.fwd is None:
            raise TypeError(f"{name} has no VJP rule: define one with "
                            f"{getattr(self.fun, '__name__', 'f')}.defvjp(fwd, bwd) before "
                            "calling it.")
        args = _resolve_args(self.fun, args, kwargs, name)
        nondiff, diff, rebuild = _split_nondiff(args, self.nondiff_argnums, name)
        leaves, in_tree = tree_flatten(tuple(diff))
        leaves = [as_value(x, name) for x in leaves]
        if current_level() == 0:  # no transform active: nothing to differentiate
            return self.fun(*args)
        prog, consts, out_tree = _stage_fun(self.fun, rebuild, leaves, in_tree, name)
        fwd_flat, bwd_flat = _flat_vjp_rules(self.fwd, self.bwd, nondiff, rebuild, in_tree,
                                             out_tree, prog.out_avals,
                                             [get_aval(x) for x in leaves], name)
        outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=prog, fwd=fwd_flat,
                                      bwd=bwd_flat, num_consts=len(consts),
                                      closes=any_tracer(consts))
        return tree_unflatten(out_tree, outs)


def _flat_vjp_rules(fwd, bwd, nondiff, rebuild, in_tree, out_tree, out_avals, in_avals, name):
    res_tree_box = []
    diff_args_tree = in_tree.children if hasattr(in_tree, "children") else None

    def fwd_flat(*xs):
        res = fwd(*rebuild(tree_unflatten(in_tree, xs)))
        if not isinstance(res, tuple | list) or len(res) != 2:
            raise TypeError(f"{name}: fwd must return a pair (output, residuals), got "
                            f"{type(res).__name__}.")
        out, residuals = res
        out_leaves, ot = tree_flatten(out)
        if ot != out_tree:
            raise TypeError(f"{name}: fwd's output has structure {ot} but the function returns "
                            f"{out_tree}; they must match.")
        out_leaves = [_conform(o, a, f"fwd output {i}", name)
                      for i, (o, a) in enumerate(zip(out_leaves, out_avals))]
        res_leaves, res_tree = tree_flatten(residuals)
        res_tree_box.append(res_tree)
        return out_leaves, [as_value(r, f"{name} residuals") for r in res_leaves]

    def bwd_flat(res, cts):
        residuals = tree_unflatten(res_tree_box[-1], list(res))
        ct = tree_unflatten(out_tree, list(cts))
        out = bwd(*nondiff, residuals, ct)
        n_args = len(diff_args_tree)
        if not isinstance(out, tuple | list) or len(out) != n_args:
            got = f"a {type(out).__name__} of length {len(out)}" \
                if isinstance(out, tuple | list) else type(out).__name__
            raise TypeError(f"{name}: bwd must return a tuple with one cotangent per "
                            f"differentiable argument ({n_args}), got {got}. Return e.g. "
                            "(x_ct,) for a single argument; None stands for a zero cotangent.")
        flat = []
        for i, (o, sub) in enumerate(zip(out, diff_args_tree)):
            dummy = tree_unflatten(sub, [0] * sub.num_leaves)
            try:
                flat += broadcast_prefix(o, dummy, is_leaf=lambda x: x is None)
            except ValueError:
                raise TypeError(f"{name}: bwd's cotangent {i} has structure "
                                f"{tree_flatten(o)[1]} but argument {i} has structure {sub}."
                                ) from None
        return [Zero(a) if c is None or not is_float(a.dtype)
                else _conform(c, a, f"bwd cotangent for input leaf {k}", name)
                for k, (c, a) in enumerate(zip(flat, in_avals))]

    return fwd_flat, bwd_flat
