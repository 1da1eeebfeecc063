"""Fused elementwise clusters as numba loop kernels: jit's fast backend (the extra "fast").

A numpy call costs about a microsecond of dispatch whatever the size of its operands, so a
chain of cheap elementwise equations on small arrays is dispatch from end to end. This module
groups such equations (float64 or bool values of one shape, and 0-d ones) into clusters, and
compiles each cluster with numba into one loop over the elements that reads each input once and
writes only the values that leave the cluster. (Programs whose every value is 0-d are compiled
whole by `scalar`, straight to LLVM.)

Loops are spelled from the equations' call targets (the numpy function each row's impl or
`fast_impl` names, see SPELLINGS), never from which primitive an equation holds. Compiled
kernels are cached by their source text, so programs of the same structure share them.

Arithmetic is numpy's: division by zero, log(0), overflow give inf and nan (numba's numpy error
model), without numpy's warnings. Elementary functions come from the C math library (numba
calls it for sin, exp, ...), whose results may differ from numpy's vectorised ones in the last
bits: TOLERANCE bounds the difference per function, documented in docs/transforms/jit.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys

import numpy as np

import heapq

from functrans.core.cache import LRUCache
from functrans.core.ir import Eqn, Jaxpr, Literal
from functrans.core.primitive import Primitive

# relative difference from numpy's result allowed per elementary function (a few ulps)
TOLERANCE = 8 * np.finfo(np.float64).eps

# numpy function -> the expression computing it on scalars, valid in Python and in numba
SPELLINGS: dict = {
    np.add: "({0} + {1})", np.subtract: "({0} - {1})", np.multiply: "({0} * {1})",
    np.divide: "({0} / {1})", np.negative: "(-{0})", np.positive: "(+{0})",
    np.square: "({0} * {0})", np.reciprocal: "(1.0 / {0})", np.absolute: "abs({0})",
    np.maximum: "({0} if {0} >= {1} or {0} != {0} else {1})",
    np.minimum: "({0} if {0} <= {1} or {0} != {0} else {1})",
    np.less: "({0} < {1})", np.less_equal: "({0} <= {1})", np.greater: "({0} > {1})",
    np.greater_equal: "({0} >= {1})", np.equal: "({0} == {1})", np.not_equal: "({0} != {1})",
    np.logical_and: "({0} and {1})", np.logical_or: "({0} or {1})",
    np.logical_not: "(not {0})", np.where: "({1} if {0} else {2})",
    np.power: "math.pow({0}, {1})", np.arctan2: "math.atan2({0}, {1})",
    np.hypot: "math.hypot({0}, {1})",
    **{getattr(np, name): f"math.{spelled}({{0}})" for name, spelled in [
        ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("arcsin", "asin"),
        ("arccos", "acos"), ("arctan", "atan"), ("sinh", "sinh"), ("cosh", "cosh"),
        ("tanh", "tanh"), ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"),
        ("exp", "exp"), ("expm1", "expm1"), ("log", "log"), ("log1p", "log1p"),
        ("log2", "log2"), ("log10", "log10"), ("sqrt", "sqrt")]},
}
_KINDS = (np.dtype(np.float64), np.dtype(bool))


def available() -> bool:
    """Whether numba is installed (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def _spelling(eqn, target):
    fn, extra, kwargs = target
    if extra or kwargs or eqn.primitive.multiple_results:
        return None
    try:
        return SPELLINGS.get(fn)
    except TypeError:  # an unhashable callable
        return None


def _literal(a: Literal) -> str:
    """The Python expression of a 0-d float or bool literal (inf and nan through math)."""
    value = np.asarray(a.val).item()
    if a.aval.dtype.kind != "f":
        return repr(bool(value))
    value = float(value)
    if math.isnan(value):
        return "math.nan"
    if math.isinf(value):
        return "math.inf" if value > 0 else "(-math.inf)"
    return repr(value)


_KERNELS = LRUCache(256, name="numba kernels")


# where compiled kernels persist between processes (functrans.config's
# jax_compilation_cache_dir); None: in memory only
_cache_dir: list = [None]


def set_cache_dir(path) -> None:
    """Keep compiled kernels in the directory `path` (None: in memory only): each kernel's
    source is written there as a module and numba stores its machine code beside it, so a
    later process that meets the same kernel loads it instead of compiling it."""
    _cache_dir[0] = None if path is None else os.fspath(path)


def cache_dir() -> str | None:
    """The directory compiled kernels persist in, or None (see `set_cache_dir`)."""
    return _cache_dir[0]


def _kernel_function(source: str):
    """The Python function `kernel` of `source`: from a module in the cache directory (which
    numba's on-disk cache needs), or from the source alone."""
    if _cache_dir[0] is None:
        ns = {"math": math}
        exec(compile(source, "<functrans numba kernel>", "exec"), ns)
        return ns["kernel"]
    name = "functrans_kernel_" + hashlib.sha256(source.encode()).hexdigest()[:32]
    path = os.path.join(_cache_dir[0], name + ".py")
    if not os.path.exists(path):
        os.makedirs(_cache_dir[0], exist_ok=True)
        scratch = f"{path}.{os.getpid()}.tmp"
        with open(scratch, "w") as f:
            f.write("import math\n\n\n" + source)
        os.replace(scratch, path)  # atomic: another process never reads half a file
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.setdefault(name, module)  # numba's cache finds a kernel's module by name
    return sys.modules[name].kernel


def compile_kernel(source: str):
    """The numba-compiled `kernel` of `source`, built once per source text (and loaded from
    the cache directory, when one is set and holds it)."""
    kernel = _KERNELS.get(source)
    if kernel is None:
        import numba
        jitted = numba.njit(error_model="numpy", cache=_cache_dir[0] is not None)
        kernel = _KERNELS.put(source, jitted(_kernel_function(source)))
    return kernel


# --- fused elementwise clusters ----------------------------------------------------------------

# a transcendental function in a loop calls the C library once per element, ~15 ns, where
# numpy's vectorised loops take ~2 ns: it joins a cluster only on arrays this small, where
# numpy's dispatch (~0.4 us a call) is the larger cost
SMALL = 64

# the node standing for a cluster in the program codegen emits: not a primitive of the table
# (it is never traced, transformed or differentiated), only a call whose results are fresh
FUSED = Primitive("fused", multiple_results=True, module=__name__)
FUSED.facts = {"fresh_result": True}


def _fusible(eqn, target):
    """The spelling of `eqn` inside a loop kernel, or None: an elementwise function of float64
    or bool arrays of one shape (ndim >= 1) and 0-d values."""
    spelled = _spelling(eqn, target)
    if spelled is None:
        return None
    out = eqn.outvars[0].aval
    if out.ndim == 0 or out.dtype not in _KINDS:
        return None
    for a in eqn.invars:
        if a.aval.dtype not in _KINDS or a.aval.shape not in ((), out.shape):
            return None
        if type(a) is Literal and a.aval.shape:
            return None
    if "math." in spelled and out.size > SMALL:
        return None
    return spelled


def fuse(jaxpr, targets):
    """(equations, targets) of `jaxpr` with each cluster of two or more fusible equations
    (see `_fusible`) of one shape replaced by one FUSED equation calling a compiled loop
    kernel, in an order that respects every dependency. A fusible equation joins the cluster
    of an operand's producer, of its shape, unless a path from that cluster reaches it through
    an equation outside the cluster (which would then wait for itself); else it starts one."""
    spelled = [_fusible(e, t) for e, t in zip(jaxpr.eqns, targets)]
    if sum(x is not None for x in spelled) < 2:
        return jaxpr.eqns, targets
    order = _sunk(jaxpr.eqns, spelled)
    eqns = [jaxpr.eqns[i] for i in order]
    targets, spelled = [targets[i] for i in order], [spelled[i] for i in order]
    jaxpr = Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)
    members: list = []          # cluster -> indices of its equations
    node: dict = {}             # value -> the node making it: ("c", cluster) or ("e", index)
    preds: dict = {}            # node -> the nodes it reads from

    def reaches(start, target) -> bool:
        """Whether node `start` depends on node `target`."""
        seen, stack = set(), [start]
        while stack:
            n = stack.pop()
            if n == target:
                return True
            if n not in seen:
                seen.add(n)
                stack.extend(preds.get(n, ()))
        return False

    for i, e in enumerate(eqns):
        ins = [node[a] for a in e.invars if type(a) is not Literal and a in node]
        me = ("e", i)
        if spelled[i] is not None:
            shape = e.outvars[0].aval.shape
            # join the cluster of an operand's producer, of this shape, unless that cluster
            # reaches this equation through a node outside it (it would wait for itself)
            me = next((n for n in dict.fromkeys(ins) if n[0] == "c"
                       and eqns[members[n[1]][0]].outvars[0].aval.shape == shape
                       and not any(m != n and reaches(m, n) for m in ins)), None)
            if me is None:
                me = ("c", len(members))
                members.append([])
            members[me[1]].append(i)
        preds.setdefault(me, set()).update(m for m in ins if m != me)
        node.update((v, me) for v in e.outvars)
    clusters = [m for m in members if len(m) > 1]
    if not clusters:
        return eqns, targets
    return _schedule(jaxpr, targets, clusters, spelled)


def _sunk(eqns, spelled) -> list:
    """An order of the equations (indices) in which each fusible one comes as late as it can,
    right before its first consumer: it then meets that consumer's cluster (the `1 - y * y`
    of a tanh's derivative joins the product with the cotangent that reads it)."""
    n = len(eqns)
    consumers: dict = {}
    for i, e in enumerate(eqns):
        for a in e.invars:
            if type(a) is not Literal:
                consumers.setdefault(a, []).append(i)
    key = [(i, i)] * n
    for i in range(n - 1, -1, -1):
        if spelled[i] is not None:
            uses = [key[c][0] for v in eqns[i].outvars for c in consumers.get(v, ())]
            key[i] = (min(uses, default=i), i)
    producer = {v: i for i, e in enumerate(eqns) for v in e.outvars}
    waiting = [len({producer[a] for a in e.invars if type(a) is not Literal and a in producer})
               for e in eqns]
    users: list = [[] for _ in range(n)]
    for i, e in enumerate(eqns):
        for d in {producer[a] for a in e.invars if type(a) is not Literal and a in producer}:
            users[d].append(i)
    ready = [(key[i], i) for i in range(n) if waiting[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (key[u], u))
    return order


def _schedule(jaxpr, targets, clusters, spelled):
    """The equations with each cluster replaced by its FUSED equation, topologically sorted
    (a cluster at the place of its last member, others where they were)."""
    eqns = jaxpr.eqns
    node_of = list(range(len(eqns)))          # equation -> node (its own, or its cluster's)
    nodes: dict = {i: (eqns[i], targets[i]) for i in range(len(eqns))}
    position = {i: i for i in range(len(eqns))}
    used_outside = _uses_outside(jaxpr, clusters)
    for m in clusters:
        node = ("cluster", m[0])
        for i in m:
            node_of[i] = node
            del nodes[i], position[i]
        nodes[node] = _fused_eqn([eqns[i] for i in m], [spelled[i] for i in m],
                                 used_outside)
        position[node] = m[-1]
    producer = {v: node_of[i] for i, e in enumerate(eqns) for v in e.outvars}
    deps = {n: {producer[a] for a in e.invars if type(a) is not Literal and a in producer}
            - {n} for n, (e, _) in nodes.items()}
    users: dict = {n: [] for n in nodes}
    for n, ds in deps.items():
        for d in ds:
            users[d].append(n)
    waiting = {n: len(ds) for n, ds in deps.items()}
    ready = [(position[n], str(n), n) for n, k in waiting.items() if k == 0]
    heapq.heapify(ready)
    out_eqns, out_targets = [], []
    while ready:
        _, _, n = heapq.heappop(ready)
        out_eqns.append(nodes[n][0])
        out_targets.append(nodes[n][1])
        for u in users[n]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (position[u], str(u), u))
    assert len(out_eqns) == len(nodes), "fuse: a cycle among clusters"
    return out_eqns, out_targets


def _uses_outside(jaxpr, clusters) -> set:
    """The values member equations produce that something outside their cluster reads."""
    cluster_of = {i: c for c, m in enumerate(clusters) for i in m}
    made_in = {v: cluster_of[i] for i, e in enumerate(jaxpr.eqns) if i in cluster_of
               for v in e.outvars}
    used = {a for a in jaxpr.outvars if type(a) is not Literal}
    for i, e in enumerate(jaxpr.eqns):
        for a in e.invars:
            if type(a) is not Literal and a in made_in and made_in[a] != cluster_of.get(i):
                used.add(a)
    return used


def _fused_eqn(members, spellings, used_outside):
    """(FUSED equation, its call target) computing `members` in one loop kernel."""
    made = {e.outvars[0] for e in members}
    inputs = list(dict.fromkeys(a for e in members for a in e.invars
                                if type(a) is not Literal and a not in made))
    outputs = [e.outvars[0] for e in members if e.outvars[0] in used_outside]
    names = {v: f"a{k}" for k, v in enumerate(inputs)}
    arrays = [k for k, v in enumerate(inputs) if v.aval.ndim]
    body = [f"        x{k} = a{k}[i]" for k in arrays]
    names.update((inputs[k], f"x{k}") for k in arrays)

    def atom(a):
        return _literal(a) if type(a) is Literal else names[a]

    for j, (e, spelled) in enumerate(zip(members, spellings)):
        names[e.outvars[0]] = f"v{j}"
        body.append(f"        v{j} = {spelled.format(*map(atom, e.invars))}")
    body += [f"        o{k}[i] = {names[v]}" for k, v in enumerate(outputs)]
    args = [f"a{k}" for k in range(len(inputs))] + [f"o{k}" for k in range(len(outputs))]
    source = "\n".join([f"def kernel({', '.join(args)}):", "    for i in range(o0.size):",
                        *body]) + "\n"
    run = _fused_call(source, inputs, outputs)
    return Eqn(FUSED, inputs, outputs, {}), (run, (), {})


def _fused_call(source, inputs, outputs):
    """The function calling the kernel of `source`: flat views of the array inputs, Python
    scalars for the 0-d ones, fresh output arrays."""
    kernel = compile_kernel(source)
    shape = outputs[0].aval.shape
    dtypes = [v.aval.dtype for v in outputs]
    ravel, item, empty = np.ravel, np.ndarray.item, np.empty
    array_input = [bool(v.aval.ndim) for v in inputs]

    def run(*args):
        outs = [empty(shape, d) for d in dtypes]
        kernel(*[ravel(a) if is_array else (item(a) if type(a) is np.ndarray else a)
                 for a, is_array in zip(args, array_input)],
               *[o.reshape(-1) for o in outs])
        return outs
    return run
