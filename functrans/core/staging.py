"""Staging: recording primitive applications into a Jaxpr instead of running them.

`JaxprTrace` is the trace behind `make_jaxpr`, `jit` and the tangent half of `linearize`.
Concrete arrays it meets become constvars (never giant literals); concrete numpy and Python
scalars become `Literal`s (a 0-d dask or CuPy array stays a constvar: reading it into numpy
would compute its graph or copy it off the device, and CuPy refuses that); values of lower transforms become constvars too, so a staged program can close over
an outer transform's tracers.
"""

from __future__ import annotations

import threading

import numpy as np

from functrans.backend import FOREIGN_TYPES
from functrans.core.avals import get_aval, weak_scalar_type
from functrans.core.cache import LRUCache
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from functrans.core.trace import Trace, Tracer, new_main


class JaxprTracer(Tracer):
    """A value being staged: its type, and the atom (Var or Literal) naming it in the program."""

    __slots__ = ("_aval", "atom")

    def __init__(self, trace, aval, atom=None):
        self._trace = trace
        self._aval = aval
        self.atom = atom

    @property
    def aval(self):
        return self._aval

    dtype = property(lambda self: self._aval.dtype)
    shape = property(lambda self: self._aval.shape)
    ndim = property(lambda self: len(self._aval.shape))


class JaxprBuilder:
    """The program being recorded: equations in order, and the constants it closes over."""

    def __init__(self, capture: bool = False):
        self.eqns: list[Eqn] = []
        self.const_tracers: dict[int, JaxprTracer] = {}
        self.const_keepalive: list = []  # values keyed by id() above must outlive the trace
        self.constvars: list[Var] = []
        self.constvals: list = []
        self.capture = capture  # keep copies of array constants (see trace_to_jaxpr)

    def const(self, trace, val) -> JaxprTracer:
        tracer = self.const_tracers.get(id(val))
        if tracer is not None:
            return tracer
        aval = get_aval(val)
        # get_aval has registered a dask or CuPy array's type in FOREIGN_TYPES
        if not aval.shape and not isinstance(val, Tracer) and type(val) not in FOREIGN_TYPES:
            tracer = JaxprTracer(trace, aval, Literal(np.asarray(val, aval.dtype)[()], aval))
        else:
            tracer = JaxprTracer(trace, aval, Var(aval))
            self.constvars.append(tracer.atom)
            self.constvals.append(val.copy() if self.capture and isinstance(val, np.ndarray)
                                  else val)
        self.const_tracers[id(val)] = tracer
        self.const_keepalive.append(val)
        return tracer

    def to_closed_jaxpr(self, in_tracers, out_tracers) -> ClosedJaxpr:
        jaxpr = Jaxpr(self.constvars, [t.atom for t in in_tracers],
                      [t.atom for t in out_tracers], self.eqns)
        return ClosedJaxpr(jaxpr, self.constvals)


_abstract_cache = LRUCache(4096, name="abstract eval")


def abstract_eval(prim, avals, params):
    """`prim.abstract_eval`, memoised for the first-order rows of functrans/primitives, whose
    params are plain values (shapes, axes, dtypes): staging the same operation again (every
    eager `grad` stages its tangent program anew) then skips the shape checks. Rows defined
    elsewhere carry programs or functions in their params, which the cache would keep alive."""
    if not prim.module.startswith("functrans.primitives."):
        return prim.abstract_eval(*avals, **params)
    try:
        key = (prim, *avals, *params.items())
        out = _abstract_cache.get(key)
    except TypeError:  # an unhashable param (an index array): no caching
        return prim.abstract_eval(*avals, **params)
    if out is None:
        out = _abstract_cache.put(key, prim.abstract_eval(*avals, **params))
    return out


def _weak_results(dtype, avals_out):
    """Results of an operation on weak values only stay weak where the dtype is kept (JAX's
    rule: `2 * b` of a Python scalar b still takes the dtype of the array it meets later).
    A conversion (a `new_dtype` param) makes its result strong."""
    if isinstance(avals_out, list | tuple):
        return [a.weakened() if a.dtype == dtype else a for a in avals_out]
    return avals_out.weakened() if avals_out.dtype == dtype else avals_out


_weak_conversions = threading.local()  # .on while functrans.numpy promotes weak values


def convert_weak(convert, x, dtype):
    """`convert(x, dtype)` of a weak value to its Python type's own dtype (numpy promotion of
    a traced Python int meeting a float, say), keeping the result weak as JAX does; an explicit
    conversion (`astype`) makes its result strong."""
    _weak_conversions.on = True
    try:
        return convert(x, dtype)
    finally:
        _weak_conversions.on = False


class JaxprTrace(Trace):
    """Records every primitive into the builder held as the main trace's global data."""

    __slots__ = ()

    def new_arg(self, aval) -> JaxprTracer:
        return JaxprTracer(self, aval, Var(aval))

    def pure(self, val):
        return self.main.global_data.const(self, val)

    lift = pure
    pure_scalar = pure  # a Python scalar is staged as a weakly typed Literal

    def process_primitive(self, prim, tracers, params):
        avals_in = [t._aval for t in tracers]
        avals_out = abstract_eval(prim, avals_in, params)
        if avals_in and all(a.weak_type for a in avals_in):
            if "new_dtype" not in params:
                avals_out = _weak_results(avals_in[0].dtype, avals_out)
            elif getattr(_weak_conversions, "on", False):
                avals_out = _weak_results(avals_out.dtype, avals_out)
        invars = [t.atom for t in tracers]
        if prim.multiple_results:
            outs = [JaxprTracer(self, a, Var(a)) for a in avals_out]
            outvars = [t.atom for t in outs]
        else:
            out = JaxprTracer(self, avals_out, Var(avals_out))
            outs, outvars = out, [out.atom]
        self.main.global_data.eqns.append(Eqn(prim, invars, outvars, params))
        return outs


def trace_to_jaxpr(fun_flat, in_avals, *, name: str = "make_jaxpr", dynamic: bool = True,
                   capture_consts: bool = False) -> ClosedJaxpr:
    """Stage `fun_flat` (a function of flat arrays returning a flat list) into a ClosedJaxpr.

    `capture_consts`: the program keeps copies of the numpy arrays `fun_flat` closes over,
    taken at trace time, as JAX does (its arrays are immutable): a program that outlives the
    call (jit's cache, make_jaxpr's result) is unaffected by later in-place changes to the
    caller's arrays until it is traced again."""
    builder = JaxprBuilder(capture=capture_consts)
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
        # Python scalars stay weak: they take the dtype of the arrays they meet
        avals = [get_aval(as_value(x, "make_jaxpr")) for x in leaves]
        avals = [a.weakened() if weak_scalar_type(x) is not None else a
                 for a, x in zip(avals, leaves)]
        f_flat, out_tree = flatten_fun(lambda *d, **kw: f(*merge(d), **kw), in_tree,
                                       "make_jaxpr")
        # the caller owns the program: its constants are copies of the arrays the function
        # closed over, taken now (writing into one would otherwise change the other)
        closed = trace_to_jaxpr(f_flat, avals, name="make_jaxpr", capture_consts=True)
        closed.out_tree = out_tree.val
        return closed

    return wrapped
