"""`switch` and `cond`: choose one of several programs by a traced index.

The primitive `cond` holds one const-free program per branch (all with the same input and
output types) and takes (index, *operands). Its rules:
  jvp        each branch's JVP split into primal and tangent programs; residuals of different
             branches share slots by type, so both calls stay one `cond` each;
  transpose  each branch transposed (the index is never linear);
  batch      an unbatched index batches every branch; a batched index runs every branch on
             the whole batch and selects per example.
"""

from __future__ import annotations

import numpy as np

from functrans.core.array import as_array
from functrans.core.avals import ShapedArray, get_aval
from functrans.core.eval import eval_jaxpr
from functrans.core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from functrans.core.pytree_fun import as_value
from functrans.core.symbolic import Zero, is_undefined
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.elementwise import ge_p, select
from functrans.primitives.registry import define
from functrans.primitives.shape_ops import convert_element_type
from functrans.primitives.layout import moveaxis, reshape
from functrans.transforms.higher_order import (HIGHER_ORDER, OWNED_RESULTS, instantiate_zeros,
                                               zeros_like_aval)
from functrans.transforms.taylor.programs import (carries, float_flags, jet_program, pack,
                                                series_order, unpack)
from functrans.transforms.toolkit import (batch_jaxpr, batch_size, hoist, jvp_split, run, stage,
                                          stage_tree, transpose_jaxpr)
from functrans.transforms.vmap import batch_flat
from functrans.tree_util import tree_unflatten



# --- the primitive ---------------------------------------------------------------------------

def _cond_impl(index, *ops, branches):
    i = int(np.clip(index, 0, len(branches) - 1))
    return run(branches[i], *ops)


def _cond_abstract(index, *ops, branches):
    if index.shape != () or not np.issubdtype(index.dtype, np.integer):
        raise DTypeError(f"cond: the branch index must be an integer scalar, got {index}.")
    for k, br in enumerate(branches):
        if list(br.in_avals) != list(ops):
            raise ShapeError(f"cond: branch {k} takes {[str(a) for a in br.in_avals]} but the "
                             f"operands are {[str(a) for a in ops]}.")
    return list(branches[0].out_avals)


def join_consts(progs_consts):
    """Branch programs with leading const inputs of their own -> programs that all take every
    branch's consts (ignoring the others'), and the concatenated consts."""
    avals = [v.aval for prog, consts in progs_consts for v in prog.jaxpr.invars[:len(consts)]]
    all_consts = [c for _, consts in progs_consts for c in consts]
    joined, offset = [], 0
    for prog, consts in progs_consts:
        j, n = prog.jaxpr, len(consts)
        before = [Var(a) for a in avals[:offset]]
        after = [Var(a) for a in avals[offset + n:]]
        joined.append(ClosedJaxpr(Jaxpr([], [*before, *j.invars[:n], *after, *j.invars[n:]],
                                        j.outvars, j.eqns), []))
        offset += n
    return joined, all_consts


def _merge_residual_slots(res_avals_per_branch):
    """Slots shared by the branches' residuals, matched by type: (slot avals, per-branch slot
    index of each residual)."""
    slots: list[ShapedArray] = []
    assigns = []
    for avals in res_avals_per_branch:
        used: set[int] = set()
        assign = []
        for a in avals:
            j = next((j for j, s in enumerate(slots) if s == a and j not in used), None)
            if j is None:
                slots.append(a)
                j = len(slots) - 1
            used.add(j)
            assign.append(j)
        assigns.append(assign)
    return slots, assigns


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    t_ops = tangents[1:]
    nonzeros = [type(t) is not Zero for t in t_ops]
    splits = [jvp_split(br, nonzeros) for br in branches]
    out_nz = [any(nz) for nz in zip(*(s.out_nonzeros for s in splits))]
    splits = [s if s.out_nonzeros == out_nz else jvp_split(br, nonzeros, instantiate=out_nz)
              for s, br in zip(splits, branches)]
    n_out = len(out_nz)

    # primal call: every branch returns its primal outputs and fills the residual slots
    slots, assigns = _merge_residual_slots(
        [[v.aval for v in s.known.jaxpr.outvars[n_out:]] for s in splits])
    kconsts_avals = [[v.aval for v in s.known.jaxpr.invars[:len(s.known_consts)]]
                     for s in splits]
    all_kconsts = [c for s in splits for c in s.known_consts]
    sizes = [len(a) for a in kconsts_avals]
    op_avals = [get_aval(x) for x in ops]

    def known_branch(k):
        s, assign = splits[k], assigns[k]
        start = sum(sizes[:k])

        def fun(*args):
            kc, xs = args[start:start + sizes[k]], args[len(all_kconsts):]
            outs = eval_jaxpr(s.known.jaxpr, [], *kc, *xs)
            vals = [zeros_like_aval(a) for a in slots]
            for r, j in zip(outs[n_out:], assign):
                vals[j] = r
            return [*outs[:n_out], *vals]

        prog, consts = stage(fun, [a for avs in kconsts_avals for a in avs] + op_avals, "cond")
        assert not consts
        return prog

    known = tuple(known_branch(k) for k in range(len(splits)))
    outs = cond_p.bind(index, *all_kconsts, *ops, branches=known)
    primal_out, res = outs[:n_out], outs[n_out:]

    # tangent call: each branch reads its own residual slots
    def tangent_branch(k):
        j = splits[k].tangent.jaxpr
        own = dict(zip(assigns[k], j.invars[:splits[k].num_res]))
        slot_vars = [own.get(i) or Var(a) for i, a in enumerate(slots)]
        return ClosedJaxpr(Jaxpr([], [*slot_vars, *j.invars[splits[k].num_res:]], j.outvars,
                                 j.eqns), [])

    if not any(out_nz):
        return primal_out, [Zero(a) for a in branches[0].out_avals]
    t_in = [t for t, nz in zip(t_ops, nonzeros) if nz]
    t_res = cond_p.bind(index, *res, *t_in,
                        branches=tuple(tangent_branch(k) for k in range(len(splits))))
    t_iter = iter(t_res)
    t_out = [next(t_iter) if nz else Zero(a) for nz, a in
             zip(out_nz, branches[0].out_avals)]
    return primal_out, t_out


def _cond_transpose(cts, index, *ops, branches):
    if is_undefined(index):
        raise TypeError("cond: the branch index cannot be a linear input.")
    linear_in = [is_undefined(x) for x in ops]
    known = [x for x in ops if not is_undefined(x)]
    cts = instantiate_zeros(cts, branches[0].out_avals)
    joined, consts = join_consts([hoist(transpose_jaxpr(br, linear_in)) for br in branches])
    res = iter(cond_p.bind(index, *consts, *known, *cts, branches=tuple(joined)))
    return [None] + [next(res) if lin else None for lin in linear_in]


def _cond_batch(vals, dims, *, branches):
    index, *ops = vals
    idim, *odims = dims
    size = batch_size(vals, dims)
    n_out = len(branches[0].out_avals)
    if idim is None:
        batched = [batch_jaxpr(br, odims, size, False) for br in branches]
        out_b = [any(b) for b in zip(*(b for _, _, b in batched))]
        batched = [b if b[2] == out_b else batch_jaxpr(br, odims, size, out_b)
                   for b, br in zip(batched, branches)]
        joined, consts = join_consts([(p, c) for p, c, _ in batched])
        outs = cond_p.bind(index, *consts, *ops, branches=tuple(joined))
        return outs, [0 if b else None for b in out_b]
    # a batched index: run every branch on the whole batch, then pick per example; the chain
    # of `index >= k` tests clamps out-of-range indices to the first and last branch
    index = moveaxis(index, idim, 0)
    results = [batch_flat(lambda *xs, br=br: eval_jaxpr(br.jaxpr, br.consts, *xs),
                          ops, odims, [0] * n_out, size) for br in branches]
    out = results[0]
    for k in range(1, len(branches)):
        take = ge_p.bind(index, np.asarray(k, index.dtype))
        out = [select(reshape(take, (size,) + (1,) * (np.ndim(o) - 1)), o, prev)
               for o, prev in zip(results[k], out)]
    return out, [0] * n_out


def _cond_taylor(primals, series, *, branches):
    """Each branch jetted once; the index carries no series."""
    index, *ops = primals
    order, which = series_order(series), carries(series[1:])
    joined, consts = join_consts([jet_program(br, order, which, "cond") for br in branches])
    outs = cond_p.bind(index, *consts, *ops, *pack(series[1:], which), branches=tuple(joined))
    avals = branches[0].out_avals
    return outs[:len(avals)], unpack(outs[len(avals):], avals, float_flags(avals), order)


cond_p = define("cond", impl=_cond_impl, abstract=_cond_abstract, jvp=_cond_jvp,
                transpose=_cond_transpose, batch=_cond_batch, multiple_results=True,
                taylor=_cond_taylor,
                props=HIGHER_ORDER, facts=OWNED_RESULTS)


# --- the user API ----------------------------------------------------------------------------

def switch(index, branches, *operands):
    """Apply `branches[index]` to `operands`; the index is clamped into range, as in JAX.

    Every branch is traced, and must return the same structure of shapes and dtypes.

    >>> import functrans as ft
    >>> from functrans.lax import switch
    >>> float(switch(1, [lambda x: x + 1.0, lambda x: x * 10.0], 2.0))
    20.0
    """
    branches = list(branches)
    if not branches:
        raise ValueError("switch: `branches` is empty; pass a sequence of at least one "
                         "function.")
    index = as_value(index, "switch index")
    ia = get_aval(index)
    if ia.shape != () or not (np.issubdtype(ia.dtype, np.integer) or ia.dtype == np.bool_):
        raise DTypeError(f"switch: the index must be an integer scalar, got {ia}. Convert it "
                         "with .astype(int) (or use cond for a boolean predicate).")
    index = convert_element_type(index, np.int32)
    return _bind_branches(index, branches, operands, "switch")


def cond(pred, true_fun, false_fun, *operands):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, differentiable and
    traceable: both branches are staged, one runs.

    >>> import functrans as ft
    >>> from functrans.lax import cond
    >>> float(ft.grad(lambda x: cond(x > 0, lambda y: y * y, lambda y: -y, x))(3.0))
    6.0
    """
    if not callable(true_fun) or not callable(false_fun):
        raise TypeError("cond(pred, true_fun, false_fun, *operands): true_fun and false_fun "
                        "must be callables taking the operands.")
    pred = as_value(pred, "cond predicate")
    pa = get_aval(pred)
    if pa.shape != ():
        raise ShapeError(f"cond: the predicate must be a scalar, got {pa}. Reduce it (e.g. "
                         "fnp.all / fnp.any), or for elementwise choice use fnp.where(pred, a, "
                         "b).")
    if pa.dtype != np.bool_:
        if not np.issubdtype(pa.dtype, np.number):
            raise DTypeError(f"cond: the predicate must be a bool or number, got {pa}.")
        from functrans.primitives.elementwise import ne_p
        pred = ne_p.bind(pred, np.zeros((), pa.dtype))
    index = convert_element_type(pred, np.int32)
    return _bind_branches(index, [false_fun, true_fun], operands, "cond")


def _weak_literals_promoted(staged):
    """Branches returning a Python scalar where another branch returns an array of another
    dtype take that dtype (scalars are weakly typed, as in JAX): `lambda x: 0.0` pairs with a
    float32 branch."""
    progs = [s[0] for s in staged]
    n_out = {len(p.out_avals) for p in progs}
    if len(n_out) != 1:
        return staged
    out_lists = [list(p.jaxpr.outvars) for p in progs]
    changed = False
    for j in range(n_out.pop()):
        strong = {p.out_avals[j] for p, outs in zip(progs, out_lists)
                  if type(outs[j]) is not Literal}
        if len(strong) != 1:
            continue
        target = strong.pop()
        for outs in out_lists:
            v = outs[j]
            if type(v) is Literal and v.aval != target and target.shape == ():
                outs[j] = Literal(np.asarray(v.val, target.dtype)[()], target)
                changed = True
    if not changed:
        return staged
    return [(ClosedJaxpr(Jaxpr(p.jaxpr.constvars, p.jaxpr.invars, outs, p.jaxpr.eqns),
                         p.consts), *rest)
            for (p, *rest), outs in zip(staged, out_lists)]


def _bind_branches(index, funs, operands, name):
    staged = _weak_literals_promoted([stage_tree(f, operands, name, weak=True) for f in funs])
    leaves = staged[0][2]
    labels = ["false_fun", "true_fun"] if name == "cond" else [f"branch {k}"
                                                               for k in range(len(funs))]
    tree0, avals0 = staged[0][3], staged[0][0].out_avals
    for (prog, _, _, tree), label in zip(staged[1:], labels[1:]):
        if tree != tree0:
            raise TypeError(f"{name}: {labels[0]} returns structure {tree0} but {label} returns "
                            f"{tree}. All branches must return the same structure.")
        if list(prog.out_avals) != list(avals0):
            raise TypeError(
                f"{name}: {labels[0]} returns {[str(a) for a in avals0]} but {label} returns "
                f"{[str(a) for a in prog.out_avals]}. All branches must return the same shapes "
                "and dtypes; convert with .astype(...) or broadcast explicitly.")
    joined, consts = join_consts([(p, c) for p, c, _, _ in staged])
    outs = cond_p.bind(index, *consts, *leaves, branches=tuple(joined))
    return tree_unflatten(tree0, [as_array(o) for o in outs])  # eagerly: functrans's Array
