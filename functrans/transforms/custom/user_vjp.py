"""`custom_vjp`: a function with user-supplied forward and backward passes, as in JAX (see the
package docstring).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from functrans.core.avals import get_aval, is_float
from functrans.core.eval import eval_jaxpr
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value
from functrans.core.staging import trace_to_jaxpr
from functrans.core.symbolic import Zero
from functrans.primitives.registry import define
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.layout import bdim_to_front
from functrans.transforms.higher_order import (HIGHER_ORDER, OWNED_RESULTS, any_tracer,
                                               instantiate_zeros)
from functrans.transforms.taylor.programs import jet_call
from functrans.transforms.toolkit import batch_jaxpr, batch_size, run, stage
from functrans.transforms.vmap import batch_flat
from functrans.tree_util import broadcast_prefix, tree_flatten, tree_unflatten
from functrans.transforms.custom._common import (CustomVJPClosureError, SymbolicZero,
                                                 _CustomFunction, _StagedCall, _batch_front,
                                                 _check_rule_outputs, _closure_converted, _conform,
                                                 _forward_mode_error, _split_ops, _staging_rules,
                                                 _substitute)



class CustomVJPPrimal(NamedTuple):
    """An argument of a custom_vjp fwd defined with symbolic_zeros=True (JAX's
    jax.custom_derivatives.CustomVJPPrimal): its value, and whether it is perturbed (its
    tangent may be nonzero; False when it is not being differentiated)."""

    value: Any
    perturbed: bool


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


def _custom_vjp_call_taylor(primals, series, *, call_jaxpr, fwd, bwd, num_consts,
                            num_fwd_consts, num_bwd_consts, closes):
    # fwd/bwd define a reverse-mode rule only: Taylor series go through the function itself,
    # as in JAX's jet
    consts, _, _, xs = _split_ops(primals, num_consts, num_fwd_consts, num_bwd_consts)
    c_ser, _, _, x_ser = _split_ops(series, num_consts, num_fwd_consts, num_bwd_consts)
    return jet_call(call_jaxpr, [*consts, *xs], [*c_ser, *x_ser])


custom_vjp_call_p = define(
    "custom_vjp_call", impl=_custom_vjp_call_impl, abstract=_custom_vjp_call_abstract,
    jvp=_custom_vjp_call_jvp, batch=_custom_vjp_call_batch, multiple_results=True,
    taylor=_custom_vjp_call_taylor,
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
    "custom_lin", impl=_forward_mode_error,
    abstract=lambda *avals, num_res, bwd, out_avals, mask: list(out_avals),
    jvp=_forward_mode_error, transpose=_custom_lin_transpose, batch=_custom_lin_batch,
    multiple_results=True, props=HIGHER_ORDER)


class custom_vjp(_CustomFunction):
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

    kind = "custom_vjp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = None
        self.bwd = None

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
        call = self._stage_call(args, kwargs)
        if not isinstance(call, _StagedCall):
            return call
        nondiff, rebuild, leaves, in_tree, prog, consts, out_tree = call
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
