"""Forward mode: a trace whose tracers carry (primal, tangent) and apply each primitive's JVP rule.

Known-zero tangents stay symbolic (`Zero`): a primitive whose tangents are all zero is simply
re-bound on its primals, and its JVP rule never runs.
"""

from __future__ import annotations

import numpy as np

from functrans.core.avals import ShapedArray, get_aval, is_float
from functrans.core.ownership import unaliased
from functrans.core.primitive import jvp_rule
from functrans.core.pytree_fun import as_value, check_callable, flatten_fun
from functrans.core.symbolic import Zero
from functrans.core.trace import PrimalTracer, Trace, Tracer, new_main
from functrans.dtypes import float0
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.layout import instantiate
from functrans.primitives.layout import instantiate as materialize
from functrans.tree_util import tree_flatten, tree_unflatten


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)
    differentiated = True

    def __init__(self, trace, primal, tangent):
        self._trace = trace     # written out: one frame less on the eager path
        self.primal = primal
        self.tangent = tangent
        self._aval = None

    # one property call, not two (Tracer's go through `aval`): every functrans.numpy call
    # reads its operands' dtype
    @property
    def dtype(self):
        aval = self._aval
        return (aval if aval is not None else self.aval).dtype

    @property
    def shape(self):
        aval = self._aval
        return (aval if aval is not None else self.aval).shape

    @property
    def ndim(self):
        aval = self._aval
        return len((aval if aval is not None else self.aval).shape)


class JVPTrace(Trace):
    __slots__ = ()

    def pure(self, val):
        aval = get_aval(val)
        tracer = JVPTracer(self, val, Zero(aval))
        tracer._aval = aval
        return tracer

    lift = pure

    def process_primitive(self, prim, tracers, params):
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        for t in tangents:
            if type(t) is not Zero:
                break
        else:  # all tangents zero: the rule need not run
            out = prim.bind(*primals, **params)
            if prim.multiple_results:
                return [JVPTracer(self, o, Zero(get_aval(o))) for o in out]
            return JVPTracer(self, out, Zero(get_aval(out)))
        rule = jvp_rule(prim)
        primal_out, tangent_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)


def tangent_aval(aval: ShapedArray) -> ShapedArray | None:
    """Tangent type of a primal type: itself for floats, none (always zero) for ints and bools."""
    return aval if is_float(aval.dtype) else None


def jvp_flat(fun_flat, primals, tangents, *, name="jvp"):
    """Run `fun_flat` on JVP tracers; returns (primals_out, tangents_out) with Zero kept."""
    with new_main(JVPTrace, name=name) as main:
        trace = main.trace
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = [trace.full_raise(o) for o in fun_flat(*ins)]
        return [o.primal for o in outs], [o.tangent for o in outs]


def jvp(f, primals, tangents, has_aux=False):
    """Forward-mode derivative: (f(*primals), J_f(primals) @ tangents).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, y_dot = ft.jvp(fnp.sin, (0.0,), (2.0,))
    >>> float(y), float(y_dot)
    (0.0, 2.0)
    """
    check_callable(f, "jvp")
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError("jvp: primals and tangents must be tuples (one entry per positional "
                        f"argument of f), got {type(primals).__name__} and "
                        f"{type(tangents).__name__}. Write jvp(f, (x,), (v,)).")
    p_flat, p_tree = tree_flatten((tuple(primals), {}))
    t_flat, t_tree = tree_flatten((tuple(tangents), {}))
    if p_tree != t_tree:
        raise TypeError(f"jvp: primals and tangents must have the same structure, got {p_tree} "
                        f"and {t_tree}.")
    p_flat = [as_value(x, "jvp primals") for x in p_flat]
    t_in = [tangent_input(i, get_aval(p), t, "jvp")
            for i, (p, t) in enumerate(zip(p_flat, as_values(t_flat)))]
    f_flat, out_tree = flatten_fun(f, p_tree, "jvp")
    p_out, t_out = jvp_flat(f_flat, p_flat, t_in)
    outs = unaliased([*p_out, *[tangent_output(t) for t in t_out]], [*p_flat, *t_flat])
    p_out, t_out = outs[:len(p_out)], outs[len(p_out):]
    if has_aux:
        pair, t_pair = tree_unflatten(out_tree.val, p_out), tree_unflatten(out_tree.val, t_out)
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError("jvp: has_aux=True: f must return a pair (output, aux), got "
                            f"{out_tree.val}.")
        return pair[0], t_pair[0], pair[1]
    return tree_unflatten(out_tree.val, p_out), tree_unflatten(out_tree.val, t_out)


def as_values(xs):
    """Each of `xs` checked as a traceable value (see as_value), for jvp's tangents."""
    return [as_value(x, "jvp tangents") for x in xs]


def tangent_input(i: int, primal_aval: ShapedArray, t, where: str):
    """The tangent `t` given for primal `i`, checked as JAX checks it: a float primal takes a
    float tangent of its shape (converted to its dtype); an integer or boolean primal, which
    has no derivative, takes a float0 tangent (a known zero here) and nothing else, so a float
    tangent is never silently dropped."""
    ta = get_aval(t)
    if primal_aval.shape != ta.shape:
        raise ShapeError(f"{where}: primal {i} has shape {primal_aval.shape} but its tangent "
                         f"has shape {ta.shape}; each tangent must match its primal's shape.")
    differentiable = tangent_aval(primal_aval) is not None
    if differentiable != (ta.dtype != float0):
        expected = primal_aval.dtype.name if differentiable else "float0"
        fix = (f"Pass a float tangent, e.g. np.ones({primal_aval.shape}, "
               f"np.{primal_aval.dtype.name})." if differentiable else
               f"An integer or boolean input has no derivative: pass "
               f"np.zeros({primal_aval.shape}, functrans.dtypes.float0) as its tangent, or make "
               "the primal a float (3.0 instead of 3, or x.astype(float)) to differentiate "
               "with respect to it.")
        raise DTypeError(
            f"{where}: primal and tangent arguments do not match; dtypes must be equal, or in "
            "case of int/bool primal dtype the tangent dtype must be float0. Got primal "
            f"{i} of dtype {primal_aval.dtype.name} and so expected tangent dtype {expected}, "
            f"but got tangent dtype {_dtype_name(ta.dtype)} instead. {fix}")
    if not differentiable:
        return Zero(primal_aval)
    if ta.dtype.kind == "c" and primal_aval.dtype.kind != "c":
        # converting would drop the imaginary part: a silently wrong derivative
        raise DTypeError(
            f"{where}: primal {i} is real ({primal_aval.dtype.name}) but its tangent is complex "
            f"({ta.dtype.name}); a real input moves along the real axis only. Pass a real "
            "tangent, or make the primal complex (x.astype(complex)) to move it in the complex "
            "plane.")
    if ta.dtype != primal_aval.dtype and not isinstance(t, Tracer):
        return np.asarray(t, primal_aval.dtype)
    return t


def tangent_output(t):
    """An output tangent materialised: zeros where it is known zero; float0 zeros for an
    integer or boolean output, as JAX returns."""
    if type(t) is Zero and tangent_aval(t.aval) is None:
        return np.zeros(t.aval.shape, float0)
    return instantiate(t)


def _dtype_name(dtype) -> str:
    return "float0" if dtype == float0 else dtype.name


def jvp_jaxpr(closed, nonzeros, instantiate=False):
    """The JVP program of `closed` (IR in, IR out).

    Inputs: (primals..., tangents of the inputs flagged in `nonzeros`...).
    Outputs: (primal outputs..., tangents of the outputs flagged in the returned
    `out_nonzeros`...). `instantiate` (bool or one per output) forces zero tangents out.
    Returns (ClosedJaxpr, out_nonzeros).
    """
    from functrans.core.eval import eval_jaxpr
    from functrans.core.staging import trace_to_jaxpr
    n = len(closed.in_avals)
    n_out = len(closed.out_avals)
    inst = [instantiate] * n_out if isinstance(instantiate, bool) else list(instantiate)
    t_avals = [a for a, nz in zip(closed.in_avals, nonzeros) if nz]
    out_nz_box = []

    def fun(*args):
        primals, t_iter = args[:n], iter(args[n:])
        tangents = [next(t_iter) if nz else Zero(a) for a, nz in zip(closed.in_avals, nonzeros)]
        p_out, t_out = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                primals, tangents)
        out_nz = [type(t) is not Zero or i for t, i in zip(t_out, inst)]
        out_nz_box.append(out_nz)
        return [*p_out, *[materialize(t) for t, nz in zip(t_out, out_nz) if nz]]

    jaxpr = trace_to_jaxpr(fun, [*closed.in_avals, *t_avals], name="jvp")
    return jaxpr, out_nz_box[0]

