"""Compiling a program to one Python function of straight-line backend calls.

Every name in the generated source comes from the IR's numbering: inputs a0.., constants c0..,
literals k0.., intermediate values v0.., functions f0.., parameter values p0.. (all bound in the
function's globals). No user string (function names, primitive names) ever enters the code,
except a primitive name in a trailing comment when it is a plain identifier. Each intermediate
is deleted right after its last use, so buffers die as early as they would in eager code, and
a ufunc whose operand dies at that call and owns its buffer writes into it (`out=`) instead
of allocating: the same result bits, less memory traffic.

    def program(a0, a1):
        v0 = f0(a0)                  # sin
        v1 = f1(v0, k0)              # mul
        del v0
        return [v1]
"""

from __future__ import annotations

import itertools
import linecache
import weakref

import numpy as np

from functrans.backend import get_backend, xp
from functrans.core.ir import ClosedJaxpr, Literal
from functrans.transforms.jit.facts import fact
from functrans.transforms.jit.rewrite import literal_key

_program_ids = itertools.count()
INPLACE_MIN_SIZE = 1024  # below this, out= costs about what the allocation it saves does


class CompiledProgram:
    """A compiled program: call it with the program's inputs, get the list of its outputs."""

    __slots__ = ("fn", "source", "n_in", "__weakref__")

    def __init__(self, fn, source: str, n_in: int):
        self.fn = fn
        self.source = source
        self.n_in = n_in

    def __call__(self, *args):
        return self.fn(*args)


class _Globals:
    """Values bound in the generated function's globals, each named by its role and index."""

    def __init__(self):
        # warnings raised inside the program are attributed to functrans, as in eager mode
        self.ns: dict = {"__builtins__": {}, "__name__": "functrans.transforms.jit.program"}
        self._ids: dict = {}
        self._counts: dict = {}

    def bind(self, prefix: str, value, key=None) -> str:
        key = (prefix, id(value)) if key is None else key
        name = self._ids.get(key)
        if name is None:
            i = self._counts.get(prefix, 0)
            self._counts[prefix] = i + 1
            name = self._ids[key] = f"{prefix}{i}"
            self.ns[name] = value
        return name


def _call_target(eqn):
    """(function, extra positional args, keyword args) for one equation."""
    fast = fact(eqn.primitive, "fast_impl")
    if fast is not None:
        target = fast([a.aval for a in eqn.invars], [v.aval for v in eqn.outvars], eqn.params)
        if target is not None:
            return target
    return eqn.primitive.impl, (), dict(eqn.params)


def generate_source(closed: ClosedJaxpr):
    """(source text, globals dict) of the function computing `closed`."""
    jaxpr = closed.jaxpr
    g = _Globals()
    names: dict = {}
    for i, v in enumerate(jaxpr.invars):
        names[v] = f"a{i}"
    for v, c in zip(jaxpr.constvars, closed.consts):
        names[v] = g.bind("c", c)

    def atom(a):
        if type(a) is Literal:
            return g.bind("k", a.val, key=literal_key(a))
        return names[a]

    last_use: dict = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for a in eqn.invars:
            if type(a) is not Literal:
                last_use[a] = i
    keep_alive = {a for a in jaxpr.outvars if type(a) is not Literal}

    # buffer reuse: a ufunc may write its result into an operand that dies here, when that
    # operand's buffer is the program's own (a fresh ufunc result nothing else can alias)
    owned: set = set()
    aliased: set = set()

    lines = [f"def program({', '.join(names[v] for v in jaxpr.invars)}):"]
    counter = itertools.count()
    for i, eqn in enumerate(jaxpr.eqns):
        fn, extra, kwargs = _call_target(eqn)
        if not all(k.isidentifier() for k in kwargs):
            raise ValueError(f"jit: a param name of primitive {eqn.primitive} is not a Python "
                             f"identifier ({sorted(kwargs)}); rename it in its row.")
        args = [atom(a) for a in eqn.invars]
        args += [g.bind("p", x) for x in extra]
        args += [f"{k}={g.bind('p', x)}" for k, x in kwargs.items()]
        is_ufunc = isinstance(fn, np.ufunc) and not extra and not kwargs \
            and not eqn.primitive.multiple_results
        if is_ufunc:
            out_aval = eqn.outvars[0].aval
            reuse = None
            if out_aval.size >= INPLACE_MIN_SIZE and fn.signature is None:  # elementwise
                reuse = next((a for a in eqn.invars if a in owned and a not in aliased
                              and last_use[a] == i and a not in keep_alive
                              and a.aval == out_aval), None)
            if reuse is not None:
                args.append(f"out={names[reuse]}")
            if out_aval.ndim:
                owned.add(eqn.outvars[0])
        else:
            aliased.update(a for a in eqn.invars if type(a) is not Literal)
        for v in eqn.outvars:
            names[v] = f"v{next(counter)}"
        target = ", ".join(names[v] for v in eqn.outvars)
        if eqn.primitive.multiple_results:
            target = f"{target}," if len(eqn.outvars) == 1 else target or "_"
        line = f"    {target} = {g.bind('f', fn)}({', '.join(args)})"
        if eqn.primitive.name.isidentifier():
            line = f"{line:<56}# {eqn.primitive.name}"
        lines.append(line)
        # intermediates used here for the last time, and outputs nothing reads
        dead = [a for a in dict.fromkeys(eqn.invars) if type(a) is not Literal
                and last_use.get(a) == i and a not in keep_alive and names[a][0] == "v"]
        dead += [v for v in eqn.outvars if v not in last_use and v not in keep_alive]
        if dead:
            lines.append(f"    del {', '.join(names[a] for a in dead)}")
    # a constant returned as an output is copied: callers own (and may mutate) what they get
    consts = set(jaxpr.constvars)
    outs = [f"{g.bind('f', xp.array)}({atom(a)})" if a in consts else atom(a)
            for a in jaxpr.outvars]
    lines.append(f"    return [{', '.join(outs)}]")
    return "\n".join(lines) + "\n", g.ns


def compile_program(closed: ClosedJaxpr) -> CompiledProgram:
    """The compiled function of `closed`, built once per program object and backend."""
    key = ("compiled", id(get_backend()))
    compiled = closed._cache.get(key)
    if compiled is None:
        source, ns = generate_source(closed)
        filename = f"<functrans jit program {next(_program_ids)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), ns)
        compiled = CompiledProgram(ns["program"], source, len(closed.jaxpr.invars))
        weakref.finalize(compiled, linecache.cache.pop, filename, None)
        closed._cache[key] = compiled
    return compiled
