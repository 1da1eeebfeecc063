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

For a program that runs again and again (a jit cache entry, a loop body), large intermediates
(WORKSPACE_MIN_BYTES and up) are written into a workspace: buffers the program allocates once
and reuses on every call, instead of fresh arrays that the allocator maps and the kernel
zero-fills anew each time (a third of the time of a Laplacian at 1,024 points). Only a value
that no output can alias gets one: it is not an output, and every consumer is a ufunc or a
primitive whose row says `fresh_result`. Slots are shared by values whose lifetimes do not
overlap. A call that finds the workspace in use (another thread, or re-entry) runs with fresh
arrays (`out=None`), so concurrent calls stay correct.

Memory: a workspace is allocated on its program's second call (a program run once, say for
each of many shapes, holds nothing), only while all workspaces together stay within a byte
budget (`set_workspace_limit`, default 256 MiB), straight from the operating system (so
freeing returns it), and freed when jit drops the program from its cache. The intermediates
outside the workspace reuse freed memory from one call to the next where malloc keeps it
(`heap`).
"""

from __future__ import annotations

import itertools
import keyword
import linecache
import mmap
import os
import threading
import weakref

import numpy as np

from functrans.backend import get_backend, xp
from functrans.core.ir import ClosedJaxpr, Literal
from functrans.core import ownership
from functrans.transforms.toolkit import heap
from functrans.transforms.toolkit.facts import fact
from functrans.transforms.toolkit.rewrite import literal_key

_program_ids = itertools.count()
INPLACE_MIN_SIZE = 1024  # below this, out= costs about what the allocation it saves does
WORKSPACE_MIN_BYTES = 1 << 16  # from about here, fresh arrays come from mmap and page faults


class CompiledProgram:
    """A compiled program: call it with the program's inputs, get the list of its outputs."""

    __slots__ = ("fn", "source", "n_in", "workspace", "__weakref__")

    def __init__(self, fn, source: str, n_in: int, workspace=None):
        self.fn = fn
        self.source = source
        self.n_in = n_in
        self.workspace = workspace      # its reusable buffers, if any

    def __call__(self, *args):
        return self.fn(*args)

    def release_workspace(self) -> None:
        """Free the workspace buffers now (a later call allocates them again if needed)."""
        if self.workspace is not None:
            self.workspace.free()


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


def _limit_from_environment() -> int:
    text = os.environ.get("FUNCTRANS_JIT_WORKSPACE_BYTES", "")
    try:
        return int(text) if text else 256 << 20
    except ValueError:
        raise ValueError(f"FUNCTRANS_JIT_WORKSPACE_BYTES={text!r} is not an integer; give the "
                         "jit workspace budget in bytes (0 turns workspaces off).") from None


# all workspaces together hold at most this many bytes (default 256 MiB); past it, programs
# allocate fresh arrays as eager code does
WORKSPACE_LIMIT_BYTES = _limit_from_environment()
_workspace_total = [0]
_workspace_lock = threading.Lock()


def set_workspace_limit(nbytes: int) -> int:
    """Bound the bytes all jit workspaces hold together (the reusable buffers of programs
    called again and again; see docs/transforms/jit.md); return the previous bound. 0 turns
    workspaces off. The default, 256 MiB, can also be set before import with the environment
    variable FUNCTRANS_JIT_WORKSPACE_BYTES. Workspaces already allocated keep their buffers
    until their program is dropped from its cache (`clear_cache()`, `clear_caches()`).

    >>> from functrans.transforms.jit import set_workspace_limit
    >>> old = set_workspace_limit(64 << 20)
    >>> _ = set_workspace_limit(old)
    """
    global WORKSPACE_LIMIT_BYTES
    if isinstance(nbytes, bool) or not isinstance(nbytes, int | np.integer) or nbytes < 0:
        raise ValueError(f"set_workspace_limit: nbytes must be a non-negative integer number "
                         f"of bytes, got {nbytes!r}.")
    with _workspace_lock:
        old, WORKSPACE_LIMIT_BYTES = WORKSPACE_LIMIT_BYTES, int(nbytes)
    return old


def workspace_bytes() -> int:
    """The bytes all jit workspaces hold now (at most the bound of `set_workspace_limit`).

    >>> from functrans.transforms.jit import workspace_bytes
    >>> workspace_bytes() >= 0
    True
    """
    return _workspace_total[0]


# where in its first page the buffer of workspace slot k starts: 64-byte aligned, half a page
# from where the allocator's large arrays start (16 bytes past a page boundary) and 17 cache
# lines from the next slot. A kernel reading one array and writing another whose addresses agree in their low 12
# bits stalls on false store-to-load dependences (4K aliasing): page-aligned buffers did, and
# staggering them made the MLP gradient of benchmarks/bench_jit_w1.py 5% faster.
def _page_offset(slot: int) -> int:
    return (2048 + 1088 * slot) % 4096


def _new_buffer(shape, dtype, slot: int = 0):
    """An uninitialised buffer. With numpy, mapped straight from the operating system, so
    freeing it unmaps it: memory the allocator would keep in its heap after a workspace is
    released (fragmented between long-lived objects) goes back at once. It starts
    `_page_offset(slot)` bytes into its first page."""
    if get_backend() is not np:
        return xp.empty(shape, dtype)
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    offset = _page_offset(slot)
    memory = mmap.mmap(-1, size * dtype.itemsize + offset)
    return np.frombuffer(memory, dtype, size, offset=offset).reshape(shape)


class _Workspace:
    """The reusable buffers of one program, held by one call at a time. They are allocated on
    the second call (a program run once gains nothing from them), while all workspaces
    together stay within WORKSPACE_LIMIT_BYTES (a cache full of large programs then falls back
    to fresh arrays), and freed by `free()` (jit calls it when it drops the program from its
    cache) or with the program.
    """

    __slots__ = ("specs", "nbytes", "buffers", "nones", "lock", "calls", "__weakref__")

    def __init__(self, specs):
        self.specs = specs
        self.nbytes = sum(int(np.prod(shape)) * np.dtype(dtype).itemsize
                          for shape, dtype in specs)
        self.buffers = None
        self.nones = (None,) * len(specs)
        self.lock = threading.Lock()
        self.calls = 0

    def acquire(self):
        """The buffers for this call, or Nones (the call allocates, as eager code does) when
        another call holds them (another thread, or re-entry) or there is no room."""
        if not self.lock.acquire(blocking=False):
            return self.nones
        buffers = self.buffers
        if buffers is None:
            self.calls += 1
            buffers = self._allocate() if self.calls > 1 else None
            if buffers is None:
                self.lock.release()
                return self.nones
        return buffers

    def _allocate(self):
        with _workspace_lock:
            if _workspace_total[0] + self.nbytes > WORKSPACE_LIMIT_BYTES:
                return None
            self.buffers = tuple(_new_buffer(shape, dtype, k)
                                 for k, (shape, dtype) in enumerate(self.specs))
            _workspace_total[0] += self.nbytes
            return self.buffers

    def release(self, held):
        if held is not self.nones:
            self.lock.release()

    def free(self) -> None:
        """Give the buffers back (a call holding them keeps them until it returns)."""
        with _workspace_lock:
            if self.buffers is not None:
                self.buffers = None
                _workspace_total[0] -= self.nbytes

    def __del__(self):
        if self.buffers is not None:
            self.free()


def _large(aval) -> bool:
    """Whether a value of `aval` is worth a workspace buffer."""
    return aval.size * aval.dtype.itemsize >= WORKSPACE_MIN_BYTES


def _writes_out(fn, extra, kwargs, eqn) -> bool:
    """Whether the call takes `out=` for its one result: a ufunc, or a function marked
    `writes_out` (one that writes a whole given buffer and returns it, as a ufunc does)."""
    return (isinstance(fn, np.ufunc) or getattr(fn, "writes_out", False)) and not extra \
        and not kwargs and not eqn.primitive.multiple_results


def _is_keyword_name(name) -> bool:
    """Whether `name=value` may be written in a call: an identifier that is not a keyword."""
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def _call_target(eqn, fused: bool = False):
    """(function, extra positional args, keyword args) for one equation; with `fused`, for jit's
    fast backend (a row's `fused_impl` first)."""
    impl_for = getattr(get_backend(), "impl_for", None)  # a dask or CuPy adapter's way
    if impl_for is not None:
        return impl_for(eqn.primitive), (), dict(eqn.params)
    for key in ("fused_impl", "fast_impl") if fused else ("fast_impl",):
        direct = fact(eqn.primitive, key)
        if direct is not None:
            target = direct([a.aval for a in eqn.invars], [v.aval for v in eqn.outvars],
                            eqn.params)
            if target is not None:
                return target
    return eqn.primitive.impl, (), dict(eqn.params)


def generate_source(closed: ClosedJaxpr, workspace: bool = False,
                    may_return_inputs: bool = False, fast: bool = False):
    """(source text, globals dict, workspace or None) of the function computing `closed`; with
    `workspace`, large intermediates go to buffers reused across calls (for programs called
    again and again). Its outputs share no memory with its constants, with each other, or
    (unless `may_return_inputs`) with its inputs (see `_output_exprs`). With `fast`, clusters
    of elementwise equations run as numba loop kernels (`kernels.fuse`)."""
    jaxpr = closed.jaxpr
    g = _Globals()
    names: dict = {}
    for i, v in enumerate(jaxpr.invars):
        names[v] = f"a{i}"
    on_library = getattr(get_backend(), "from_numpy", None)  # dask or CuPy: its constants
    for v, c in zip(jaxpr.constvars, closed.consts):
        names[v] = g.bind("c", c if on_library is None else on_library(c))

    def atom(a):
        if type(a) is Literal:
            val = a.val if on_library is None else on_library(a.val)
            return g.bind("k", val, key=literal_key(a))
        return names[a]

    eqns, targets = jaxpr.eqns, [_call_target(eqn, fast) for eqn in jaxpr.eqns]
    if fast:
        from functrans.transforms.toolkit import kernels
        eqns, targets = kernels.fuse(jaxpr, targets)
    last_use: dict = {}
    escapes: set = set()        # values some consumer's result may alias (a view, say)
    for i, (eqn, (fn, extra, kwargs)) in enumerate(zip(eqns, targets)):
        fresh = isinstance(fn, np.ufunc) or fact(eqn.primitive, "fresh_result", False)
        for a in eqn.invars:
            if type(a) is not Literal:
                last_use[a] = i
                if not fresh:
                    escapes.add(a)
    keep_alive = {a for a in jaxpr.outvars if type(a) is not Literal}

    # buffer reuse: a ufunc may write its result into an operand that dies here, when that
    # operand's buffer is the program's own (a fresh ufunc result nothing else can alias)
    owned: set = set()
    slot_of: dict = {}          # value -> workspace slot holding it
    free: dict = {}             # (shape, dtype) -> slots no live value holds
    specs: list = []            # (shape, dtype) of each slot

    def take_slot(out) -> str:
        """A free workspace slot of `out`'s shape and dtype (a new one if none is free)."""
        pool = free.setdefault((out.aval.shape, out.aval.dtype), [])
        if not pool:
            pool.append(len(specs))
            specs.append((out.aval.shape, out.aval.dtype))
        slot_of[out] = pool.pop()
        return f"w{slot_of[out]}"

    lines = []
    counter = itertools.count()
    for i, (eqn, (fn, extra, kwargs)) in enumerate(zip(eqns, targets)):
        args = [atom(a) for a in eqn.invars]
        args += [g.bind("p", x) for x in extra]
        # a param named like a keyword (`lambda`) or not a name at all is passed from a dict
        unnamed = {k: x for k, x in kwargs.items() if not _is_keyword_name(k)}
        args += [f"{k}={g.bind('p', x)}" for k, x in kwargs.items() if k not in unnamed]
        if unnamed:
            args.append(f"**{g.bind('p', unnamed)}")
        if _writes_out(fn, extra, kwargs, eqn):
            out, out_aval = eqn.outvars[0], eqn.outvars[0].aval
            reuse = None
            # a workspace buffer passes only to a result that may hold one itself
            may_hold = out not in escapes and out not in keep_alive
            elementwise = isinstance(fn, np.ufunc) and fn.signature is None
            if out_aval.size >= INPLACE_MIN_SIZE and elementwise:
                reuse = next((a for a in eqn.invars if a in owned and a not in escapes
                              and last_use[a] == i and a not in keep_alive
                              and a.aval == out_aval and (may_hold or a not in slot_of)),
                             None)
            if reuse is not None:
                args.append(f"out={names[reuse]}")
                if reuse in slot_of:
                    slot_of[out] = slot_of.pop(reuse)
            elif workspace and may_hold and out in last_use and _large(out_aval):
                args.append(f"out={take_slot(out)}")
            if out_aval.ndim:
                owned.add(out)
        elif workspace and getattr(fn, "writes_outs", False):
            # a loop kernel writes each result into a workspace buffer, or a fresh array
            buffers = [take_slot(out) if out not in escapes and out not in keep_alive
                       and out in last_use and _large(out.aval) else "None"
                       for out in eqn.outvars]
            if any(b != "None" for b in buffers):
                args.append(f"outs=({', '.join(buffers)},)")
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
        for a in dead:
            if a in slot_of:
                free[specs[slot_of[a]]].append(slot_of.pop(a))
        if dead:
            lines.append(f"    del {', '.join(names[a] for a in dead)}")
    outs = [_owned_output(expr, g) for expr in
            _output_exprs(jaxpr, eqns, targets, atom, may_return_inputs)]
    header = f"def program({', '.join(names[v] for v in jaxpr.invars)}):"
    if not specs:
        lines = [header, *lines, f"    return [{', '.join(outs)}]"]
        return "\n".join(lines) + "\n", g.ns, None
    ws = _Workspace(specs)
    slots = ", ".join(f"w{k}" for k in range(len(specs)))
    lines = [header,
             f"    {slots}, = held = {g.bind('f', ws.acquire)}()",
             "    try:",
             *["    " + line for line in lines],
             f"        return [{', '.join(outs)}]",
             "    finally:",
             f"        {g.bind('f', ws.release)}(held)"]
    return "\n".join(lines) + "\n", g.ns, ws


def _output_exprs(jaxpr, eqns, targets, atom, may_return_inputs: bool) -> list:
    """What the program returns, per output: (expression, how to own it), where how is None
    (a fresh array: nothing to do), "copy" (an input, a constant, a literal array, or an output
    returned again, e.g. two equal results CSE merged), or the expressions of the inputs,
    constants and earlier outputs it may be a view of (copied by `ownership.owned` when it
    shares memory with one, or is read-only).

    Each value's `roots` are what its memory may belong to: a ufunc or `fresh_result` result
    is an allocation of its own; any other result may be a view of its operands' roots (or of
    an allocation of its equation, shared by that equation's results). Only roots that are
    inputs, constants or roots of earlier outputs need a test, so a program whose results are
    fresh arrays returns them untouched."""
    consts = set(jaxpr.constvars)
    protected = consts if may_return_inputs else consts | set(jaxpr.invars)
    roots: dict = {}
    for eqn, (fn, _, _) in zip(eqns, targets):
        if isinstance(fn, np.ufunc) or fact(eqn.primitive, "fresh_result", False):
            for v in eqn.outvars:
                roots[v] = frozenset((v,))
            continue
        r = {id(eqn)}  # an allocation the equation may make, shared by its results
        for a in eqn.invars:
            if type(a) is not Literal:
                r |= roots.get(a, {a})
            elif isinstance(a.val, np.ndarray):
                r.add(a)
        r = frozenset(r)
        for v in eqn.outvars:
            roots[v] = r
    exprs, earlier, returned = [], [], set()
    for a in jaxpr.outvars:
        if type(a) is Literal:
            exprs.append((atom(a), "copy" if isinstance(a.val, np.ndarray) else None))
            continue
        if a in returned or a in protected:
            exprs.append((atom(a), "copy"))
            continue
        returned.add(a)
        r = roots.get(a, frozenset((a,)))
        shared = {atom(b) for b, rb in earlier if rb & r}
        if r == {a} and not shared:  # a fresh array, or an input passed through a loop body
            exprs.append((atom(a), None))
        else:  # a view, maybe read-only (a broadcast), maybe of an input or a constant
            shared.update(atom(p) for p in r if p in protected or type(p) is Literal)
            exprs.append((atom(a), sorted(shared)))
        earlier.append((a, r))
    return exprs


def _owned_output(expr, g: _Globals) -> str:
    name, how = expr
    if how is None:
        return name
    if how == "copy":
        return f"{g.bind('f', xp.array)}({name})"
    return f"{g.bind('f', ownership.owned)}({', '.join([name, *how])})"


def compile_program(closed: ClosedJaxpr, *, workspace: bool = False,
                    may_return_inputs: bool = False, fast: bool = False) -> CompiledProgram:
    """The compiled function of `closed`, built once per program object, backend, `workspace`
    (see the module docstring: worth it for programs called many times, such as jit's cached
    entries and loop bodies; a one-shot program would only hold the memory) and
    `may_return_inputs` (for a loop body, whose results feed its next call: an output may be
    an input, and the loop makes its final results the caller's own). With `fast`, a program
    of scalars is one LLVM function (see `scalar`), and elementwise clusters are numba loops
    (see `kernels`)."""
    key = ("compiled", id(get_backend()), workspace, may_return_inputs, fast)
    return closed.derived.get_or_build(
        key, lambda: _compile(closed, workspace, may_return_inputs, fast))


def _compile(closed: ClosedJaxpr, workspace: bool, may_return_inputs: bool,
             fast: bool = False) -> CompiledProgram:
    heap.keep_freed_memory()    # fresh intermediates reuse freed pages, call after call
    if fast and get_backend() is np:
        from functrans.transforms.toolkit import scalar
        compiled = scalar.compile_scalar(closed, [_call_target(e) for e in closed.jaxpr.eqns])
        if compiled is not None:
            return compiled
    source, ns, ws = generate_source(closed, workspace, may_return_inputs, fast)
    filename = f"<functrans jit program {next(_program_ids)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), ns)
    # the function's globals must not hold the function: that cycle would keep the program,
    # and its workspace, alive until the garbage collector's next full pass
    compiled = CompiledProgram(ns.pop("program"), source, len(closed.jaxpr.invars), ws)
    weakref.finalize(compiled, linecache.cache.pop, filename, None)
    return compiled
