"""`custom_jvp`: a function with a user-supplied JVP rule, as in JAX (see the package docstring).
"""

from __future__ import annotations


from functrans.core.avals import get_aval, is_float
from functrans.core.eval import eval_jaxpr
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value
from functrans.core.symbolic import Zero, is_undefined
from functrans.primitives.elementwise import add_tangents
from functrans.primitives.registry import define
from functrans.transforms.higher_order import (HIGHER_ORDER, OWNED_RESULTS, any_tracer,
                                               instantiate_zeros)
from functrans.transforms.toolkit import batch_jaxpr, run, stage, transpose_jaxpr
from functrans.transforms.jvp import jvp_jaxpr
from functrans.transforms.vmap import batch_flat
from functrans.tree_util import tree_flatten, tree_unflatten
from functrans.transforms.custom._common import (SymbolicZero, _CustomFunction, _StagedCall,
                                                 _batch_front, _check_rule_outputs,
                                                 _closure_converted, _conform, _split_ops,
                                                 _staging_rules)



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
    "custom_jvp_call", impl=_custom_jvp_call_impl, abstract=_custom_jvp_call_abstract,
    jvp=_custom_jvp_call_jvp, transpose=_custom_jvp_call_transpose,
    batch=_custom_jvp_call_batch, multiple_results=True, props=HIGHER_ORDER,
    facts=OWNED_RESULTS)


class custom_jvp(_CustomFunction):
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

    kind = "custom_jvp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

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
        call = self._stage_call(args, kwargs)
        if not isinstance(call, _StagedCall):
            return call
        nondiff, leaves, in_tree, prog, consts, out_tree = (
            call.nondiff, call.leaves, call.in_tree, call.prog, call.consts, call.out_tree)
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


def _tree_add(a, b):
    from functrans.primitives.elementwise import add
    la, ta = tree_flatten(a)
    lb, _ = tree_flatten(b)
    return tree_unflatten(ta, [add(x, y) for x, y in zip(la, lb)])


def _tree_zeros_like(x):
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, instantiate_zeros([Zero(get_aval(as_value(v, "defjvps")))
                                                   for v in leaves]))
