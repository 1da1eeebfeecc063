"""The Laplacian tracer and its trace: each primitive picks its rule from the table's facts.
"""

from __future__ import annotations



from functrans.core.avals import get_aval, is_float
from functrans.core.trace import PrimalTracer, Trace
from functrans.transforms.laplacian._blocks import (_Scaled, _dense, _fixed, _fold_scale,
                                                    _folds_scale, _keeps_scale)
from functrans.transforms.laplacian._rules import _elementwise_rule, _linear_rule, _rule_for


# --- the tracer and its trace ----------------------------------------------------------------

class LaplacianTracer(PrimalTracer):
    """primal, grad (n, *shape) and second (shape, or (n, *shape) in diag mode); None = zero."""

    __slots__ = ("grad", "second")

    def __init__(self, trace, primal, grad, second):
        super().__init__(trace, primal)
        self.grad = grad
        self.second = second


class LaplacianTrace(Trace):
    __slots__ = ()

    def pure(self, val):
        return LaplacianTracer(self, val, None, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        xs = [t.primal for t in tracers]
        gs = [t.grad for t in tracers]
        ss = [t.second for t in tracers]
        if all(g is None for g in gs) and all(s is None for s in ss):
            out = prim.bind(*xs, **params)
            if prim.multiple_results:
                return [LaplacianTracer(self, o, None, None) for o in out]
            return LaplacianTracer(self, out, None, None)
        out_avals = prim.abstract_eval(*[get_aval(x) for x in xs], **params)
        out_avals = out_avals if prim.multiple_results else [out_avals]
        if not any(is_float(a.dtype) for a in out_avals):  # comparisons, integer ops
            out = prim.bind(*xs, **params)
            if prim.multiple_results:
                return [LaplacianTracer(self, o, None, None) for o in out]
            return LaplacianTracer(self, out, None, None)
        cfg = self.main.global_data
        carrying = [i for i, g in enumerate(gs) if g is not None]
        rule = _rule_for(prim, carrying)
        if rule is _linear_rule and all(_fixed(gs[i]) for i in carrying):
            outs = rule(prim, params, xs, [None if g is None else g.base for g in gs], ss, cfg)
            outs = [(y, None if g is None else _Scaled(None, g), s)      # still fixed
                    for y, g, s in outs]
        elif rule is _elementwise_rule or (rule is _linear_rule and _keeps_scale(prim, gs)):
            outs = _elementwise_rule(prim, params, xs, gs, ss, cfg)
        elif rule is _linear_rule and _folds_scale(prim, params, xs, gs):
            outs = [_fold_scale(prim, params, xs, gs, ss, cfg)]
        else:
            outs = rule(prim, params, xs, [_dense(g) for g in gs], ss, cfg)
        tracers_out = [LaplacianTracer(self, y, g, s) for y, g, s in outs]
        return tracers_out if prim.multiple_results else tracers_out[0]
