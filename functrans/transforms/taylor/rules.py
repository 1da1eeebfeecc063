"""Taylor rules: the row's own (`taylor`, functrans/primitives/registry.py) or one derived from
the table's facts and JVP rule.

Families, read from props and facts, never from a primitive's name:
  linear     p linear in its varying operands jointly: y_k = J_p(x_0) x_k, term by term
  bilinear   y = B(a, b), both varying: y_k = sum_j C(k, j) B(a_j, b_(k-j)) (Leibniz)
  elementwise in one varying operand: Faa di Bruno (faa_di_bruno.py), the scalar derivatives
             from the generic rule on the primal's shape
  generic    any row with a JVP rule. With x(t) the input curve, y'(t) = J(x(t), x'(t)), J the
             row's JVP written in bindable primitives; so y_1..y_K are the terms of order K - 1
             of J pushed on (x_0; x_1..x_(K-1)) and (x_1; x_2..x_K): one level per order, each
             on a program of fixed size, so the work is polynomial in K (no nesting of jvp).
"""

from __future__ import annotations

import functools
from math import comb

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.primitive import jvp_rule
from functrans.core.symbolic import Zero
from functrans.primitives.elementwise import add, mul
from functrans.primitives.layout import instantiate
from functrans.transforms.taylor.faa_di_bruno import elementwise_rule, real_operand
from functrans.transforms.taylor.trace import all_zero, jet_flat, zero_terms


def taylor_rule(prim):
    """The Taylor rule of `prim`: its row's `taylor` rule, else the family rule its facts
    name, else the generic rule from its JVP."""
    rule = prim.rules.get("taylor")
    if rule is not None:
        return rule
    return functools.partial(family_rule, prim)


def has_taylor_rule(prim) -> bool:
    """Whether `prim` can pass Taylor series: an explicit rule, or a JVP rule to derive one
    from (a JVP rule that raises, as custom_lin's, says the row has no forward derivative)."""
    return "taylor" in prim.rules or "jvp" in prim.rules


def linear_in(prim, varying) -> bool:
    """Whether p is linear jointly in the operands that vary (the row's props and its
    `linear_operands` fact say)."""
    if "linear" not in prim.props:
        return False
    only = prim.facts.get("linear_operands")
    if only is not None:
        return set(varying) <= set(only)
    if "bilinear" in prim.props:
        return len(varying) == 1
    return True


def family_rule(prim, primals, series, **params):
    """The rule the row's facts choose: linear, bilinear, elementwise or generic."""
    varying = [i for i, s in enumerate(series) if not all_zero(s)]
    if linear_in(prim, varying):
        return linear_rule(prim, primals, series, **params)
    if "bilinear" in prim.props and len(varying) == 2 and not prim.multiple_results:
        return bilinear_rule(prim, primals, series, **params)
    if "elementwise" in prim.props and len(varying) == 1 and not prim.multiple_results \
            and real_operand(primals[varying[0]]):
        return elementwise_rule(prim, primals, series, **params)
    return generic_rule(prim, primals, series, **params)


def _out_avals(prim, primals, params):
    avals = prim.abstract_eval(*[get_aval(x) for x in primals], **params)
    return list(avals) if prim.multiple_results else [avals]


def linear_rule(prim, primals, series, **params):
    """y_k = J_p(x_0) x_k: the JVP rule applied to each order's terms."""
    jvp = jvp_rule(prim)
    order = len(series[0])
    avals = _out_avals(prim, primals, params)
    out, columns = None, []
    for k in range(order):
        ts = [s[k] for s in series]
        if all(type(t) is Zero for t in ts):
            columns.append([Zero(a) for a in avals])
            continue
        out, t = jvp(primals, ts, **params)
        columns.append(list(t) if prim.multiple_results else [t])
    if out is None:
        out = prim.bind(*primals, **params)
    terms = [tuple(c[j] for c in columns) for j in range(len(avals))]
    return (list(out), terms) if prim.multiple_results else (out, terms[0])


def bilinear_rule(prim, primals, series, **params):
    """Leibniz: y_k = sum_j C(k, j) B(a_j, b_(k-j)), a_0 and b_0 the primals."""
    a, b = primals
    ta, tb = [a, *series[0]], [b, *series[1]]
    (aval,) = _out_avals(prim, primals, params)
    terms = []
    for k in range(1, len(series[0]) + 1):
        acc = None
        for j in range(k + 1):
            if type(ta[j]) is Zero or type(tb[k - j]) is Zero:
                continue
            term = prim.bind(ta[j], tb[k - j], **params)
            if comb(k, j) != 1:
                term = mul(term, np.array(comb(k, j), aval.dtype))
            acc = term if acc is None else add(acc, term)
        terms.append(Zero(aval) if acc is None else acc)
    return prim.bind(a, b, **params), tuple(terms)


def generic_rule(prim, primals, series, **params):
    """From the row's JVP rule J: y_(k+1) is the k-th term of J(x(t), x'(t))."""
    jvp = jvp_rule(prim)
    order = len(series[0])
    multiple = prim.multiple_results
    if order == 1:
        out, t = jvp(primals, [s[0] for s in series], **params)
        if multiple:
            return list(out), [(ti,) for ti in t]
        return out, (t,)
    n = len(primals)
    varying = [i for i, s in enumerate(series) if not all_zero(s)]
    zeros = [Zero(get_aval(x)) for x in primals]
    nonzero_box = []

    def lowered(*args):
        ts = list(zeros)
        for i, t in zip(varying, args[n:]):
            ts[i] = t
        out, t_out = jvp(list(args[:n]), ts, **params)
        out = list(out) if multiple else [out]
        t_out = list(t_out) if multiple else [t_out]
        nonzero_box[:] = [[type(t) is not Zero for t in t_out]]
        return [*out, *[t for t in t_out if type(t) is not Zero]]

    sub_primals = [*primals, *[instantiate(series[i][0]) for i in varying]]
    sub_series = [*[s[:order - 1] for s in series], *[series[i][1:] for i in varying]]
    outs, terms = jet_flat(lowered, sub_primals, sub_series, order - 1,
                           name="jet (generic rule)")
    nonzero = nonzero_box[0]
    m = len(nonzero)
    rest = iter(zip(outs[m:], terms[m:]))
    series_out = []
    for y, nz in zip(outs[:m], nonzero):
        if nz:
            t, ts = next(rest)
            series_out.append((t, *ts))
        else:
            series_out.append(zero_terms(get_aval(y), order))
    if multiple:
        return outs[:m], series_out
    return outs[0], series_out[0]
