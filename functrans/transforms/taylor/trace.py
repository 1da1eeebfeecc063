"""The jet trace: each tracer carries its primal and K Taylor terms (JAX's jet convention: term
k is the k-th derivative of t -> x(t) at 0), and each primitive maps them by its Taylor rule.

Known-zero terms stay symbolic (`Zero`); a primitive whose operands carry only zero terms is
re-bound on its primals and no rule runs.
"""

from __future__ import annotations

from functrans.core.avals import get_aval, is_float
from functrans.core.symbolic import Zero
from functrans.core.trace import PrimalTracer, Trace, new_main


class JetTracer(PrimalTracer):
    """primal and `terms`, a tuple of K derivative coefficients (arrays or Zero)."""

    __slots__ = ("terms",)

    def __init__(self, trace, primal, terms):
        super().__init__(trace, primal)
        self.terms = terms


def zero_terms(aval, order: int) -> tuple:
    """K known-zero terms of type `aval`."""
    return (Zero(aval),) * order


def all_zero(terms) -> bool:
    """Whether every term is known zero."""
    return all(type(t) is Zero for t in terms)


class JetTrace(Trace):
    """global data: the order K (number of terms each tracer carries)."""

    __slots__ = ()

    def pure(self, val):
        aval = get_aval(val)
        tracer = JetTracer(self, val, zero_terms(aval, self.main.global_data))
        tracer._aval = aval
        return tracer

    lift = pure

    def process_primitive(self, prim, tracers, params):
        from functrans.transforms.taylor.rules import taylor_rule
        primals = [t.primal for t in tracers]
        series = [t.terms for t in tracers]
        if all(all_zero(s) for s in series):
            return self._constant(prim, prim.bind(*primals, **params))
        out_avals = prim.abstract_eval(*[get_aval(x) for x in primals], **params)
        out_avals = out_avals if prim.multiple_results else [out_avals]
        if not any(is_float(a.dtype) for a in out_avals):     # comparisons, integer ops
            return self._constant(prim, prim.bind(*primals, **params))
        p_out, s_out = taylor_rule(prim)(primals, series, **params)
        if prim.multiple_results:
            return [self._tracer(p, s) for p, s in zip(p_out, s_out)]
        return self._tracer(p_out, s_out)

    def _tracer(self, primal, terms):
        aval = get_aval(primal)
        if not is_float(aval.dtype):
            terms = zero_terms(aval, self.main.global_data)
        return JetTracer(self, primal, tuple(terms))

    def _constant(self, prim, out):
        if prim.multiple_results:
            return [self._tracer(o, zero_terms(get_aval(o), self.main.global_data))
                    for o in out]
        return self._tracer(out, zero_terms(get_aval(out), self.main.global_data))


def jet_flat(fun_flat, primals, series, order: int, *, name: str = "jet"):
    """Run `fun_flat` on jet tracers of `order` terms; returns (primals_out, series_out) with
    known-zero terms kept as Zero. Order 0 runs `fun_flat` on the primals."""
    if order == 0:
        outs = list(fun_flat(*primals))
        return outs, [() for _ in outs]
    with new_main(JetTrace, order, name=name) as main:
        trace = main.trace
        ins = [JetTracer(trace, p, tuple(s)) for p, s in zip(primals, series)]
        outs = [trace.full_raise(o) for o in fun_flat(*ins)]
        return [o.primal for o in outs], [o.terms for o in outs]
