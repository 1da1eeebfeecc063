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
const-free). When those include tracers of enclosing transforms, the rules are staged too, at
call time, and their closed-over values become operands as well, so no rule ever holds a
tracer in a Python closure. For custom_jvp the derivatives of closed-over values flow through
the function's own program; for custom_vjp a differentiated closed-over value is an error,
since `bwd` cannot return its cotangent.
"""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, NamedTuple

import numpy as np

from functrans.core.avals import get_aval, is_float
from functrans.core.eval import eval_jaxpr
from functrans.core.ownership import unaliased, unaliased_tree
from functrans.core.pytree_fun import as_value
from functrans.core.staging import trace_to_jaxpr
from functrans.core.symbolic import Zero, is_undefined
from functrans.core.trace import Tracer, current_level
from functrans.errors import FunctransError, ShapeError
from functrans.primitives.elementwise import add_tangents
from functrans.primitives.registry import define
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.shape_ops import bdim_to_front, convert_element_type, moveaxis
from functrans.transforms.higher_order import (HIGHER_ORDER, OWNED_RESULTS, any_tracer,
                                               instantiate_zeros, level)
from functrans.transforms.toolkit import batch_jaxpr, batch_size, run, stage, transpose_jaxpr
from functrans.transforms.jvp import JVPTracer, jvp_jaxpr
from functrans.transforms.vmap import batch_flat
from functrans.tree_util import broadcast_prefix, tree_flatten, tree_unflatten

M = "../transforms/custom"


class CustomVJPForwardModeError(FunctransError, TypeError):
    """Forward-mode differentiation reached a custom_vjp function."""


class CustomVJPClosureError(FunctransError, TypeError):
    """A custom_vjp function closes over a value that is being differentiated."""


class CustomRuleClosureError(FunctransError, TypeError):
    """A custom rule returned a traced value of a transform it was not given."""


_local = threading.local()


def _staging_rules() -> set:
    """ids of the custom functions whose rules this thread is staging right now."""
    ids = getattr(_local, "ids", None)
    if ids is None:
        ids = _local.ids = set()
    return ids


def _max_level(xs) -> int:
    return max([level(x) for x in xs] + [0])


def _check_rule_outputs(outs, inputs, what, name):
    """A rule's outputs live no higher than its inputs; a higher one comes from a closure."""
    if _max_level(outs) > _max_level(inputs):
        raise CustomRuleClosureError(
            f"{name}: {what} returned a value traced by an enclosing transform that it was not "
            "given: it closes over a traced value (captured from an enclosing function) in a "
            "way this combination of transforms cannot follow. Pass that value to the "
            "function as an explicit argument instead.")


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
    """fn_flat(*args), staged first so that every closed-over tracer whose primal chain reaches
    one of `const_primals` (the primals of the call's closed-over operands, as this trace sees
    them) can be replaced by it: a Python rule closing over tracers of this very trace (or of
    one above it) then computes on the values this trace works with."""
    closed = trace_to_jaxpr(lambda *xs: [as_value(o, name) for o in fn_flat(*xs)],
                            [get_aval(a) for a in args], name=name)
    return eval_jaxpr(closed.jaxpr, [_substitute(c, const_primals) for c in closed.consts],
                      *args)


def _substitute(c, const_primals):
    x = c
    while isinstance(x, JVPTracer):
        x = x.primal
        for p in const_primals:
            if x is p:
                return p
    return c


def _split_ops(xs, *sizes):
    out, i = [], 0
    for n in sizes:
        out.append(list(xs[i:i + n]))
        i += n
    out.append(list(xs[i:]))
    return out


def _batch_front(vals, dims):
    """Batched operands with the batch axis first; unbatched ones stay as they are."""
    size = batch_size(vals, dims)
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    return vals, [None if d is None else 0 for d in dims], size


# --- custom_jvp --------------------------------------------------------------------------------

def _custom_jvp_call_impl(*args, call_jaxpr, jvp, num_consts, num_rule_consts, closes):
    consts, _, xs = _split_ops(args, num_consts, num_rule_consts)
    return run(call_jaxpr, *consts, *xs)


def _custom_jvp_call_abstract(*avals, call_jaxpr, jvp, num_consts, num_rule_consts,
                              closes):
    return list(call_jaxpr.out_avals)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, num_rule_consts,
                         closes):
    consts, rule_consts, args = _split_ops(primals, num_consts, num_rule_consts)
    # zero tangents stay symbolic (Zero): a rule defined with symbolic_zeros=True sees them
    t_args = list(tangents[num_consts + num_rule_consts:])
    if closes and not rule_consts:  # a Python rule over closed-over tracers
        def flat(*xs):
            o, t = jvp([], xs[:len(args)], xs[len(args):])
            return [*o, *instantiate_zeros(t)]

        t_args = instantiate_zeros(t_args)
        res = _closure_converted(flat, [*args, *t_args], consts, "custom_jvp rule")
        out, t_out = res[:len(res) // 2], res[len(res) // 2:]
    else:
        out, t_out = jvp(rule_consts, args, t_args)
    _check_rule_outputs(out, [*rule_consts, *args], "the JVP rule", "custom_jvp")
    out = unaliased(out, consts)  # the rule may return an array the function closes over
    _check_rule_outputs(t_out, [*rule_consts, *args, *t_args], "the JVP rule", "custom_jvp")
    t_out = [t if is_float(a.dtype) else Zero(a) for t, a in zip(t_out, call_jaxpr.out_avals)]
    const_nz = [type(t) is not Zero for t in tangents[:num_consts]]
    if any(const_nz):
        # closed-over values being differentiated: their effect flows through the function
        # (the rule's own use of them only scales tangents: a second-order term here)
        prog, out_nz = jvp_jaxpr(call_jaxpr, const_nz + [False] * len(args))
        t_consts = [t for t, nz in zip(tangents, const_nz) if nz]
        extra = iter(eval_jaxpr(prog.jaxpr, prog.consts, *consts, *args,
                                *t_consts)[len(out):])
        t_out = [add_tangents(t, next(extra)) if nz else t for t, nz in zip(t_out, out_nz)]
    return list(out), t_out


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, jvp, num_consts, num_rule_consts,
                               closes):
    # reached when a custom_jvp function is applied to tangents inside a linear program
    consts, _, xs = _split_ops(args, num_consts, num_rule_consts)
    linear_in = [is_undefined(a) for a in (*consts, *xs)]
    prog = transpose_jaxpr(call_jaxpr, linear_in)
    known = [a for a in (*consts, *xs) if not is_undefined(a)]
    res = iter(eval_jaxpr(prog.jaxpr, prog.consts, *known,
                          *instantiate_zeros(cts, call_jaxpr.out_avals)))
    cts_in = [next(res) if lin else None for lin in linear_in]
    return cts_in[:num_consts] + [None] * num_rule_consts + cts_in[num_consts:]


def _custom_jvp_call_batch(vals, dims, *, call_jaxpr, jvp, num_consts, num_rule_consts,
                           closes):
    vals, dims, size = _batch_front(vals, dims)
    c_dims, r_dims, a_dims = _split_ops(dims, num_consts, num_rule_consts)
    prog, consts, _ = batch_jaxpr(call_jaxpr, c_dims + a_dims, size, True)
    n_out, nr = len(call_jaxpr.out_avals), num_rule_consts

    def batched_jvp(rule_consts, primals, tangents):
        n = len(primals)
        tangents = instantiate_zeros(tangents)

        def flat(*xs):
            o, t = jvp(xs[:nr], xs[nr:nr + n], instantiate_zeros(xs[nr + n:]))
            return [*o, *instantiate_zeros(t)]

        # a tangent has its primal's shape, so it is batched where the primal is
        outs = batch_flat(flat, [*rule_consts, *primals, *tangents],
                          [*r_dims, *a_dims, *a_dims], [0] * (2 * n_out), size)
        return outs[:n_out], outs[n_out:]

    outs = custom_jvp_call_p.bind(*consts, *vals, call_jaxpr=prog, jvp=batched_jvp,
                                  num_consts=len(consts) + num_consts, num_rule_consts=nr,
                                  closes=closes)
    return outs, [0] * n_out


custom_jvp_call_p = define(
    "custom_jvp_call", module=M, impl=_custom_jvp_call_impl, abstract=_custom_jvp_call_abstract,
    jvp=_custom_jvp_call_jvp, transpose=_custom_jvp_call_transpose,
    batch=_custom_jvp_call_batch, multiple_results=True, props=HIGHER_ORDER,
    facts=OWNED_RESULTS)


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
        self.symbolic_zeros = False

    @property
    def _name(self):
        return f"custom_jvp function {getattr(self.fun, '__name__', repr(self.fun))!r}"

    def defjvp(self, jvp, symbolic_zeros: bool = False):
        """Set the rule `jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)`;
        primals and tangents are tuples of the differentiable arguments. With
        `symbolic_zeros=True` a tangent known to be zero arrives as a `SymbolicZero` (test
        with isinstance; `.instantiate()` makes the array) and the rule may return one, as
        in JAX; otherwise zero tangents arrive as arrays of zeros."""
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
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
        self.symbolic_zeros = False
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
            return unaliased_tree(self.fun(*args), args)
        prog, consts, out_tree = _stage_fun(self.fun, rebuild, leaves, in_tree, name)
        jvp_flat = _flat_jvp_rule(self.jvp, nondiff, in_tree, out_tree, prog.out_avals, name,
                                  self.symbolic_zeros)
        rule_consts = []
        # the rule may close over the same tracers: stage it now, with them as operands (a
        # call of this function inside its own rule keeps the rule as it is)
        if any_tracer(consts) and id(self) not in _staging_rules():
            _staging_rules().add(id(self))
            try:
                jvp_flat, rule_consts = _staged_jvp_rule(jvp_flat, leaves, len(prog.out_avals))
            finally:
                _staging_rules().discard(id(self))
        outs = custom_jvp_call_p.bind(*consts, *rule_consts, *leaves, call_jaxpr=prog,
                                      jvp=jvp_flat, num_consts=len(consts),
                                      num_rule_consts=len(rule_consts),
                                      closes=any_tracer(consts))
        return tree_unflatten(out_tree, outs)


def _staged_jvp_rule(jvp_flat, leaves, n_out):
    """The rule as a program whose closed-over values are leading operands."""
    avals = [get_aval(x) for x in leaves]
    n = len(avals)

    def flat(*xs):
        o, t = jvp_flat([], xs[:n], xs[n:])
        return [*o, *instantiate_zeros(t)]

    prog, rule_consts = stage(flat, avals + avals, "custom_jvp rule")

    def jvp(rc, primals, tangents):
        outs = eval_jaxpr(prog.jaxpr, [], *rc, *primals, *instantiate_zeros(tangents))
        return outs[:n_out], outs[n_out:]

    return jvp, rule_consts


def _flat_jvp_rule(rule, nondiff, in_tree, out_tree, out_avals, name, symbolic_zeros=False):
    def jvp_flat(rule_consts, primals, tangents):
        p = tree_unflatten(in_tree, list(primals))
        tangents = [SymbolicZero(t.aval) if type(t) is Zero else t for t in tangents] \
            if symbolic_zeros else instantiate_zeros(tangents)
        t = tree_unflatten(in_tree, tangents)
        res = rule(*nondiff, tuple(p), tuple(t))
        if not isinstance(res, tuple | list) or len(res) != 2:
            raise TypeError(f"{name}: the JVP rule must return a pair (primal_out, "
                            f"tangent_out), got {type(res).__name__}.")
        out, t_out = res
        out_leaves, ot = tree_flatten(out)
        t_leaves, tt = tree_flatten(t_out, is_leaf=lambda x: isinstance(x, SymbolicZero))
        for what, tree in (("primal output", ot), ("tangent output", tt)):
            if tree != out_tree:
                raise TypeError(f"{name}: the JVP rule's {what} has structure {tree}, but the "
                                f"function returns {out_tree}; they must match.")
        out_leaves = [_conform(o, a, f"primal output {i} of the JVP rule", name)
                      for i, (o, a) in enumerate(zip(out_leaves, out_avals))]
        t_leaves = [_conform(o, a, f"tangent output {i} of the JVP rule", name)
                    if is_float(a.dtype) and not isinstance(o, SymbolicZero) else Zero(a)
                    for i, (o, a) in enumerate(zip(t_leaves, out_avals))]
        return out_leaves, t_leaves

    return jvp_flat


class SymbolicZero:
    """A tangent known to be zero, as a custom_jvp rule defined with symbolic_zeros=True sees
    it (JAX's jax.custom_derivatives.SymbolicZero): shape and dtype of the zero, no array. A
    rule may return one for an output whose tangent is zero."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def __bool__(self):
        return False

    def instantiate(self):
        """The zero as an array."""
        return instantiate_zeros([Zero(self.aval)])[0]

    @staticmethod
    def from_primal_value(val):
        return SymbolicZero(get_aval(as_value(val, "SymbolicZero")))

    def __repr__(self):
        return f"SymbolicZero({self.aval})"


class CustomVJPPrimal(NamedTuple):
    """An argument of a custom_vjp fwd defined with symbolic_zeros=True (JAX's
    jax.custom_derivatives.CustomVJPPrimal): its value, and whether it is perturbed (its
    tangent may be nonzero; False when it is not being differentiated)."""

    value: Any
    perturbed: bool


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

def _custom_vjp_call_impl(*args, call_jaxpr, fwd, bwd, num_consts, num_fwd_consts,
                          num_bwd_consts, closes):
    consts, _, _, xs = _split_ops(args, num_consts, num_fwd_consts, num_bwd_consts)
    return run(call_jaxpr, *consts, *xs)


def _custom_vjp_call_abstract(*avals, call_jaxpr, fwd, bwd, num_consts, num_fwd_consts,
                              num_bwd_consts, closes):
    return list(call_jaxpr.out_avals)


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts,
                         num_fwd_consts, num_bwd_consts, closes):
    n_closed = num_consts + num_fwd_consts + num_bwd_consts
    if any(type(t) is not Zero for t in tangents[:n_closed]):
        raise CustomVJPClosureError(
            "a custom_vjp function (or its fwd/bwd) closes over a value that is being "
            "differentiated (a traced value captured from an enclosing function), and bwd "
            "cannot return a cotangent for it. Pass that value as an explicit argument of the "
            "function and return its cotangent from bwd.")
    consts, fwd_consts, bwd_consts, args = _split_ops(primals, num_consts, num_fwd_consts,
                                                      num_bwd_consts)
    t_args = tangents[n_closed:]
    mask = tuple(type(t) is not Zero for t in t_args)
    if closes and not fwd_consts and not bwd_consts:  # Python rules over closed-over tracers
        n_out = len(call_jaxpr.out_avals)
        res = _closure_converted(lambda *xs: [*sum(map(list, fwd([], xs, mask)), [])], args,
                                 consts, "custom_vjp fwd")
        out, residuals = res[:n_out], res[n_out:]
        bwd = _converted_bwd(bwd, residuals, call_jaxpr.out_avals, consts)
    else:
        out, residuals = fwd(fwd_consts, args, mask)
    _check_rule_outputs([*out, *residuals], [*fwd_consts, *args], "fwd", "custom_vjp")
    out = unaliased(out, consts)  # fwd may return an array the function closes over
    nb = len(bwd_consts)
    # bwd's own closed-over values travel with the residuals
    t_out = custom_lin_p.bind(*bwd_consts, *residuals, *[t for t, m in zip(t_args, mask) if m],
                              num_res=nb + len(residuals),
                              bwd=lambda res, cts: bwd(res[:nb], res[nb:], cts),
                              out_avals=tuple(call_jaxpr.out_avals), mask=mask)
    t_out = [t if is_float(a.dtype) else Zero(a) for t, a in zip(t_out, call_jaxpr.out_avals)]
    return list(out), t_out


def _converted_bwd(bwd, residuals, out_avals, const_primals):
    """bwd staged now, while the tracers it closes over are alive, each replaced as in
    `_closure_converted`."""
    n_res = len(residuals)
    closed = trace_to_jaxpr(
        lambda *xs: instantiate_zeros(bwd([], xs[:n_res], xs[n_res:])),
        [get_aval(r) for r in residuals] + list(out_avals), name="custom_vjp bwd")
    consts = [_substitute(c, const_primals) for c in closed.consts]
    return lambda bc, res, cts: eval_jaxpr(closed.jaxpr, consts, *res,
                                           *instantiate_zeros(cts, out_avals))


def _custom_vjp_call_batch(vals, dims, *, call_jaxpr, fwd, bwd, num_consts, num_fwd_consts,
                           num_bwd_consts, closes):
    vals, dims, size = _batch_front(vals, dims)
    c_dims, f_dims, b_dims, a_dims = _split_ops(dims, num_consts, num_fwd_consts,
                                                num_bwd_consts)
    prog, consts, _ = batch_jaxpr(call_jaxpr, c_dims + a_dims, size, True)
    n_out, nf, nb = len(call_jaxpr.out_avals), num_fwd_consts, num_bwd_consts
    n_res_box = []

    def batched_fwd(fwd_consts, args, perturbed=None):
        def flat(*xs):
            out, res = fwd(xs[:nf], xs[nf:], perturbed)
            n_res_box.append(len(res))
            return [*out, *res]

        outs = batch_flat(flat, [*fwd_consts, *args], [*f_dims, *a_dims],
                          lambda: [0] * (n_out + n_res_box[-1]), size)
        return outs[:n_out], outs[n_out:]

    def batched_bwd(bwd_consts, res, cts):
        nr = len(res)
        cts_in = batch_flat(
            lambda *xs: instantiate_zeros(bwd(xs[:nb], xs[nb:nb + nr], xs[nb + nr:])),
            [*bwd_consts, *res, *instantiate_zeros(cts)], [*b_dims, *[0] * (nr + len(cts))],
            [0] * len(a_dims), size)
        # an unbatched argument served every example: its cotangent sums over the batch
        return [reduce_sum(c, (0,)) if d is None else c for c, d in zip(cts_in, a_dims)]

    outs = custom_vjp_call_p.bind(*consts, *vals, call_jaxpr=prog, fwd=batched_fwd,
                                  bwd=batched_bwd, num_consts=len(consts) + num_consts,
                                  num_fwd_consts=nf, num_bwd_consts=nb, closes=closes)
    return outs, [0] * n_out


custom_vjp_call_p = define(
    "custom_vjp_call", module=M, impl=_custom_vjp_call_impl, abstract=_custom_vjp_call_abstract,
    jvp=_custom_vjp_call_jvp, batch=_custom_vjp_call_batch, multiple_results=True,
    props=HIGHER_ORDER, facts=OWNED_RESULTS)


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, mask):
    res = list(args[:num_res])
    # zero cotangents stay symbolic, typed (bwd defined with symbolic_zeros=True sees them)
    cts = [Zero(a) if type(c) is Zero else c for c, a in zip(cts, out_avals)]
    cts_in = bwd(res, cts)
    _check_rule_outputs(cts_in, [*res, *cts], "bwd", "custom_vjp")
    return [None] * num_res + [ct for ct, m in zip(cts_in, mask) if m]


def _custom_lin_batch(vals, dims, *, num_res, bwd, out_avals, mask):
    size = batch_size(vals, dims)
    vals = [bdim_to_front(v, d, size) for v, d in zip(vals, dims)]

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
        self.symbolic_zeros = False

    @property
    def _name(self):
        return f"custom_vjp function {getattr(self.fun, '__name__', repr(self.fun))!r}"

    def defvjp(self, fwd, bwd, symbolic_zeros: bool = False):
        """Set `fwd(*args) -> (out, residuals)` and `bwd(*nondiff_args, residuals, ct) ->
        tuple of cotangents, one per differentiable argument` (None means zero).
        With `symbolic_zeros=True`, as in JAX, each array leaf of fwd's arguments comes as a
        `CustomVJPPrimal(value, perturbed)` (perturbed: its tangent may be nonzero) and a zero
        output cotangent reaches bwd as a `SymbolicZero`."""
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = bool(symbolic_zeros)

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
            return unaliased_tree(self.fun(*args), args)
        prog, consts, out_tree = _stage_fun(self.fun, rebuild, leaves, in_tree, name)
        fwd_flat, bwd_flat = _flat_vjp_rules(self.fwd, self.bwd, nondiff, rebuild, in_tree,
                                             out_tree, prog.out_avals,
                                             [get_aval(x) for x in leaves], name,
                                             self.symbolic_zeros)
        fwd_consts, bwd_consts = [], []
        # fwd and bwd may close over the same tracers: stage them now, with them as operands
        # (a call of this function inside fwd keeps the rules as they are)
        if any_tracer(consts) and id(self) not in _staging_rules():
            _staging_rules().add(id(self))
            try:
                fwd_flat, bwd_flat, fwd_consts, bwd_consts = _staged_vjp_rules(
                    fwd_flat, bwd_flat, leaves, prog.out_avals)
            finally:
                _staging_rules().discard(id(self))
        outs = custom_vjp_call_p.bind(*consts, *fwd_consts, *bwd_consts, *leaves,
                                      call_jaxpr=prog, fwd=fwd_flat, bwd=bwd_flat,
                                      num_consts=len(consts), num_fwd_consts=len(fwd_consts),
                                      num_bwd_consts=len(bwd_consts),
                                      closes=any_tracer(consts))
        return tree_unflatten(out_tree, outs)


def _staged_vjp_rules(fwd_flat, bwd_flat, leaves, out_avals):
    """fwd and bwd as programs whose closed-over values are leading operands."""
    n_out = len(out_avals)
    fwd_prog, fwd_consts = stage(lambda *xs: [*sum(map(list, fwd_flat([], xs, None)), [])],
                                 [get_aval(x) for x in leaves], "custom_vjp fwd")
    res_avals = fwd_prog.out_avals[n_out:]
    n_res = len(res_avals)
    bwd_prog, bwd_consts = stage(
        lambda *xs: instantiate_zeros(bwd_flat([], xs[:n_res], xs[n_res:])),
        list(res_avals) + list(out_avals), "custom_vjp bwd")

    def fwd(fc, args, perturbed=None):  # staged with every argument perturbed
        outs = eval_jaxpr(fwd_prog.jaxpr, [], *fc, *args)
        return outs[:n_out], outs[n_out:]

    def bwd(bc, res, cts):
        return eval_jaxpr(bwd_prog.jaxpr, [], *bc, *res, *instantiate_zeros(cts, out_avals))

    return fwd, bwd, fwd_consts, bwd_consts


def _flat_vjp_rules(fwd, bwd, nondiff, rebuild, in_tree, out_tree, out_avals, in_avals, name,
                    symbolic_zeros=False):
    res_tree_box = []
    diff_args_tree = in_tree.children if hasattr(in_tree, "children") else None

    def fwd_flat(fwd_consts, xs, perturbed=None):
        """`perturbed` flags the arguments with a nonzero tangent (None: all of them)."""
        if symbolic_zeros:
            flags = perturbed if perturbed is not None else (True,) * len(xs)
            xs = [CustomVJPPrimal(x, bool(p)) for x, p in zip(xs, flags)]
        res = fwd(*rebuild(tree_unflatten(in_tree, list(xs))))
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

    def bwd_flat(bwd_consts, res, cts):
        residuals = tree_unflatten(res_tree_box[-1], list(res))
        cts = [SymbolicZero(c.aval) if type(c) is Zero else c for c in cts] \
            if symbolic_zeros else instantiate_zeros(cts, out_avals)
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
                flat += broadcast_prefix(o, dummy, is_leaf=lambda x: x is None
                                         or isinstance(x, SymbolicZero))
            except ValueError:
                raise TypeError(f"{name}: bwd's cotangent {i} has structure "
                                f"{tree_flatten(o)[1]} but argument {i} has structure {sub}."
                                ) from None
        return [Zero(a) if c is None or isinstance(c, SymbolicZero) or not is_float(a.dtype)
                else _conform(c, a, f"bwd cotangent for input leaf {k}", name)
                for k, (c, a) in enumerate(zip(flat, in_avals))]

    return fwd_flat, bwd_flat
