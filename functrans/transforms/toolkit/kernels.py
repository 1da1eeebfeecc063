"""Fused elementwise clusters as numba loop kernels: jit's fast backend (the extra "fast").

A numpy call costs about a microsecond of dispatch whatever the size of its operands, so a
chain of cheap elementwise equations on small arrays is dispatch from end to end. This module
groups such equations (float64 or bool values of one shape, with operands broadcast as rows,
columns or scalars; outer products; sums over rows) into clusters, and compiles each cluster
with numba into one loop over the elements that reads each input once and writes only the
values that leave the cluster. (Programs whose every value is 0-d are compiled
whole by `scalar`, straight to LLVM.)

Loops are spelled from the equations' call targets (the numpy function each row's impl or
`fast_impl` names, see SPELLINGS), never from which primitive an equation holds. Compiled
kernels are cached by their source text, so programs of the same structure share them.

Arithmetic is numpy's: division by zero, log(0), overflow give inf and nan (numba's numpy error
model), without numpy's warnings. Elementary functions come from the C math library (numba
calls it for sin, exp, ...) or from `_vecmath` (tanh, vectorised), whose results may differ from
numpy's vectorised ones in the last bits: TOLERANCE bounds the difference per function,
documented in docs/transforms/jit.md.
"""

from __future__ import annotations

import hashlib
import heapq
import importlib.util
import math
import os
import sys

from typing import NamedTuple

import numpy as np

from functrans.core.cache import LRUCache
from functrans.core.ir import Eqn, Jaxpr, Literal
from functrans.core.primitive import Primitive
from functrans.transforms.toolkit.facts import fact

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
_VM_IMPORT = "from functrans.transforms.toolkit import _vecmath as vm"


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
        from functrans.transforms.toolkit import _vecmath as vecmath
        ns = {"math": math, "vm": vecmath}
        exec(compile(source, "<functrans numba kernel>", "exec"), ns)
        return ns["kernel"]
    name = "functrans_kernel_" + hashlib.sha256(source.encode()).hexdigest()[:32]
    path = os.path.join(_cache_dir[0], name + ".py")
    if not os.path.exists(path):
        os.makedirs(_cache_dir[0], exist_ok=True)
        scratch = f"{path}.{os.getpid()}.tmp"
        with open(scratch, "w") as f:
            f.write(f"import math\n\n{_VM_IMPORT}\n\n\n" + source)
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
# numpy's dispatch (~0.4 us a call) is the larger cost. The functions of VECTORISED are written
# in arithmetic (see `_vecmath`) and join clusters of any size.
SMALL = 64
VECTORISED = {np.tanh: "vm.tanh({0})"}

# the node standing for a cluster in the program codegen emits: not a primitive of the table
# (it is never traced, transformed or differentiated), only a call whose results are fresh
FUSED = Primitive("fused", multiple_results=True, module=__name__)
FUSED.facts = {"fresh_result": True}


class Member(NamedTuple):
    """How one equation runs inside a loop kernel over `shape`: operand i is read as an array
    of shape `views[i]`, which broadcasts to `shape` (a bias `(64,)` against `(1024, 64)`,
    `(N, 1, H)` against `(N, R, H)`, a 0-d value). A "map" writes one value per element; a
    "rowsum" adds its value into a total per index of the axes it keeps, `kept` (a sum over
    axes but the last: a bias gradient over rows, the sum over the directions of a
    forward-mode block; in numpy's order)."""
    spelled: str
    shape: tuple
    views: tuple
    kind: str = "map"
    # what each placeholder of `spelled` reads, (operand, (axis, index) or None), when not
    # operand i whole for placeholder i (a product over a short axis reads slices)
    parts: tuple | None = None
    # a "rowsum"'s result as read against `shape`: the summed axes of length one
    kept: tuple | None = None


def _view(shape: tuple, full: tuple) -> tuple | None:
    """`shape` padded with leading ones to the rank of `full`, if it broadcasts to `full`."""
    if len(shape) > len(full):
        return None
    padded = (1,) * (len(full) - len(shape)) + tuple(shape)
    return padded if all(s in (1, f) for s, f in zip(padded, full)) else None


def _fusible(eqn, target) -> Member | None:
    """How `eqn` runs inside a loop kernel (see Member), or None: an elementwise function of
    float64 or bool arrays, whose operands broadcast to its result; a short contraction (see
    `_outer`); or a float64 sum over axes but the last."""
    fn, extra, kwargs = target
    if eqn.primitive.multiple_results or len(eqn.outvars) != 1:
        return None
    out = eqn.outvars[0].aval
    if extra or any(a.aval.dtype not in _KINDS for a in eqn.invars) or out.dtype not in _KINDS:
        return None
    if any(type(a) is Literal and a.aval.shape for a in eqn.invars):
        return None
    if fn is np.sum:
        x = eqn.invars[0].aval
        axes = set(kwargs.get("axis", ()))
        # along a last axis (or with only ones after the summed axes), numpy adds pairwise,
        # not one term after another as the loop does
        if x.ndim >= 2 and out.dtype == np.float64 and set(kwargs) <= {"axis", "dtype"} \
                and axes and x.ndim - 1 not in axes and x.shape[-1] > 1:
            kept = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
            return Member("{0}", x.shape, (x.shape,), "rowsum", kept=kept)
        return None
    contraction = fact(eqn.primitive, "contraction")
    if contraction is not None:
        return _outer(eqn, contraction(eqn.params))
    if kwargs or out.ndim == 0:
        return None
    try:
        spelled = VECTORISED.get(fn) or SPELLINGS.get(fn)
    except TypeError:  # an unhashable callable
        return None
    if spelled is None or ("math." in spelled and out.size > SMALL):
        return None
    views = tuple(_view(a.aval.shape, out.shape) for a in eqn.invars)
    return None if None in views else Member(spelled, out.shape, views)


# a contraction this short (the first layer of a network of a few inputs) runs in the loop
SHORT = 4


def _outer(eqn, dimension_numbers) -> Member | None:
    """A contraction without batch axes whose right operand keeps one axis: over axes of length
    one, the product of the left operand as a column and the right one as a row; over the left
    operand's last axis, of length up to SHORT, the sum of such products of slices."""
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = (a.aval for a in eqn.invars)
    out = eqn.outvars[0].aval
    if lb or rb or out.ndim < 2 or rhs.ndim - len(rc) != 1 or \
            math.prod(rhs.shape[i] for i in rc) * out.shape[-1] != rhs.size:
        return None
    col, row = (*out.shape[:-1], 1), (1,) * (out.ndim - 1) + out.shape[-1:]
    if all(lhs.shape[i] == 1 for i in lc):
        return Member("({0} * {1})", out.shape, (col, row))
    k = lhs.shape[-1]
    if lc != (lhs.ndim - 1,) or rhs.ndim != 2 or k > SHORT:
        return None
    terms = " + ".join(f"{{{2 * c}}} * {{{2 * c + 1}}}" for c in range(k))
    parts = tuple(p for c in range(k) for p in ((0, (lhs.ndim - 1, c)), (1, (rc[0], c))))
    return Member(f"({terms})", out.shape, (col, row) * k, parts=parts)


def fuse(jaxpr, targets):
    """(equations, targets) of `jaxpr` with each cluster of two or more fusible equations
    (see `_fusible`) of one shape replaced by one FUSED equation calling a compiled loop
    kernel, in an order that respects every dependency.

    Equations are taken in `_sunk`'s order. A fusible one joins the open clusters of its
    operands' producers, of its shape, merging them into one: a cluster is open until
    something outside it reads one of its values (joining it later would add a value for the
    kernel to write, where a new cluster reads what the old one writes anyway). It joins none
    that another operand's producer depends on (the kernel would wait for itself), none that
    depend on each other, and none through one of their sums (complete only when their loop
    ends, or that make an operand of a short product, which reads whole slices of it). Else it
    starts a cluster."""
    fusible = [_fusible(e, t) for e, t in zip(jaxpr.eqns, targets)]
    if sum(x is not None for x in fusible) < 2 and not any(map(_alone, fusible)):
        return jaxpr.eqns, targets
    order = _sunk(jaxpr.eqns, fusible)
    eqns = [jaxpr.eqns[i] for i in order]
    targets, fusible = [targets[i] for i in order], [fusible[i] for i in order]
    jaxpr = Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)
    members: list = []          # cluster -> indices of its equations
    node: dict = {}             # value -> the node making it: ("c", cluster) or ("e", index)
    preds: dict = {}            # node -> the nodes it reads from
    summed: set = set()         # values a cluster's sum makes
    closed: set = set()         # clusters something outside has read from

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

    def merge(keep, gone) -> None:
        members[keep[1]] += members[gone[1]]
        members[gone[1]] = []
        for v, n in node.items():
            if n == gone:
                node[v] = keep
        preds[keep] = (preds.get(keep, set()) | preds.pop(gone, set())) - {keep, gone}
        for ps in preds.values():
            if gone in ps:
                ps.discard(gone)
                ps.add(keep)

    for i, e in enumerate(eqns):
        ins = list(dict.fromkeys(node[a] for a in e.invars
                                 if type(a) is not Literal and a in node))
        me = ("e", i)
        if fusible[i] is not None:
            shape = fusible[i].shape
            # a sum is complete only when its loop ends; a short product reads whole slices
            through_sum = {node[a] for a in e.invars if a in summed
                           or (fusible[i].parts is not None and a in node)}
            chosen: list = []
            for n in ins:
                if n[0] == "c" and n not in closed and n not in through_sum \
                        and fusible[members[n[1]][0]].shape == shape \
                        and not any(reaches(m, n) for m in ins if m != n and m not in chosen) \
                        and not any(reaches(n, c) or reaches(c, n) for c in chosen):
                    chosen.append(n)
            if chosen:
                me = chosen[0]
                for gone in chosen[1:]:
                    merge(me, gone)
                ins = [n if n not in chosen else me for n in ins]
            else:
                me = ("c", len(members))
                members.append([])
            members[me[1]].append(i)
            if fusible[i].kind == "rowsum":
                summed.add(e.outvars[0])
        closed.update(n for n in ins if n[0] == "c" and n != me)
        preds.setdefault(me, set()).update(m for m in ins if m != me)
        node.update((v, me) for v in e.outvars)
    clusters = [sorted(m) for m in members if len(m) > 1 or m and _alone(fusible[m[0]])]
    if not clusters:
        return eqns, targets
    return _schedule(jaxpr, targets, clusters, fusible)


# an equation alone is worth a loop where numpy's broadcasting runs many short inner loops:
# (1024, 3, 64) = (1024, 1, 64) * (1, 3, 64) takes numpy 116 us and a loop 34 us
ALONE = 4096


def _alone(member: Member | None) -> bool:
    """Whether `member` is worth a loop kernel by itself: a sum over axes but the last (numpy
    reduces short middle axes slowly), or a map that broadcasts an array along an axis."""
    if member is None or member.parts is not None or math.prod(member.shape) < ALONE:
        return False
    return member.kind == "rowsum" or \
        any(view != member.shape and math.prod(view) > 1 for view in member.views)


def _sunk(eqns, fusible) -> list:
    """An order of the equations (indices) in which each fusible one comes as late as it can,
    right before its first consumer: it then meets that consumer's cluster (the `1 - y * y`
    of a tanh's derivative joins the product with the cotangent that reads it)."""
    n = len(eqns)
    consumers: dict = {}
    for i, e in enumerate(eqns):
        for a in e.invars:
            if type(a) is not Literal:
                consumers.setdefault(a, []).append(i)
    key = [(i, i) for i in range(n)]
    for i in range(n - 1, -1, -1):
        if fusible[i] is not None:
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


def _schedule(jaxpr, targets, clusters, fusible):
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
        nodes[node] = _fused_eqn([eqns[i] for i in m], [fusible[i] for i in m],
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


def _fused_eqn(eqns, members, used_outside):
    """(FUSED equation, its call target) computing the equations `eqns`, run as `members`
    (see Member), in one loop kernel over their common shape."""
    made = {e.outvars[0] for e in eqns}

    def slots(e, m):    # (operand, its slice (axis, index) or None, view) per placeholder
        parts = m.parts or [(i, None) for i in range(len(e.invars))]
        return [(e.invars[i], c, view) for (i, c), view in zip(parts, m.views)]

    reads = list(dict.fromkeys((a, c, view) for e, m in zip(eqns, members)
                               for a, c, view in slots(e, m)
                               if type(a) is not Literal and a not in made))
    # a value read once (0-d, or of one element) comes in as a Python scalar `a<k>`; an array
    # read per element is loaded into `x<k>` at each step
    once = [math.prod(view) == 1 for _, _, view in reads]
    names = {read: f"{'a' if one else 'x'}{k}" for k, (read, one) in enumerate(zip(reads, once))}
    outputs, kinds, body, writes, out_views = [], [], [], [], []
    for j, (e, m) in enumerate(zip(eqns, members)):
        out = e.outvars[0]
        ins = [_literal(a) if type(a) is Literal else names.get((a, c, view), names.get(a))
               for a, c, view in slots(e, m)]
        names[out] = f"v{j}"
        body.append(f"v{j} = {m.spelled.format(*ins)}")
        if m.kind == "rowsum" or out in used_outside:
            writes.append((f"o{len(outputs)}", f"v{j}", m.kind))
            outputs.append(out)
            kinds.append(m.kind)
            out_views.append(m.kept or m.shape)
    shape = members[0].shape
    # the loop nest: axes of length one dropped, neighbours every array steps through alike
    # merged (a program of one shape loops once over all its elements)
    views = [view for _, _, view in reads] + out_views
    dims, masks = _collapse(shape, views)
    arrays = [f"a{k}" for k in range(len(reads)) if not once[k]] + \
        [w for w, _, _ in writes]
    steps = [m for k, m in enumerate(masks) if k >= len(reads) or not once[k]]
    source = _kernel_source(len(dims), arrays, [m[-1] for m in steps], body, writes, once)
    strides = [_strides(dims, m) for m in steps]
    run = _fused_call(source, dims, strides, reads, once, outputs, kinds)
    return Eqn(FUSED, list(dict.fromkeys(a for a, _, _ in reads)), outputs, {}), (run, (), {})


def _collapse(shape, views):
    """(dims, masks): the loop nest over `shape` after dropping axes of length one and merging
    neighbouring axes that every view steps through alike, and for each view whether it steps
    through each of those dims (False: it broadcasts along it)."""
    keep = [a for a, n in enumerate(shape) if n != 1] or [len(shape) - 1]
    dims, masks = [shape[keep[0]]], [[v[keep[0]] != 1 or shape[keep[0]] == 1] for v in views]
    for a in keep[1:]:
        steps = [v[a] != 1 for v in views]
        if all(m[-1] == s for m, s in zip(masks, steps)):
            dims[-1] *= shape[a]
        else:
            dims.append(shape[a])
            for m, s in zip(masks, steps):
                m.append(s)
    return dims, masks


def _strides(dims, mask) -> list:
    """Element strides, along each dim of the loop nest but the last, of a contiguous array
    that steps through the dims of `mask` and broadcasts along the others."""
    strides, size = [], 1
    for n, steps in zip(dims[::-1], mask[::-1]):
        strides.append(size if steps else 0)
        size *= n if steps else 1
    return strides[::-1][:-1]


def _kernel_source(depth, arrays, inner, body, writes, once) -> str:
    """A loop nest `depth` deep. Each array's position is a running base (`b<k>_<d>`); in the
    innermost loop an array that steps through the last dim (`inner`) is read through the
    slice starting at its base, indexed by the loop variable alone (an index numba knows is
    not negative: the loop vectorises), and one that broadcasts along it is read once before
    the loop."""
    outer = [f"s{k}_{d}" for k in range(len(arrays)) for d in range(depth - 1)]
    lines = [f"def kernel({', '.join([f'n{d}' for d in range(depth)] + outer)}, "
             f"{', '.join(f'a{k}' for k in range(len(once)))}, "
             f"{', '.join(w for w, _, _ in writes)}):"]
    pad = "    "
    for d in range(depth - 1):
        lines.append(f"{pad}for i{d} in range(n{d}):")
        pad += "    "
        for k in range(len(arrays)):
            base = f"b{k}_{d - 1} + " if d else ""
            lines.append(f"{pad}b{k}_{d} = {base}i{d} * s{k}_{d}")
    base = [f"b{k}_{depth - 2}" if depth > 1 else "0" for k in range(len(arrays))]
    position = {name: k for k, name in enumerate(arrays)}
    at = {}      # array -> its element at this step
    for name, k in position.items():
        if not inner[k]:
            at[name] = f"{name}[{base[k]}]"
        elif depth > 1:
            lines.append(f"{pad}r{k} = {name}[{base[k]}:]")
            at[name] = f"r{k}[j]"
        else:
            at[name] = f"{name}[j]"
    hoisted = [k for k in range(len(once)) if not once[k] and not inner[position[f"a{k}"]]]
    lines += [f"{pad}x{k} = {at[f'a{k}']}" for k in hoisted]
    lines.append(f"{pad}for j in range(n{depth - 1}):")
    pad += "    "
    lines += [f"{pad}x{k} = {at[f'a{k}']}" for k in range(len(once))
              if not once[k] and k not in hoisted]
    lines += [pad + line for line in body]
    for w, v, kind in writes:
        lines.append(f"{pad}{at[w]} {'+=' if kind == 'rowsum' else '='} {v}")
    return "\n".join(lines) + "\n"


def _fused_call(source, dims, strides, reads, once, outputs, kinds):
    """The function calling the kernel of `source`: the loop nest's dims and every array's
    strides, flat views of the arrays it reads, Python scalars for the values it reads once,
    and the output arrays. Written out per call site, since its Python is most of a small
    kernel's cost: the sizes are literals, each argument is one expression."""
    values = list(dict.fromkeys(a for a, _, _ in reads))
    params = [f"p{k}" for k in range(len(values))]
    args = [str(n) for n in (*dims, *(s for st in strides for s in st))]
    for (a, c, _), one in zip(reads, once):
        read = params[values.index(a)]
        if c is not None:   # operand slice `(axis, index)` of a short product
            read = f"{read}[{':, ' * c[0]}{c[1]}]"
        args.append(f"({read}.item() if type({read}) is ndarray else {read})" if one
                    else f"{read}.ravel()")
    lines = [f"def run({', '.join(params)}, outs={(None,) * len(outputs)}):"]
    for k, (v, kind) in enumerate(zip(outputs, kinds)):
        lines += [f"    o{k} = outs[{k}]",
                  f"    if o{k} is None:",
                  f"        o{k} = empty({v.aval.shape}, dtype_{k})"]
        if kind == "rowsum":    # a sum starts at zero
            lines.append(f"    o{k}.fill(0.0)")
        args.append(f"o{k}.reshape(-1)")
    lines += [f"    kernel({', '.join(args)})",
              f"    return [{', '.join(f'o{k}' for k in range(len(outputs)))}]"]
    namespace = {"kernel": compile_kernel(source), "empty": np.empty, "ndarray": np.ndarray,
                 **{f"dtype_{k}": v.aval.dtype for k, v in enumerate(outputs)}}
    exec(compile("\n".join(lines) + "\n", "<functrans kernel call>", "exec"), namespace)
    run = namespace["run"]
    run.writes_outs = True      # codegen may pass `outs=`, a buffer or None per result
    return run
