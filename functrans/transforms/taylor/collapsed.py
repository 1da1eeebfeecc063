"""Collapsed Taylor mode (Dangel et al., NeurIPS 2025): for directions v_1..v_R and order K,
sum_r w_r d^K f[v_r, .., v_r] in one forward pass.

Every value carries its primal, its lower terms y_1..y_(K-1) per direction (shape (R, *shape))
and one top term: the weighted sum over directions of y_K. The top term of an output is linear
in the top terms of the operands plus a polynomial in the lower ones,

    sum_r w_r y_(K,r) = J_p(x_0) (sum_r w_r x_(K,r)) + sum_r w_r N_K(x_0; x_(1,r)..x_(K-1,r)),

so the collapsed sum passes through each primitive once (one JVP) instead of once per
direction: a linear primitive (a network layer) does R (K - 1) + 1 products, not R K. Rules, by
the table's facts:

  linear       lower terms through the JVP per direction (vmapped), the top through it once
  elementwise  Faa di Bruno: the Bell polynomials per direction, their top ones summed with the
               weights before the scalar derivatives multiply them
  anything     the row's Taylor rule per direction with the top term zero (vmapped), summed
               with the weights, plus the JVP of the top term
"""

from __future__ import annotations

import numpy as np

from functrans.core.avals import get_aval, is_float
from functrans.core.primitive import jvp_rule
from functrans.core.symbolic import Zero
from functrans.core.trace import PrimalTracer, Trace, new_main
from functrans.primitives.elementwise import add, mul
from functrans.primitives.layout import broadcast_to, instantiate
from functrans.primitives.linalg import dot_general
from functrans.primitives.reductions import reduce_sum
from functrans.transforms.taylor.faa_di_bruno import (Monomials, ScaledDerivatives, derivatives,
                                                    partitions, real_operand, term)
from functrans.transforms.taylor.rules import linear_in, taylor_rule
from functrans.transforms.vmap import batch_flat


class _Config:
    """order K, R directions, weights (R,) of the top sum (None: all ones)."""

    __slots__ = ("order", "size", "weights")

    def __init__(self, order: int, size: int, weights):
        self.order = order
        self.size = size
        self.weights = weights


class CollapsedTracer(PrimalTracer):
    """primal; `lower`, K - 1 terms of shape (R, *shape) (or Zero); `top` (or Zero)."""

    __slots__ = ("lower", "top")

    def __init__(self, trace, primal, lower, top):
        super().__init__(trace, primal)
        self.lower = lower
        self.top = top


def _zero(tracer_or_x, order):
    aval = get_aval(tracer_or_x)
    return (Zero(aval),) * (order - 1), Zero(aval)


def _is_zero(lower, top) -> bool:
    return type(top) is Zero and all(type(t) is Zero for t in lower)


class CollapsedTrace(Trace):
    __slots__ = ()

    def pure(self, val):
        lower, top = _zero(val, self.main.global_data.order)
        return CollapsedTracer(self, val, lower, top)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        cfg = self.main.global_data
        xs = [t.primal for t in tracers]
        lowers = [t.lower for t in tracers]
        tops = [t.top for t in tracers]
        varying = [i for i, (lo, tp) in enumerate(zip(lowers, tops)) if not _is_zero(lo, tp)]
        out_avals = prim.abstract_eval(*[get_aval(x) for x in xs], **params)
        out_avals = list(out_avals) if prim.multiple_results else [out_avals]
        if not varying or not any(is_float(a.dtype) for a in out_avals):
            out = prim.bind(*xs, **params)
            outs = list(out) if prim.multiple_results else [out]
            res = [(y, *_zero(y, cfg.order)) for y in outs]
        elif linear_in(prim, varying):
            res = _linear_rule(prim, params, xs, lowers, tops, cfg)
        elif "elementwise" in prim.props and len(varying) == 1 and not prim.multiple_results \
                and real_operand(xs[varying[0]]):
            res = _elementwise_rule(prim, params, xs, lowers, tops, varying[0], cfg)
        else:
            res = _generic_rule(prim, params, xs, lowers, tops, cfg)
        tracers_out = [CollapsedTracer(self, y, tuple(lo), tp) if is_float(get_aval(y).dtype)
                       else CollapsedTracer(self, y, *_zero(y, cfg.order)) for y, lo, tp in res]
        return tracers_out if prim.multiple_results else tracers_out[0]


# --- helpers ---------------------------------------------------------------------------------

def _per_direction(fn, batched, size):
    """fn over axis 0 of each of `batched` (arrays; Zero entries passed through as Zero);
    fn returns a list of arrays or Zero, kept as such."""
    idx = [i for i, b in enumerate(batched) if type(b) is not Zero]
    if not idx:       # nothing varies per direction: what fn returns is the same for each
        return [o if type(o) is Zero else broadcast_to(o, (size, *get_aval(o).shape))
                for o in fn(*batched)]
    zero_out = []

    def f(*vals):
        args = list(batched)
        for i, v in zip(idx, vals):
            args[i] = v
        outs = fn(*args)
        zero_out[:] = [[type(o) is Zero for o in outs], [getattr(o, "aval", None) for o in outs]]
        return [o for o in outs if type(o) is not Zero]

    res = iter(batch_flat(f, [batched[i] for i in idx], [0] * len(idx),
                          lambda: [0] * sum(not z for z in zero_out[0]), size))
    return [Zero(a) if z else next(res) for z, a in zip(*zero_out)]


def _weighted_sum(block, cfg):
    """sum_r w_r block[r]."""
    if cfg.weights is None:
        return reduce_sum(block, (0,))
    w = np.asarray(cfg.weights, get_aval(block).dtype)
    return dot_general(w, block, (((0,), (0,)), ((), ())))


def _add(a, b):
    if type(a) is Zero:
        return b
    return a if type(b) is Zero else add(a, b)


def _top_jvp(prim, params, xs, tops):
    """J_p(x_0) applied to the top terms, per output (Zero where none)."""
    if all(type(t) is Zero for t in tops):
        return None
    _, t = jvp_rule(prim)(xs, list(tops), **params)
    return list(t) if prim.multiple_results else [t]


def _outputs(prim, xs, params):
    y = prim.bind(*xs, **params)
    return list(y) if prim.multiple_results else [y]


# --- the rules: each returns [(primal, lower terms, top)] per output ---------------------------

def _linear_rule(prim, params, xs, lowers, tops, cfg):
    jvp = jvp_rule(prim)
    ys = _outputs(prim, xs, params)
    lows = []
    for k in range(cfg.order - 1):
        ts = [lo[k] for lo in lowers]

        def push(*t, ts=ts):
            _, out = jvp(xs, list(t), **params)
            return list(out) if prim.multiple_results else [out]

        if all(type(t) is Zero for t in ts):
            lows.append([Zero(get_aval(y)) for y in ys])
        else:
            lows.append(_per_direction(push, ts, cfg.size))
    top = _top_jvp(prim, params, xs, tops) or [Zero(get_aval(y)) for y in ys]
    return [(y, [lo[j] for lo in lows], top[j]) for j, y in enumerate(ys)]


def _elementwise_rule(prim, params, xs, lowers, tops, i, cfg):
    order = cfg.order
    y, fs = derivatives(prim, params, xs, i, order)
    aval = get_aval(y)
    scaled = ScaledDerivatives(fs)
    # the top term's partitions but f' x_K: their monomials, summed over directions, times
    # the (scaled) derivatives
    top_parts = [(m, j, c) for m, j, c in partitions(order) if not m[order - 1]]
    x_aval = get_aval(xs[i])

    def per_dir(*lower):
        mono = Monomials([*lower, None])
        lows = [term(k, scaled, mono, aval) for k in range(1, order)]
        monos = [mono.get(m) for m, _, _ in top_parts]
        return lows + [Zero(x_aval) if x is None else x for x in monos]

    res = _per_direction(per_dir, list(lowers[i]), cfg.size)
    lows, monos = res[:order - 1], res[order - 1:]
    top = Zero(aval)
    if type(tops[i]) is not Zero and type(fs[0]) is not Zero:
        top = mul(fs[0], tops[i])
    for (m, j, c), x in zip(top_parts, monos):
        f = scaled.get(j, c)
        if type(x) is not Zero and f is not None:
            top = _add(top, mul(f, _weighted_sum(x, cfg)))
    if type(top) is not Zero and get_aval(top).shape != aval.shape:
        top = broadcast_to(top, aval.shape)
    return [(y, lows, top)]


def _generic_rule(prim, params, xs, lowers, tops, cfg):
    order = cfg.order
    rule = taylor_rule(prim)
    ys = _outputs(prim, xs, params)
    flat_lower = [t for lo in lowers for t in lo]

    def per_dir(*flat):
        series = [tuple(flat[j * (order - 1):(j + 1) * (order - 1)]) + (Zero(get_aval(x)),)
                  for j, x in enumerate(xs)]
        _, s_out = rule(xs, series, **params)
        s_out = s_out if prim.multiple_results else [s_out]
        return [t for s in s_out for t in s]

    if all(type(t) is Zero for t in flat_lower):
        res = [Zero(get_aval(y)) for y in ys for _ in range(order)]
    else:
        res = _per_direction(per_dir, flat_lower, cfg.size)
    top_lin = _top_jvp(prim, params, xs, tops)
    out = []
    for j, y in enumerate(ys):
        terms = res[j * order:(j + 1) * order]
        top = terms[-1]
        top = Zero(get_aval(y)) if type(top) is Zero else _weighted_sum(top, cfg)
        if top_lin is not None:
            top = _add(top, top_lin[j])
        out.append((y, terms[:-1], top))
    return out


# --- running a function under the trace ------------------------------------------------------

def collapsed_flat(fun_flat, primals, directions, order: int, weights=None):
    """Run `fun_flat` on collapsed tracers: `directions[i]` is (R, *shape of primal i) or None
    (not differentiated). Returns [(primal, lower terms, top)] per output, with Zero kept."""
    size = next(get_aval(d).shape[0] for d in directions if d is not None)
    cfg = _Config(order, size, weights)
    with new_main(CollapsedTrace, cfg, name="collapsed_taylor") as main:
        trace = main.trace
        ins = []
        for x, v in zip(primals, directions):
            lower, top = _zero(x, order)
            if v is not None:
                if order == 1:
                    top = _weighted_sum(v, cfg)
                else:
                    lower = (v, *lower[1:])
            ins.append(CollapsedTracer(trace, x, lower, top))
        outs = [trace.full_raise(o) for o in fun_flat(*ins)]
        return [(o.primal, o.lower, o.top) for o in outs]


def materialize(t, shape_prefix=()):
    """An array for a term that may be Zero (with a leading axis of the given size)."""
    if type(t) is Zero:
        return broadcast_to(np.zeros((), t.aval.dtype), (*shape_prefix, *t.aval.shape))
    return instantiate(t)
