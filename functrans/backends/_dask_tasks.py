"""Staging a part of a split program at a chunk's shape, and the picklable task that runs it.

A task travels to the workers as its program's equations by primitive name, its constants and
its packing layout; each worker process compiles it once (keyed by the task's token).
"""

from __future__ import annotations

import uuid

import numpy as np

from functrans.core.avals import ShapedArray
from functrans.core.cache import LRUCache
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal
from functrans.core.staging import trace_to_jaxpr
from functrans.core.trace import bind
from functrans.primitives.registry import REGISTRY
from functrans.transforms.toolkit.codegen import compile_program


def _chunk_aval(plan, v, rows):
    """`v`'s aval in a chunk: `rows` maps each number of points to the chunk's rows."""
    if rows is None or v not in plan.points:
        return v.aval
    size, axis = plan.points[v]
    shape = list(v.aval.shape)
    shape[axis] = rows[size]
    return ShapedArray(tuple(shape), v.aval.dtype, getattr(v.aval, "weak_type", False))


def _params_at(plan, i, eqn, rows):
    """The equation's params for a chunk of `rows` points (None: the whole program)."""
    rewrite = plan.rewrite.get(i)
    if rows is None or rewrite is None:
        return eqn.params
    return rewrite(eqn.params, rows[plan.points[eqn.outvars[0]][0]])


def _stage(plan, invars, outvars, eqn_ids, rows, name) -> ClosedJaxpr:
    jaxpr, consts = plan.closed.jaxpr, plan.closed.consts

    def run(*vals):
        env = dict(zip(jaxpr.constvars, consts))
        env.update(zip(invars, vals))

        def read(a):
            return a.val if type(a) is Literal else env[a]

        for i in eqn_ids:
            eqn = jaxpr.eqns[i]
            out = bind(eqn.primitive, *map(read, eqn.invars), **_params_at(plan, i, eqn, rows))
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, out))
            else:
                env[eqn.outvars[0]] = out
        return [read(v) for v in outvars]

    avals = [_chunk_aval(plan, v, rows) for v in invars]
    return trace_to_jaxpr(run, avals, name=name, capture_consts=True)


# --- tasks: staged programs that travel to the workers ---------------------------------------

def _portable(value):
    """`value` with every primitive replaced by its name (primitives hold rule functions that
    do not pickle); `_restore` undoes it in the worker process."""
    if isinstance(value, ClosedJaxpr):
        return ("closed", _portable(value.jaxpr), list(value.consts))
    if isinstance(value, Jaxpr):
        eqns = [(e.primitive.name, e.invars, e.outvars,
                 {k: _portable(p) for k, p in e.params.items()}) for e in value.eqns]
        return ("jaxpr", value.constvars, value.invars, value.outvars, eqns)
    if isinstance(value, tuple | list):
        return type(value)(_portable(p) for p in value)
    return value


def _restore(value):
    if isinstance(value, tuple) and value and value[0] == "closed":
        return ClosedJaxpr(_restore(value[1]), value[2])
    if isinstance(value, tuple) and value and value[0] == "jaxpr":
        _, constvars, invars, outvars, eqns = value
        return Jaxpr(constvars, invars, outvars,
                     [Eqn(REGISTRY[n], i, o, {k: _restore(p) for k, p in params.items()})
                      for n, i, o, params in eqns])
    if isinstance(value, tuple | list):
        return type(value)(_restore(p) for p in value)
    return value


_COMPILED = LRUCache(64, name="dask chunk programs")


class _Task:
    """A staged program run on numpy blocks: reduced inputs arrive packed (one vector per kind
    of reduction), partial outputs leave packed; compiled once per process (the program travels
    as names and arrays, the compiled code never does)."""

    def __init__(self, closed, unpack, pack):
        self.closed = closed
        self.unpack = unpack    # per reduced input: (packed vector index, offset, shape)
        self.pack = pack        # per packed output: indices of the program outputs it holds
        self.token = uuid.uuid4().hex  # names the program in the worker's cache
        self._program = None

    def __dask_tokenize__(self):
        return self.token

    def __getstate__(self):
        if self._program is None:  # built once, on the first trip out
            self._program = _portable(self.closed)
        return {"program": self._program, "unpack": self.unpack, "pack": self.pack,
                "token": self.token}

    def __setstate__(self, state):
        self.closed = None
        self._program = state["program"]
        self.unpack, self.pack, self.token = state["unpack"], state["pack"], state["token"]

    def _fn(self):
        # with a workspace (buffers reused from call to call, as jit's own entries), safe
        # under threads: a call finding it busy runs on fresh arrays
        if self.closed is None:
            return _COMPILED.get_or_build(
                self.token, lambda: compile_program(_restore(self._program), workspace=True).fn)
        return compile_program(self.closed, workspace=True).fn

    def __call__(self, n_plain, *args):
        plain, packed = list(args[:n_plain]), args[n_plain:]
        for j, off, shape in self.unpack:
            size = int(np.prod(shape))
            plain.append(np.asarray(packed[j]).reshape(-1)[off:off + size].reshape(shape))
        outs = self._fn()(*[np.asarray(x) for x in plain])
        packed_outs = [np.concatenate([np.ravel(outs[k]) for k in idx])[None]
                       for idx in self.pack]
        used = {k for idx in self.pack for k in idx}
        return (*packed_outs, *[o for k, o in enumerate(outs) if k not in used])
