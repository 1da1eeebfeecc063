"""`scan`: a loop of known length carrying state and stacking per-step outputs.

The primitive `scan` holds the body program (consts..., carry..., x...) -> (carry..., y...) and
takes (consts..., init..., xs...), each x the slice of an xs along axis 0. Its rules:
  jvp        the body's JVP, with a fixpoint over which carries have nonzero tangents, split
             into a primal scan that also outputs the residuals each step needs (stacked as
             extra ys; loop-invariant ones are computed once, outside) and a linear tangent
             scan reading them;
  transpose  a scan in the opposite direction over the transposed body, accumulating the
             cotangents of the consts in its carry;
  batch      the body batched, with a fixpoint over which carries become batched.
"""

from __future__ import annotations

import numpy as np

from functrans.backend import xp
from functrans.core.avals import ShapedArray, get_aval
from functrans.core.eval import eval_jaxpr
from functrans.core.ir import ClosedJaxpr, Jaxpr, Var
from functrans.core.array import as_array
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value
from functrans.core.symbolic import Zero, is_undefined
from functrans.core.trace import Tracer
from functrans.errors import ArgumentError, ArgumentTypeError, ShapeError, \
    TracerIntegerConversionError
from functrans.primitives.elementwise import add_tangents
from functrans.primitives.registry import define
from functrans.primitives.layout import broadcast_in_dim, moveaxis
from functrans.transforms.higher_order import (HIGHER_ORDER, OWNED_RESULTS, carry_fix,
                                               instantiate_zeros, promote_weak_carry,
                                               zeros_like_aval)
from functrans.transforms.taylor.programs import (carries, float_flags, jet_call, pack,
                                                series_order, unpack)
from functrans.transforms.toolkit import (batch_jaxpr, batch_size, dce, hoist, jvp_split, run,
                                          split_list, stage, transpose_jaxpr, weak_avals)
from functrans.tree_util import tree_flatten, tree_unflatten



# --- the primitive ---------------------------------------------------------------------------

def _scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = split_list(args, [num_consts, num_carry, len(args) - num_consts
                                          - num_carry])
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [xp.empty((length, *a.shape), a.dtype) for a in y_avals]
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = run(jaxpr, *consts, *carry, *[x[i] for x in xs], loop_body=True)
        carry = outs[:num_carry]
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i] = y
    # a carry the body passed through is an operand; the stacked ys are fresh buffers
    return [*unaliased(carry, args), *[as_array(y) for y in ys]]


def _scan_abstract(*avals, jaxpr, num_consts, num_carry, length, reverse):
    consts, carry, xs = split_list(avals, [num_consts, num_carry, len(avals) - num_consts
                                           - num_carry])
    x_avals = []
    for a in xs:
        if a.ndim == 0 or a.shape[0] != length:
            raise ShapeError(f"scan: every xs leaf needs a leading axis of length {length}, "
                             f"got {a}.")
        x_avals.append(a.update(shape=a.shape[1:]))
    expected = list(jaxpr.in_avals)
    if [*consts, *carry, *x_avals] != expected:
        raise ShapeError(f"scan: operands {[str(a) for a in (*consts, *carry, *x_avals)]} do "
                         f"not match the body's inputs {[str(a) for a in expected]}.")
    outs = jaxpr.out_avals
    if list(outs[:num_carry]) != list(carry):
        raise ShapeError(f"scan: the body returns carry {[str(a) for a in outs[:num_carry]]} "
                         f"for a carry of {[str(a) for a in carry]}.")
    return [*carry, *[ShapedArray((length, *a.shape), a.dtype) for a in outs[num_carry:]]]


def _invariant_residuals(known: ClosedJaxpr, n_invariant_in: int, n_prim_out: int):
    """Which residual outputs of `known` depend only on its first `n_invariant_in` inputs
    (loop-invariant), and the program computing those from those inputs."""
    j = known.jaxpr
    inv = set(j.invars[:n_invariant_in])
    eqns = []
    for eqn in j.eqns:
        if all(type(a) is not Var or a in inv for a in eqn.invars):
            eqns.append(eqn)
            inv.update(eqn.outvars)
    res = j.outvars[n_prim_out:]
    flags = [type(v) is not Var or v in inv for v in res]
    prog = ClosedJaxpr(Jaxpr([], j.invars[:n_invariant_in], [v for v, f in zip(res, flags) if f],
                             eqns), [])
    return flags, dce(prog)



def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    nx = len(primals) - nc - nk
    ny = len(jaxpr.out_avals) - nk
    consts, init, xs = split_list(primals, [nc, nk, nx])
    t_consts, t_init, t_xs = split_list(tangents, [nc, nk, nx])
    c_nz = [type(t) is not Zero for t in t_consts]
    x_nz = [type(t) is not Zero for t in t_xs]
    carry_nz = [type(t) is not Zero for t in t_init]
    while True:  # fixpoint: a carry is differentiated if its tangent can ever be nonzero
        split = jvp_split(jaxpr, c_nz + carry_nz + x_nz, instantiate=carry_nz + [False] * ny)
        new = [a or b for a, b in zip(carry_nz, split.out_nonzeros[:nk])]
        if new == carry_nz:
            break
        carry_nz = new
    y_nz = split.out_nonzeros[nk:]
    if not any(carry_nz) and not any(y_nz):
        out = scan_p.bind(*primals, jaxpr=jaxpr, num_consts=nc, num_carry=nk, length=length,
                          reverse=reverse)
        return out, [Zero(get_aval(o)) for o in out]

    # primal scan: outputs (carry, ys, per-step residuals); invariant residuals come apart
    kc = split.known_consts
    n_inv_in = len(kc) + nc
    n_prim_out = nk + ny
    inv_flags, inv_prog = _invariant_residuals(split.known, n_inv_in, n_prim_out)
    kj = split.known.jaxpr
    res_vars = kj.outvars[n_prim_out:]
    # a residual that is an x is read from xs itself rather than stacked again
    x_pos = {v: i for i, v in enumerate(kj.invars[n_inv_in + nk:])}
    from_xs = [not f and v in x_pos for v, f in zip(res_vars, inv_flags)]
    per_step = [not f and not x for f, x in zip(inv_flags, from_xs)]
    known_body = ClosedJaxpr(Jaxpr([], kj.invars, kj.outvars[:n_prim_out]
                                   + [v for v, s in zip(res_vars, per_step) if s], kj.eqns), [])
    known_body = dce(known_body)
    outs = scan_p.bind(*kc, *consts, *init, *xs, jaxpr=known_body, num_consts=n_inv_in,
                       num_carry=nk, length=length, reverse=reverse)
    carry_out, ys, stacked = split_list(outs, [nk, ny, len(outs) - nk - ny])
    stacked_iter = iter(stacked)
    stacked = [xs[x_pos[v]] if x else next(stacked_iter)
               for v, x, f in zip(res_vars, from_xs, inv_flags) if not f]
    invariant = eval_jaxpr(inv_prog.jaxpr, [], *kc, *consts)

    # tangent scan: consts (invariant residuals, const tangents), carry tangents,
    # xs (stacked residuals, x tangents)
    tj = split.tangent.jaxpr
    res_in, t_in = tj.invars[:split.num_res], tj.invars[split.num_res:]
    n_tc, n_tk = sum(c_nz), sum(carry_nz)
    t_c_in, t_k_in, t_x_in = split_list(t_in, [n_tc, n_tk, len(t_in) - n_tc - n_tk])
    inv_in = [v for v, f in zip(res_in, inv_flags) if f]
    step_in = [v for v, f in zip(res_in, inv_flags) if not f]
    tangent_body = ClosedJaxpr(Jaxpr([], [*inv_in, *t_c_in, *t_k_in, *step_in, *t_x_in],
                                     tj.outvars, tj.eqns), [])
    t_c = [t for t, nz in zip(t_consts, c_nz) if nz]
    t_k = instantiate_zeros([t for t, nz in zip(t_init, carry_nz) if nz])
    t_x = [t for t, nz in zip(t_xs, x_nz) if nz]
    t_outs = scan_p.bind(*invariant, *t_c, *t_k, *stacked, *t_x, jaxpr=tangent_body,
                         num_consts=len(invariant) + n_tc, num_carry=n_tk, length=length,
                         reverse=reverse)
    t_iter = iter(t_outs)
    primal_out = [*carry_out, *ys]
    t_out = [next(t_iter) if nz else Zero(get_aval(p))
             for nz, p in zip(carry_nz + y_nz, primal_out)]
    return primal_out, t_out


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    nx = len(args) - nc - nk
    consts, init, xs = split_list(args, [nc, nk, nx])
    c_lin = [is_undefined(c) for c in consts]
    x_lin = [is_undefined(x) for x in xs]
    # every carry of a linear scan is linear (a known carry is an instantiated zero tangent)
    linear_in = c_lin + [True] * nk + x_lin
    t_prog, t_consts = hoist(transpose_jaxpr(jaxpr, linear_in))
    k_consts = [c for c, lin in zip(consts, c_lin) if not lin]
    k_xs = [x for x, lin in zip(xs, x_lin) if not lin]
    out_avals = _scan_abstract(*[x.aval if is_undefined(x) else get_aval(x) for x in args],
                               jaxpr=jaxpr, num_consts=nc, num_carry=nk, length=length,
                               reverse=reverse)
    ct_carry, ct_ys = split_list(instantiate_zeros(cts, out_avals), [nk, len(cts) - nk])
    lin_c_avals = [c.aval for c, lin in zip(consts, c_lin) if lin]
    n_tc, n_kc, n_lc = len(t_consts), len(k_consts), len(lin_c_avals)
    n_kx = len(k_xs)

    def body(*a):
        tc, kc, acc, ctk, kx, cty = split_list(a, [n_tc, n_kc, n_lc, nk, n_kx, len(ct_ys)])
        outs = eval_jaxpr(t_prog.jaxpr, [], *tc, *kc, *kx, *ctk, *cty)
        ct_lc, ct_k, ct_lx = split_list(outs, [n_lc, nk, len(outs) - n_lc - nk])
        return [*(add_tangents(x, y) for x, y in zip(acc, ct_lc)), *ct_k, *ct_lx]

    step = lambda a: a.update(shape=a.shape[1:])  # noqa: E731
    in_avals = ([v.aval for v in t_prog.jaxpr.invars[:n_tc]]
                + [get_aval(c) for c in k_consts] + lin_c_avals
                + [get_aval(c) for c in ct_carry]
                + [step(get_aval(x)) for x in k_xs] + [step(get_aval(c)) for c in ct_ys])
    body_t, body_consts = stage(body, in_avals, "scan transpose")
    acc0 = [zeros_like_aval(a) for a in lin_c_avals]
    outs = scan_p.bind(*body_consts, *t_consts, *k_consts, *acc0, *ct_carry, *k_xs, *ct_ys,
                       jaxpr=body_t, num_consts=len(body_consts) + n_tc + n_kc,
                       num_carry=n_lc + nk, length=length, reverse=not reverse)
    ct_c, ct_init, ct_x = split_list(outs, [n_lc, nk, len(outs) - n_lc - nk])
    ct_c, ct_x = iter(ct_c), iter(ct_x)
    return ([next(ct_c) if lin else None for lin in c_lin]
            + [ct if is_undefined(x) else None for ct, x in zip(ct_init, init)]
            + [next(ct_x) if lin else None for lin in x_lin])


def _scan_batch(vals, dims, *, jaxpr, num_consts, num_carry, length, reverse):
    nc, nk = num_consts, num_carry
    nx = len(vals) - nc - nk
    ny = len(jaxpr.out_avals) - nk
    size = batch_size(vals, dims)
    consts, init, xs = split_list(vals, [nc, nk, nx])
    c_d, k_d, x_d = split_list(dims, [nc, nk, nx])
    init = [x if d is None else moveaxis(x, d, 0) for x, d in zip(init, k_d)]
    # the batch axis of an xs leaf goes to 1, so each step's slice has it at 0
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, x_d)]
    step_d = [None if d is None else 0 for d in x_d]
    carry_b = [d is not None for d in k_d]
    while True:
        prog, body_consts, out_b = batch_jaxpr(
            jaxpr, c_d + [0 if b else None for b in carry_b] + step_d, size,
            instantiate=carry_b + [False] * ny)
        new = [a or b for a, b in zip(carry_b, out_b[:nk])]
        if new == carry_b:
            break
        carry_b = new
    init = [broadcast_in_dim(x, (size, *np.shape(x)), tuple(range(1, np.ndim(x) + 1)))
            if b and d is None else x for x, b, d in zip(init, carry_b, k_d)]
    outs = scan_p.bind(*body_consts, *consts, *init, *xs, jaxpr=prog,
                       num_consts=len(body_consts) + nc, num_carry=nk, length=length,
                       reverse=reverse)
    return outs, [0 if b else None for b in carry_b] + [1 if b else None for b in out_b[nk:]]


def _scan_taylor(primals, series, *, jaxpr, num_consts, num_carry, length, reverse):
    """One scan over the jetted body; every float carry carries its terms (a fixpoint over
    which carries vary would save zeros, not work that matters)."""
    order, nc, nk = series_order(series), num_consts, num_carry
    avals = jaxpr.in_avals
    w_c, w_x = carries(series[:nc]), carries(series[nc + nk:])
    w_k = float_flags(avals[nc:nc + nk])
    y_float = float_flags(jaxpr.out_avals[nk:])
    groups = [(avals[:nc], w_c), (avals[nc:nc + nk], w_k), (avals[nc + nk:], w_x)]
    sizes = [n for a, w in groups for n in (len(a), order * sum(w))]

    def body(*args):
        parts = split_list(args, sizes)
        xs, ser = [], []
        for (a, w), p, t in zip(groups, parts[::2], parts[1::2]):
            xs += p
            ser += unpack(t, a, w, order)
        outs, terms = jet_call(jaxpr, xs, ser)
        return [*outs[:nk], *pack(terms[:nk], w_k), *outs[nk:], *pack(terms[nk:], y_float)]

    in_avals = [x for a, w in groups for x in (*a, *[v for v, f in zip(a, w) if f
                                                      for _ in range(order)])]
    prog, body_consts = stage(body, in_avals, "scan (jet)")
    consts, carry, xs = split_list(primals, [nc, nk, len(primals) - nc - nk])
    outs = scan_p.bind(*body_consts, *consts, *pack(series[:nc], w_c), *carry,
                       *pack(series[nc:nc + nk], w_k), *xs, *pack(series[nc + nk:], w_x),
                       jaxpr=prog, num_consts=len(body_consts) + nc + order * sum(w_c),
                       num_carry=nk + order * sum(w_k), length=length, reverse=reverse)
    n_kt = order * sum(w_k)
    carry, k_terms, ys, y_terms = split_list(
        outs, [nk, n_kt, len(y_float), len(outs) - nk - n_kt - len(y_float)])
    return [*carry, *ys], [*unpack(k_terms, avals[nc:nc + nk], w_k, order),
                           *unpack(y_terms, [get_aval(y) for y in ys], y_float, order)]


scan_p = define("scan", impl=_scan_impl, abstract=_scan_abstract, jvp=_scan_jvp,
                transpose=_scan_transpose, batch=_scan_batch, multiple_results=True,
                taylor=_scan_taylor,
                props=HIGHER_ORDER, facts=OWNED_RESULTS)


# --- the user API ----------------------------------------------------------------------------

def _scan_length(length) -> int:
    """`length` as an int >= 0, or the error that says what to pass."""
    if isinstance(length, Tracer):
        raise TracerIntegerConversionError(
            f"scan: length is a traced value {length.aval.str_short()}, but the number of steps "
            "must be known while tracing. Pass a Python int (under jit, mark the argument that "
            "gives it static: jit(f, static_argnums=...)), or loop a traced number of times with "
            "lax.while_loop.")
    if isinstance(length, bool) or not isinstance(length, int | np.integer):
        raise ArgumentTypeError(
            f"scan: length={length!r} is a {type(length).__name__}; it must be an int, the "
            "number of steps (length=int(n) if n is a whole number held as a float).")
    if length < 0:
        raise ArgumentError(f"scan: length={length} is negative; it must be an int >= 0, the "
                            "number of steps.")
    return int(length)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop `carry, y = f(carry, x)` over the leading axis of `xs`; returns (carry, stacked ys).

    Like Python's `for x in xs` with an accumulator, but staged once, differentiable in both
    modes, and batchable. `unroll` is accepted for JAX compatibility and ignored.

    >>> import numpy as np
    >>> from functrans.lax import scan
    >>> total, partial = scan(lambda c, x: (c + x, c + x), 0.0, np.arange(4.0))
    >>> float(total), partial.tolist()
    (6.0, [0.0, 1.0, 3.0, 6.0])
    """
    x_leaves, x_tree = tree_flatten(xs)
    x_leaves = [as_value(x, "scan xs") for x in x_leaves]
    lengths = {np.shape(x)[0] if np.ndim(x) else None for x in x_leaves}
    if None in lengths:
        raise ShapeError("scan: every leaf of xs must have a leading axis to scan over; got a "
                         "scalar. Wrap it (x[None]) or close over it instead.")
    shapes = [tuple(np.shape(x)) for x in x_leaves]
    if len(lengths) > 1:
        raise ShapeError(f"scan: the leaves of xs have leading axes of different lengths "
                         f"(shapes {shapes}). All must be scanned over the same number of "
                         "steps.")
    if length is not None:
        length = _scan_length(length)
        if lengths and length not in lengths:
            axis = next(iter(lengths))
            raise ShapeError(f"scan: length={length} disagrees with the leading axis of xs, "
                             f"{axis} (shapes {shapes}). Pass length={axis}, or leave length "
                             "out: it defaults to that axis.")
        lengths.add(length)
    if not lengths:
        raise ArgumentError("scan: with no xs to scan over, pass length= (the number of "
                            "steps).")
    length = lengths.pop()
    c_leaves, c_tree = tree_flatten(init)
    x_avals = [get_aval(x).update(shape=np.shape(x)[1:]) for x in x_leaves]
    in_tree = tree_flatten(((init, xs), {}))[1]
    y_tree_box = []

    def body(*leaves):
        args, _ = tree_unflatten(in_tree, leaves)
        out = f(*args)
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise TypeError("scan: f must return a pair (new_carry, y); got "
                            f"{type(out).__name__}.")
        new_c, y = out
        nc_leaves, nc_tree = tree_flatten(new_c)
        if nc_tree != c_tree:
            raise TypeError(f"scan: f returns a carry of structure {nc_tree} for an init of "
                            f"structure {c_tree}; the carry must keep its structure.")
        y_leaves, y_tree = tree_flatten(y)
        y_tree_box[:] = [y_tree]
        return [*[as_value(c, "scan carry") for c in nc_leaves],
                *[as_value(v, "scan y") for v in y_leaves]]

    # a carry that starts as a Python scalar is weak: it takes the dtype f gives it
    prog, consts = stage(body, weak_avals(c_leaves, "scan init") + x_avals, "scan")
    c_leaves, promoted = promote_weak_carry(c_leaves, prog.out_avals[:len(c_leaves)])
    if promoted:
        prog, consts = stage(body, weak_avals(c_leaves, "scan init") + x_avals, "scan")
    c_leaves = [as_value(c, "scan init") for c in c_leaves]
    for k, (a, b) in enumerate(zip(map(get_aval, c_leaves), prog.out_avals)):
        if a != b:
            raise TypeError(f"scan: carry leaf {k} is {a} in init but {b} as returned by f. "
                            f"{carry_fix('init', 'f', a, b)}")
    outs = scan_p.bind(*consts, *c_leaves, *x_leaves, jaxpr=prog, num_consts=len(consts),
                       num_carry=len(c_leaves), length=length, reverse=bool(reverse))
    carry, ys = outs[:len(c_leaves)], outs[len(c_leaves):]
    return tree_unflatten(c_tree, carry), tree_unflatten(y_tree_box[0], ys)
