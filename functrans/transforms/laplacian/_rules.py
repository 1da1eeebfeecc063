"""The propagation rules, one per family the table's facts name (linear, elementwise in one
varying operand, bilinear) and the generic one; each returns [(primal, grad, second)] per
output.
"""

from __future__ import annotations


import numpy as np

from functrans.core.avals import get_aval, is_float
from functrans.core.symbolic import Zero
from functrans.primitives.elementwise import add, mul
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.layout import broadcast_to
from functrans.transforms.jvp import jvp_flat
from functrans.transforms.vmap import batch_flat
from functrans.transforms.laplacian._blocks import (_DIAG, _FIRST, _SUM, _Scaled, _add, _bind_list,
                                                    _dense, _lead_align, _materialize, _push, _rows,
                                                    _sum_sq)


# --- choosing a rule from the table's facts --------------------------------------------------

def _is_bilinear(prim) -> bool:
    return "bilinear" in prim.props


def _second_order_vanishes(prim, carrying) -> bool:
    """Whether p is linear in the operands that vary (those in `carrying`) jointly: the
    row's props and its `linear_operands` fact say (functrans/primitives/registry.py)."""
    if not carrying:
        return True
    if "linear" not in prim.props:
        return False
    only = prim.facts.get("linear_operands")
    if only is not None:
        return set(carrying) <= set(only)
    if _is_bilinear(prim):
        return len(carrying) == 1
    return True


def _rule_for(prim, carrying):
    if _second_order_vanishes(prim, carrying):
        return _linear_rule
    if "elementwise" in prim.props and not prim.multiple_results and len(carrying) == 1:
        return _elementwise_rule
    if _is_bilinear(prim) and len(carrying) == 2 and not prim.multiple_results:
        return _bilinear_rule
    return _generic_rule


# --- the rules: each returns [(primal, grad, second)] per output ------------------------------

def _linear_rule(prim, params, xs, gs, ss, cfg):
    """The second directional derivative vanishes: push G (and L or D) through J_p."""
    primals, g_out = _push(prim, params, xs, gs, cfg.n)
    if cfg.mode == _FIRST or all(s is None for s in ss):
        s_out = [None] * len(primals)
    else:
        _, s_out = _push(prim, params, xs, ss, cfg.m if cfg.mode == _DIAG else None)
    return list(zip(primals, g_out, s_out))


def _elementwise_rule(prim, params, xs, gs, ss, cfg):
    """y = f(x_i) pointwise (other operands fixed): G_y = f' G, L_y = f' L + f'' sum_k G_k^2."""
    i = next(j for j, g in enumerate(gs) if g is not None)
    x = xs[i]
    aval = get_aval(x)
    ones = broadcast_to(np.ones((), aval.dtype), aval.shape)

    def f(z):
        args = list(xs)
        args[i] = z
        return prim.bind(*args, **params)

    def f_and_df(z):
        (y,), (dy,) = jvp_flat(lambda w: [f(w)], [z], [ones], name="laplacian (f')")
        return [y, _materialize(dy, get_aval(y))]

    if cfg.mode == _FIRST:
        y, d1 = f_and_df(x)
        d2 = Zero(None)
    else:
        (y, d1), (_, d2) = jvp_flat(f_and_df, [x], [ones], name="laplacian (f'')")
    if not is_float(get_aval(y).dtype):
        return [(y, None, None)]
    out_ndim, out_shape = get_aval(y).ndim, get_aval(y).shape
    g = gs[i]
    if type(g) is _Scaled:              # scale * base: the scale takes the factor d1
        scale = d1 if g.scale is None else mul(d1, g.scale)
        g_out = _Scaled(scale, _lead_align(g.base, out_ndim), out_shape)
    else:
        g_out = broadcast_to(mul(d1, _lead_align(g, out_ndim)), (cfg.n, *out_shape))
    s = ss[i]
    s_out = None
    if s is not None:
        s_out = mul(d1, _lead_align(s, out_ndim) if cfg.mode == _DIAG else s)
    if cfg.mode != _FIRST and type(d2) is not Zero:
        if cfg.mode == _DIAG:
            g_sel = _lead_align(_rows(_dense(g), cfg), out_ndim)
            curv = mul(g_sel, g_sel)
        elif type(g) is _Scaled:    # sum_k (s B_k)^2 = s^2 sum_k B_k^2, summed on the base
            curv = _sum_sq(_rows(g.base, cfg))
            if g.scale is not None:
                curv = mul(mul(g.scale, g.scale), curv)
        else:
            curv = _sum_sq(_rows(g, cfg))
        s_out = _add(s_out, mul(d2, curv))
    if s_out is not None and cfg.mode == _DIAG:
        s_out = broadcast_to(s_out, (cfg.m, *get_aval(y).shape))
    elif s_out is not None:
        s_out = broadcast_to(s_out, get_aval(y).shape)
    return [(y, g_out, s_out)]


def _bilinear_rule(prim, params, xs, gs, ss, cfg):
    """y = B(a, b): L_y = B(L_a, b) + B(a, L_b) + 2 sum_k B(G_a[k], G_b[k])."""
    (y,), (g_out,) = _push(prim, params, xs, gs, cfg.n)
    if cfg.mode == _FIRST:
        return [(y, g_out, None)]
    s_out = None
    if any(s is not None for s in ss):
        _, (s_out,) = _push(prim, params, xs, ss, cfg.m if cfg.mode == _DIAG else None)
    cross = batch_flat(lambda a, b: [prim.bind(a, b, **params)],
                       [_rows(g, cfg) for g in gs], [0, 0], [0], cfg.m)[0]
    if cfg.mode == _SUM:
        cross = reduce_sum(cross, (0,))
    cross = add(cross, cross)
    return [(y, g_out, _add(s_out, cross))]


def _generic_rule(prim, params, xs, gs, ss, cfg):
    """Any primitive with a JVP rule: the second term is sum_k jvp(jvp(p, G_k), G_k)."""
    primals, g_out = _push(prim, params, xs, gs, cfg.n)
    if cfg.mode == _FIRST:
        return [(y, g, None) for y, g in zip(primals, g_out)]
    s_out = [None] * len(primals)
    if any(s is not None for s in ss):
        _, s_out = _push(prim, params, xs, ss, cfg.m if cfg.mode == _DIAG else None)
    idx = [i for i, g in enumerate(gs) if g is not None]
    float_out = [j for j, y in enumerate(primals) if is_float(get_aval(y).dtype)]
    out_avals = [get_aval(y) for y in primals]

    def second_directional(*g_nz):
        vs = [Zero(get_aval(x)) for x in xs]
        for i, g in zip(idx, g_nz):
            vs[i] = g

        def first_order(*ys):
            _, t = jvp_flat(lambda *zs: _bind_list(prim, zs, params), ys, vs,
                            name="laplacian (generic, inner)")
            return [_materialize(t[j], out_avals[j]) for j in float_out]

        _, t2 = jvp_flat(first_order, xs, vs, name="laplacian (generic, outer)")
        return [_materialize(t, out_avals[j]) for t, j in zip(t2, float_out)]

    curv = batch_flat(second_directional, [_rows(gs[i], cfg) for i in idx], [0] * len(idx),
                      [0] * len(float_out), cfg.m)
    s_out = list(s_out)
    for j, c in zip(float_out, curv):
        s_out[j] = _add(s_out[j], reduce_sum(c, (0,)) if cfg.mode == _SUM else c)
    return [(y, g if j in float_out else None, s if j in float_out else None)
            for j, (y, g, s) in enumerate(zip(primals, g_out, s_out))]
