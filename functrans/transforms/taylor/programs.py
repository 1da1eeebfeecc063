"""Taylor series through a program (IR in, IR out): what the rows holding programs (jit,
checkpoint, cond, scan, while, custom_vjp) use to jet their program once, at the order asked,
rather than nesting the JVP of it once per order.

Series travel through a program flat: for each value that carries them, its K terms in order.
"""

from __future__ import annotations

from functrans.core.avals import is_float
from functrans.core.eval import eval_jaxpr
from functrans.primitives.layout import instantiate
from functrans.transforms.taylor.trace import all_zero, jet_flat, zero_terms
from functrans.transforms.toolkit.stage import stage


def series_order(series) -> int:
    """K, the number of terms each operand carries."""
    return len(series[0])


def carries(series) -> list[bool]:
    """Per operand: whether its series is not known zero."""
    return [not all_zero(s) for s in series]


def pack(series, which) -> list:
    """The terms of the operands flagged in `which`, flat (zeros materialised)."""
    return [instantiate(t) for s, w in zip(series, which) if w for t in s]


def unpack(flat, avals, which, order: int):
    """Inverse of pack: one series per aval, Zero terms where `which` is False."""
    it = iter(flat)
    return [tuple(next(it) for _ in range(order)) if w else zero_terms(a, order)
            for a, w in zip(avals, which)]


def float_flags(avals) -> list[bool]:
    """Per aval: whether it is a float (carries Taylor terms)."""
    return [is_float(a.dtype) for a in avals]


def jet_call(closed, primals, series):
    """Push (primals, series) through `closed`; every float output's terms materialised."""
    order = series_order(series)
    outs, terms = jet_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                           primals, series, order, name="jet (program)")
    return outs, [tuple(instantiate(t) for t in ts) for ts in terms]


def jet_program(closed, order: int, which, name: str = "jet"):
    """The jet of `closed` as a const-free program and its consts (stage's convention):
    inputs (consts, primals, pack(series, which)), outputs (primals, the K terms of each float
    output)."""
    in_avals, out_avals = closed.in_avals, closed.out_avals
    n = len(in_avals)
    out_float = float_flags(out_avals)

    def fun(*args):
        series = unpack(args[n:], in_avals, which, order)
        outs, terms = jet_call(closed, list(args[:n]), series)
        return [*outs, *pack(terms, out_float)]

    t_avals = [a for a, w in zip(in_avals, which) if w for _ in range(order)]
    return stage(fun, [*in_avals, *t_avals], name)
