"""Staging: recording primitive applications into a Jaxpr instead of running them.

`JaxprTrace` is the trace behind `make_jaxpr`, `jit` and the tangent half of `linearize`.
Concrete arrays it meets become constvars (never giant literals); concrete scalars become
`Literal`s; values of lower transforms become constvars too, so a staged program can close over
an outer transform's tracers.
"""

from __future__ import annotations

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from functrans.core.trace import Trace, Tracer, new_main


class JaxprTracer(Tracer):
    __slots__ = ("_aval",)

    def __init__(self, trace, aval):
        self._trace = trace
        self._aval = aval

    @property
    def aval(self):
        return self._aval


class JaxprBuilder:
    """The program being recorded: equations in order, and the atom bound to each tracer."""

    def __init__(self):
        self.eqns: list[Eqn] = []
        self.atoms: dict[int, Var | Literal] = {}
        self.tracers: list[JaxprTracer] = []  # keeps ids stable while recording
        self.const_tracers: dict[int, JaxprTracer] = {}
        self.constvars: list[Var] = []
        self.constvals: list = []

    def new_var(self, tracer: JaxprTracer) -> Var:
        v = Var(tracer.aval)
        self.atoms[id(tracer)] = v
        self.tracers.append(tracer)
        return v

    def atom(self, tracer: JaxprTracer) -> Var | Literal:
        return self.atoms[id(tracer)]

    def const(self, trace, val) -> JaxprTracer:
        tracer = self.const_tracers.get(id(val))
        if tracer is not None:
            return tracer
        aval = get_aval(val)
        tracer = JaxprTracer(trace, aval)
        self.tracers.append(tracer)
        if not isinstance(val, Tracer) and aval.ndim == 0:
            self.atoms[id(tracer)] = Literal(np.asarray(val, aval.dtype)[()], aval)
        else:
            v = Var(aval)
            self.atoms[id(tracer)] = v
            self.constvars.append(v)
            self.constvals.append(val)
        self.const_tracers[id(val)] = tracer
        self.tracers.append(val)  # keep the value alive so its id is not reused
        return tracer

    def to_closed_jaxpr(self, in_tracers, out_tracers) -> ClosedJaxpr:
        invars = [self.atoms[id(t)] for t in in_tracers]
        outvars = [self.atoms[id(t)] for t in out_tracers]
        jaxpr = Jaxpr(self.constvars, invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, self.constvals)


class JaxprTrace(Trace):
    """Records every primitive into the builder held as the main trace's global data."""

    __slots__ = ()

    def new_arg(self, aval) -> JaxprTracer:
        tracer = JaxprTracer(self, aval)
        self.main.global_data.new_var(tracer)
        return tracer

    def pure(self, val):
        return self.main.global_data.const(self, val)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        builder = self.main.global_data
        avals_out = prim.abstract_eval(*[t.aval for t in tracers], **params)
        invars = [builder.atoms[id(t)] for t in tracers]
        if prim.multiple_results:
            outs = [JaxprTracer(self, a) for a in avals_out]
        else:
            outs = [JaxprTracer(self, avals_out)]
        outvars = [builder.new_var(t) for t in outs]
        builder.eqns.append(Eqn(prim, invars, outvars, params))
        return outs if prim.multiple_results else outs[0]


def trace_to_jaxpr(fun_flat, in_avals, *, name: str = "make_jaxpr",
                   dynamic: bool = True) -> ClosedJaxpr:
    """Stage `fun_flat` (a function of flat arrays returning a flat list) into a ClosedJaxpr."""
    builder = JaxprBuilder()
    with new_main(JaxprTrace, builder, dynamic=dynamic, name=name) as main:
        trace = main.trace
        in_tracers = [trace.new_arg(a) for a in in_avals]
        outs = fun_flat(*in_tracers)
        out_tracers = [trace.full_raise(o) for o in outs]
        return builder.to_closed_jaxpr(in_tracers, out_tracers)


def make_jaxpr(f, static_argnums=()):
    """Trace `f` on example arguments and return its program as a ClosedJaxpr.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> print(ft.make_jaxpr(lambda x: fnp.sum(fnp.sin(x)))(fnp.ones(3)))
    { lambda ; a:f64[3]. let
        b:f64[3] = sin a
        c:f64[] = reduce_sum[axes=(0,)] b
      in (c,) }
    """
    from functrans.core.pytree_fun import as_value, flatten_fun, split_static
    from functrans.tree_util import tree_flatten

    def wrapped(*args, **kwargs):
        dyn, merge, _ = split_static(args, static_argnums, "make_jaxpr")
        leaves, in_tree = tree_flatten((tuple(dyn), kwargs))
        leaves = [as_value(x, "make_jaxpr") for x in leaves]
        f_flat, out_tree = flatten_fun(lambda *d, **kw: f(*merge(d), **kw), in_tree)
        closed = trace_to_jaxpr(f_flat, [get_aval(x) for x in leaves], name="make_jaxpr")
        closed.out_tree = out_tree.val
        return closed

    return wrapped
