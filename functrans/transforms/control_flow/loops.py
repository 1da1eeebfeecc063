"""`while_loop` and `fori_loop`.

The primitive `while` holds a predicate program (cond_consts..., carry...) -> bool[] and a body
program (body_consts..., carry...) -> carry..., and takes (cond_consts..., body_consts...,
carry...). Its rules:
  jvp        one loop over (carry, carry tangents), with a fixpoint over which tangents are
             nonzero. Under linearize the primal loop runs apart and the tangent loop, which
             recomputes the primal, is staged;
  transpose  none: the trip count is only known at run time, so reverse mode raises an error
             that points to fori_loop with static bounds and scan;
  batch      the body batched with a fixpoint over batched carries; a batched predicate runs
             the loop until every example is done, updating only the examples still running.

`fori_loop` with static (concrete integer) bounds is a `scan`, so it is reverse-differentiable;
with traced bounds it is a `while`.
"""

from __future__ import annotations

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.eval import eval_jaxpr
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value
from functrans.core.symbolic import Zero
from functrans.core.trace import Tracer
from functrans.errors import DTypeError, FunctransError
from functrans.primitives.elementwise import gt_p, lt_p, select
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import convert_element_type
from functrans.primitives.layout import broadcast_in_dim, moveaxis, reshape
from functrans.transforms.higher_order import (HIGHER_ORDER, OWNED_RESULTS, any_tracer, carry_fix,
                                               instantiate_zeros, promote_weak_carry)
from functrans.transforms.toolkit import (batch_jaxpr, batch_size, hoist, permute, run, split_list,
                                          stage, stage_tree, with_extra_inputs)
from functrans.transforms.control_flow.scans import scan
from functrans.transforms.taylor.programs import (carries, float_flags, jet_call, pack,
                                                series_order, unpack)
from functrans.transforms.jvp import jvp_jaxpr
from functrans.tree_util import tree_flatten, tree_unflatten



class WhileLoopReverseModeError(FunctransError, TypeError):
    """Reverse-mode differentiation reached a while_loop."""


# --- the primitive ---------------------------------------------------------------------------

def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = split_list(args, [cond_nconsts, body_nconsts,
                                      len(args) - cond_nconsts - body_nconsts])
    while run(cond_jaxpr, *cc, *carry, loop_body=True)[0]:
        carry = run(body_jaxpr, *bc, *carry, loop_body=True)
    return unaliased(carry, args)  # a carry the body passed through is still an operand


def _while_abstract(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cc, bc, carry = split_list(avals, [cond_nconsts, body_nconsts,
                                       len(avals) - cond_nconsts - body_nconsts])
    if list(cond_jaxpr.in_avals) != [*cc, *carry] or \
            list(body_jaxpr.in_avals) != [*bc, *carry] or \
            list(body_jaxpr.out_avals) != list(carry):
        raise TypeError(f"while: operands {[str(a) for a in avals]} do not fit the predicate "
                        f"{[str(a) for a in cond_jaxpr.in_avals]} and body "
                        f"{[str(a) for a in body_jaxpr.in_avals]} programs.")
    return list(carry)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    nk = len(primals) - ncc - nbc
    cc, bc, carry = split_list(primals, [ncc, nbc, nk])
    _, t_bc, t_carry = split_list(tangents, [ncc, nbc, nk])
    bc_nz = [type(t) is not Zero for t in t_bc]
    carry_nz = [type(t) is not Zero for t in t_carry]
    while True:  # fixpoint: a carry is differentiated if its tangent can ever be nonzero
        body_jvp, out_nz = jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, instantiate=carry_nz)
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            break
        carry_nz = new
    if not any(carry_nz):
        out = while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                           cond_nconsts=ncc, body_nconsts=nbc)
        return out, [Zero(get_aval(o)) for o in out]
    # body_jvp takes (bc, carry, bc tangents, carry tangents); the loop wants its consts first
    n_tb, n_tk = sum(bc_nz), sum(carry_nz)
    body_jvp = permute(body_jvp, in_order=[*range(nbc), *range(nbc + nk, nbc + nk + n_tb),
                                           *range(nbc, nbc + nk),
                                           *range(nbc + nk + n_tb, nbc + nk + n_tb + n_tk)])
    body_jvp, jvp_consts = hoist(body_jvp)
    t_avals = [a for a, nz in zip(body_jaxpr.out_avals, carry_nz) if nz]
    cond_aug = with_extra_inputs(cond_jaxpr, t_avals, len(cond_jaxpr.in_avals))
    t_b = [t for t, nz in zip(t_bc, bc_nz) if nz]
    t_k = instantiate_zeros([t for t, nz in zip(t_carry, carry_nz) if nz])
    outs = while_p.bind(*cc, *jvp_consts, *bc, *t_b, *carry, *t_k, cond_jaxpr=cond_aug,
                        body_jaxpr=body_jvp, cond_nconsts=ncc,
                        body_nconsts=len(jvp_consts) + nbc + n_tb)
    primal_out, t_iter = outs[:nk], iter(outs[nk:])
    t_out = [next(t_iter) if nz else Zero(get_aval(p)) for p, nz in zip(primal_out, carry_nz)]
    # The primal outputs come from a loop of their own unless everything is concrete (eager
    # forward mode): staged, the loop above reads tangents, and a primal output must not
    # (under linearize that loop is staged into the linear program, above the primals).
    if any_tracer([*primals, *t_b, *t_k]):
        primal_out = while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                                  cond_nconsts=ncc, body_nconsts=nbc)
    return primal_out, t_out


def _while_transpose(cts, *args, **params):
    raise WhileLoopReverseModeError(
        "Reverse-mode differentiation (grad, vjp, jacrev) of while_loop is not supported: its "
        "trip count is only known at run time, so the values each iteration needs on the way "
        "back cannot be stored. Use fori_loop with static bounds (Python ints; it becomes a "
        "scan) or scan with a fixed length, or differentiate in forward mode (jvp, jacfwd).")


def _any(pred):
    """True where any example of the batched predicate (axis 0) is still running."""
    return gt_p.bind(reduce_sum(convert_element_type(pred, np.int32), (0,)),
                     np.zeros((), np.int32))


def _while_batch(vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    nk = len(vals) - ncc - nbc
    size = batch_size(vals, dims)
    cc, bc, carry = split_list(vals, [ncc, nbc, nk])
    cc_d, bc_d, k_d = split_list(dims, [ncc, nbc, nk])
    carry = [x if d is None else moveaxis(x, d, 0) for x, d in zip(carry, k_d)]
    carry_b = [d is not None for d in k_d]
    pred_b = False
    while True:
        dims_k = [0 if b else None for b in carry_b]
        _, _, (pred_b,) = batch_jaxpr(cond_jaxpr, cc_d + dims_k, size, False)
        if pred_b:  # examples stop at different steps: every carry is per example
            carry_b = [True] * nk
            dims_k = [0] * nk
        body_b, body_consts, out_b = batch_jaxpr(body_jaxpr, bc_d + dims_k, size, carry_b)
        new = [a or b for a, b in zip(carry_b, out_b)]
        if new == carry_b:
            break
        carry_b = new
    carry = [broadcast_in_dim(x, (size, *np.shape(x)), tuple(range(1, np.ndim(x) + 1)))
             if b and d is None else x for x, b, d in zip(carry, carry_b, k_d)]
    out_dims = [0 if b else None for b in carry_b]
    if not pred_b:
        cond_b, cond_consts, _ = batch_jaxpr(cond_jaxpr, cc_d + out_dims, size, False)
        outs = while_p.bind(*cond_consts, *cc, *body_consts, *bc, *carry, cond_jaxpr=cond_b,
                            body_jaxpr=body_b, cond_nconsts=len(cond_consts) + ncc,
                            body_nconsts=len(body_consts) + nbc)
        return outs, out_dims
    # batched predicate: loop while any example runs; finished examples keep their carry
    cond_b, cond_consts, _ = batch_jaxpr(cond_jaxpr, cc_d + out_dims, size, True)
    n_pc = len(cond_consts) + ncc
    n_bc = len(body_consts) + nbc
    c_avals = [get_aval(x) for x in [*cond_consts, *cc]]
    b_avals = [get_aval(x) for x in [*body_consts, *bc]]
    k_avals = [get_aval(x) for x in carry]

    def new_cond(*a):
        pc, k = a[:n_pc], a[n_pc:]
        return [_any(eval_jaxpr(cond_b.jaxpr, [], *pc, *k)[0])]

    def new_body(*a):
        pc, bcs, k = split_list(a, [n_pc, n_bc, nk])
        pred = eval_jaxpr(cond_b.jaxpr, [], *pc, *k)[0]
        new = eval_jaxpr(body_b.jaxpr, [], *bcs, *k)
        return [select(reshape(pred, (size,) + (1,) * (np.ndim(n) - 1)), n, old)
                for n, old in zip(new, k)]

    cond_prog, cond_consts2 = stage(new_cond, c_avals + k_avals, "while")
    body_prog, body_consts2 = stage(new_body, c_avals + b_avals + k_avals, "while")
    outs = while_p.bind(*cond_consts2, *cond_consts, *cc, *body_consts2, *cond_consts, *cc,
                        *body_consts, *bc, *carry, cond_jaxpr=cond_prog, body_jaxpr=body_prog,
                        cond_nconsts=len(cond_consts2) + n_pc,
                        body_nconsts=len(body_consts2) + n_pc + n_bc)
    return outs, out_dims


def _while_taylor(primals, series, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """One loop over the jetted body; the predicate reads the primal carry only."""
    order, ncc, nbc = series_order(series), cond_nconsts, body_nconsts
    cc, bc, carry = split_list(primals, [ncc, nbc, len(primals) - ncc - nbc])
    b_avals, k_avals = body_jaxpr.in_avals[:nbc], body_jaxpr.in_avals[nbc:]
    w_b, w_k = carries(series[ncc:ncc + nbc]), float_flags(k_avals)
    nk, n_bt, n_kt = len(k_avals), order * sum(w_b), order * sum(w_k)
    k_t_avals = [a for a, w in zip(k_avals, w_k) if w for _ in range(order)]
    b_t_avals = [a for a, w in zip(b_avals, w_b) if w for _ in range(order)]

    def cond_fun(*args):
        return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *args[:ncc + nk])

    def body_fun(*args):
        b, b_t, k, k_t = split_list(args, [nbc, n_bt, nk, n_kt])
        outs, terms = jet_call(body_jaxpr, [*b, *k], [*unpack(b_t, b_avals, w_b, order),
                                                     *unpack(k_t, k_avals, w_k, order)])
        return [*outs, *pack(terms, w_k)]

    cond_prog, cond_consts = stage(cond_fun, [*cond_jaxpr.in_avals, *k_t_avals], "while (jet)")
    body_prog, body_consts = stage(body_fun, [*b_avals, *b_t_avals, *k_avals, *k_t_avals],
                                   "while (jet)")
    outs = while_p.bind(*cond_consts, *cc, *body_consts, *bc, *pack(series[ncc:ncc + nbc], w_b),
                        *carry, *pack(series[ncc + nbc:], w_k), cond_jaxpr=cond_prog,
                        body_jaxpr=body_prog, cond_nconsts=len(cond_consts) + ncc,
                        body_nconsts=len(body_consts) + nbc + n_bt)
    return outs[:nk], unpack(outs[nk:], k_avals, w_k, order)


while_p = define("while", impl=_while_impl, abstract=_while_abstract,
                 jvp=_while_jvp, transpose=_while_transpose, batch=_while_batch,
                 taylor=_while_taylor,
                 multiple_results=True, props=HIGHER_ORDER, facts=OWNED_RESULTS)


# --- the user API ----------------------------------------------------------------------------

def while_loop(cond_fun, body_fun, init_val):
    """`val = init_val; while cond_fun(val): val = body_fun(val); return val`, staged once.

    Differentiable in forward mode (jvp, jacfwd) and batchable; for reverse mode use
    fori_loop with static bounds or scan.

    >>> from functrans.lax import while_loop
    >>> int(while_loop(lambda i: i < 10, lambda i: i + 3, 0))
    12
    """
    c_leaves, c_tree = tree_flatten(init_val)
    # a carry that starts as a Python scalar is weak: it takes the dtype body_fun gives it
    body_prog, body_consts, _, out_tree = stage_tree(body_fun, (init_val,), "while_loop",
                                                     weak=True)
    if out_tree != c_tree:
        raise TypeError(f"while_loop: body_fun returns structure {out_tree} for an init_val of "
                        f"structure {c_tree}; the loop value must keep its structure.")
    c_leaves, promoted = promote_weak_carry(c_leaves, body_prog.out_avals)
    if promoted:
        init_val = tree_unflatten(c_tree, c_leaves)
        body_prog, body_consts, _, _ = stage_tree(body_fun, (init_val,), "while_loop",
                                                  weak=True)
    cond_prog, cond_consts, _, pred_tree = stage_tree(cond_fun, (init_val,), "while_loop",
                                                      weak=True)
    pred_avals = cond_prog.out_avals
    if len(pred_avals) != 1 or pred_avals[0].shape != () or pred_avals[0].dtype != np.bool_:
        raise DTypeError(f"while_loop: cond_fun must return a boolean scalar, got "
                         f"{[str(a) for a in pred_avals]}. Compare (e.g. i < n), and reduce "
                         "arrays with fnp.any / fnp.all.")
    c_leaves = [as_value(c, "while_loop init_val") for c in c_leaves]
    for k, (a, b) in enumerate(zip(map(get_aval, c_leaves), body_prog.out_avals)):
        if a != b:
            raise TypeError(
                f"while_loop: loop value leaf {k} is {a} in init_val but {b} as returned by "
                f"body_fun. {carry_fix('init_val', 'body_fun', a, b)}")
    outs = while_p.bind(*cond_consts, *body_consts, *c_leaves, cond_jaxpr=cond_prog,
                        body_jaxpr=body_prog, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts))
    return tree_unflatten(c_tree, outs)


def _static_int(x):
    """The Python int behind a concrete integer bound, or None when it is traced."""
    if isinstance(x, Tracer):
        x = x.concrete_value()
        if x is None:
            return None
    kind = np.asarray(x).dtype.kind
    if isinstance(x, bool) or kind not in "iuf" or np.ndim(x) != 0:
        raise DTypeError(f"fori_loop: bounds must be integer scalars, got {x!r}. Pass Python "
                         "or numpy ints (e.g. fori_loop(0, n, ...)).")
    if kind == "f" and not float(x).is_integer():
        raise DTypeError(f"fori_loop: bound {x!r} is not a whole number; the loop counts in "
                         "integer steps. Pass int bounds (e.g. int(math.ceil(upper))), or "
                         "use while_loop for a fractional counter.")
    return int(x)  # a whole float counts as that int (JAX converts concrete bounds to int)


def _dtype(x):
    return x.dtype if isinstance(x, Tracer) else np.asarray(x).dtype


def fori_loop(lower, upper, body_fun, init_val):
    """`val = init_val; for i in range(lower, upper): val = body_fun(i, val); return val`.

    With concrete bounds (Python or numpy ints) the loop is a `scan` and supports every
    transform, reverse mode included; with traced bounds it is a `while_loop`.

    >>> import functrans as ft
    >>> from functrans.lax import fori_loop
    >>> float(ft.grad(lambda x: fori_loop(0, 3, lambda i, v: v * x, 1.0))(2.0))
    12.0
    """
    lo, hi = _static_int(lower), _static_int(upper)
    kinds = {"f" if _dtype(b).kind == "f" else "i" for b in (lower, upper)}
    if len(kinds) > 1:
        raise DTypeError(f"fori_loop: bounds {lower!r} and {upper!r} mix a float and an int; "
                         "bounds must be integer scalars of one kind (as in JAX). Pass ints, "
                         "e.g. fori_loop(0, 3, ...).")
    dtype = np.result_type(np.asarray(lower).dtype if not isinstance(lower, Tracer)
                           else lower.dtype,
                           np.asarray(upper).dtype if not isinstance(upper, Tracer)
                           else upper.dtype)
    if lo is not None and hi is not None:
        if dtype.kind == "f":  # whole float bounds: an integer counter, as in JAX
            dtype = np.dtype(np.int64)

        def step(carry, _):
            i, val = carry
            return (i + np.ones((), dtype), body_fun(i, val)), None

        (_, out), _ = scan(step, (np.asarray(lo, dtype), init_val), None,
                           length=max(hi - lo, 0))
        return out
    lower = convert_element_type(as_value(lower, "fori_loop"), dtype)
    upper = convert_element_type(as_value(upper, "fori_loop"), dtype)

    def body(carry):
        i, val = carry
        return i + np.ones((), dtype), body_fun(i, val)

    _, out = while_loop(lambda c: lt_p.bind(c[0], upper), body, (lower, init_val))
    return out

