"""Backward programs: the library's VJP of one op at one signature, in PyTorch's convention,
staged once into a jaxpr (inputs, outputs, cotangents) -> input cotangents, cached, and compiled
(plain backward) or evaluated on tensors (create_graph). What it reads after DCE is what a node
saves; a rule reading the op's own output reads the saved output (exp keeps its result)."""

from __future__ import annotations

import math

import numpy as np

from functrans.core.avals import ShapedArray
from functrans.core.cache import LRUCache
from functrans.core.eval import eval_jaxpr
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from functrans.core.primitive import derivative_convention, derivative_grad_mode
from functrans.core.staging import trace_to_jaxpr
from functrans.errors import FunctransError
from functrans.primitives.elementwise import conj
from functrans.primitives.layout import instantiate
from functrans.primitives.layout import reshape_p
from functrans.transforms.toolkit import (compile_program, cse, dce, restrict_inputs,
                                          used_inputs)
from functrans.transforms.vjp import vjp


def _conj(x):
    """PyTorch's complex gradient is the conjugate of JAX's cotangent: conj(vjp(conj(g)))."""
    return conj(x) if np.dtype(x.dtype).kind == "c" else x


class BackwardProgram:
    """`jaxpr`: (used inputs, used outputs, cotangents) -> cotangents of the `diff_inputs`.
    `error`: why none could be built (raised when backward reaches it). `graph`: None, or what
    builds the create_graph program when a rule read the grad mode. `zero_tensor`: the
    derivative is PyTorch's efficient zero tensor (Op.zero_tensor_derivative)."""

    __slots__ = ("jaxpr", "consts", "used_inputs", "used_outputs", "diff_inputs", "in_avals",
                 "out_avals", "fn", "error", "graph", "zero_tensor")

    def __init__(self, jaxpr, consts, used_inputs, used_outputs, diff_inputs, in_avals,
                 out_avals, error=None):
        self.jaxpr, self.consts, self.in_avals, self.out_avals = jaxpr, consts, in_avals, out_avals
        self.used_inputs, self.used_outputs = used_inputs, used_outputs
        self.diff_inputs, self.error, self.graph, self.zero_tensor = diff_inputs, error, None, False
        # an input may pass straight through: the engine never writes into what `fn` returns
        self.fn = None if error else compile_program(ClosedJaxpr(jaxpr, consts),
                                                     may_return_inputs=True).fn

    def run_tensors(self, args):
        """The program on recording tensors (create_graph=True)."""
        if self.graph is None:
            return eval_jaxpr(self.jaxpr, self.consts, *args)
        if not isinstance(self.graph, BackwardProgram):
            self.graph = self.graph()
        g = self.graph
        n_in, n_out = len(self.used_inputs), len(self.used_outputs)
        # the node saved what this program reads: pick what the other one reads from that
        picked = [args[self.used_inputs.index(i)] for i in g.used_inputs]
        picked += [args[n_in + self.used_outputs.index(k)] for k in g.used_outputs]
        return eval_jaxpr(g.jaxpr, g.consts, *picked, *args[n_in + n_out:])


PROGRAMS = LRUCache(4096, name="functrans.torch backward programs")


def params_key(params) -> tuple | None:
    """`params` as a cache key, each value with its type (1, 1.0, True; 0.0, -0.0 stay apart),
    or None when a value cannot be hashed (an array, a slice)."""
    if not params:
        return ()
    try:
        key = tuple([(k, _value_key(v)) for k, v in params.items()])
        hash(key)
    except TypeError:
        return None
    return key


def _value_key(v):
    t = type(v)
    if t is tuple or t is list:
        return (t, *[_value_key(u) for u in v])
    if isinstance(v, (float, np.floating)):
        return (t, v, math.copysign(1.0, v))
    return (t, v)


def program_key(op, params, vals, needs) -> tuple | None:
    """The key of `op(*vals, **params)`'s backward program, or None if params cannot be one."""
    pkey = params_key(params) if params else ()
    if pkey is None:
        return None
    if len(vals) == 1:
        v = vals[0]
        return (op, pkey, ((v.shape, v.dtype),), needs)
    if len(vals) == 2:
        v, w = vals
        return (op, pkey, ((v.shape, v.dtype), (w.shape, w.dtype)), needs)
    return (op, pkey, tuple([(v.shape, v.dtype) for v in vals]), needs)


def get_program(op, params, vals, needs, outs):
    """The cached backward program of `op(*vals, **params)` (results `outs`) for `needs`."""
    key = program_key(op, params, vals, needs)
    prog = PROGRAMS.get(key) if key is not None else None
    if prog is None:
        in_avals = [ShapedArray(v.shape, v.dtype) for v in vals]
        out_avals = [ShapedArray(o.shape, o.dtype) for o in outs]
        diff = tuple(i for i, n in enumerate(needs) if n)
        try:
            prog = build_program(op, params, in_avals, diff, out_avals)
        except FunctransError as e:
            prog = BackwardProgram(None, (), tuple(range(len(vals))), (), diff, in_avals,
                                   out_avals, error=e)
        if key is not None:
            prog = PROGRAMS.put(key, prog)
    return prog


def build_program(op, params, in_avals, diff, out_avals, grad_mode=False) -> BackwardProgram:
    """The backward program, for grad mode `grad_mode` (on under create_graph=True)."""
    n_in, n_out = len(in_avals), len(out_avals)
    mode_read = []

    def fun(*args):
        xs, cts = args[:n_in], args[n_in:]

        def f(*d):  # the op as a function of the inputs it differentiates
            given = dict(zip(diff, d))
            return op.traced(*[given.get(i, x) for i, x in enumerate(xs)], **params)

        # PyTorch's derivative where a row states it
        with derivative_convention("torch"), derivative_grad_mode(grad_mode) as read:
            outs, pullback = vjp(f, *[xs[i] for i in diff])
            outs = list(outs) if op.multiple else [outs]
            cts = [_conj(c) for c in cts]
            in_cts = pullback(list(cts) if op.multiple else cts[0])
            mode_read.extend(read)
        return [*outs, *[_conj(instantiate(c)) for c in in_cts]]

    closed = trace_to_jaxpr(fun, [*in_avals, *out_avals], name="functrans.torch backward")
    # an output that only reshapes a value the op computed (prod with keepdim=True) is that
    # value, saved: a rule reading the value reads the saved output, as PyTorch's do
    reshaped = {e.outvars[0]: e.invars[0] for e in closed.jaxpr.eqns
                if e.primitive.facts.get("reshape_like") and len(e.invars) == 1
                and e.outvars[0] in closed.jaxpr.outvars[:n_out] and type(e.invars[0]) is Var
                and e.invars[0] not in closed.jaxpr.invars}
    closed = cse(closed, keep=[*closed.jaxpr.outvars[:n_out], *reshaped.values()])
    jaxpr = closed.jaxpr
    in_vars, ct_vars = jaxpr.invars[:n_in], jaxpr.invars[n_in:]
    fwd_outs, in_ct_vars = jaxpr.outvars[:n_out], jaxpr.outvars[n_out:]
    # the forward outputs, as recomputed inside the program, become inputs of their own
    out_vars = [Var(a) for a in out_avals]
    subst = {v: o for v, o in zip(fwd_outs, out_vars) if type(v) is Var and v not in in_vars}
    views = []
    for v, o in zip(fwd_outs, out_vars):
        inner = reshaped.get(v)
        if inner is not None and subst.get(v) is o and inner not in subst:
            subst[inner] = Var(inner.aval)
            views.append(Eqn(reshape_p, [o], [subst[inner]],
                             {"new_sizes": tuple(inner.aval.shape)}))
    eqns = views + [e for e in jaxpr.eqns if not any(o in subst for o in e.outvars)]
    eqns = [e._replace(invars=[subst.get(a, a) if type(a) is Var else a for a in e.invars])
            for e in eqns]
    outvars = [subst.get(a, a) if type(a) is Var else a for a in in_ct_vars]
    # dead equations and constants go; what the program still reads is what the node saves
    full = dce(ClosedJaxpr(Jaxpr(jaxpr.constvars, [*in_vars, *out_vars, *ct_vars], outvars,
                                 eqns), closed.consts))
    used = used_inputs(full)
    used_in = tuple(i for i in range(n_in) if used[i])
    used_out = tuple(k for k in range(n_out) if used[n_in + k])
    final = restrict_inputs(full, used[:n_in + n_out] + [True] * len(ct_vars))
    prog = BackwardProgram(final.jaxpr, final.consts, used_in, used_out, diff, in_avals,
                           out_avals)
    prog.zero_tensor = op.zero_tensor_derivative
    if mode_read and not grad_mode:
        prog.graph = lambda: build_program(op, params, in_avals, diff, out_avals, True)
    return prog
