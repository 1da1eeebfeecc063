"""`jit`: trace once per signature, optimise the program, run it compiled.

A signature is the pytree structure of the arguments, each leaf's shape and dtype, and the
values of the static arguments. Each jitted function keeps a bounded cache of signature ->
optimised program; a call binds the call primitive `jit_p` on the program, so under an outer
transform (grad, vmap, make_jaxpr, another jit) the same call is transformed by jit_p's rules.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types

import numpy as np

from functrans.core.array import Array, as_array, as_plain
from functrans.core.avals import ShapedArray, get_aval, weak_scalar_type
from functrans.core.cache import CacheInfo, LRUCache
from functrans.core.ir import ClosedJaxpr, Jaxpr
from functrans.core.pytree_fun import as_value, flatten_fun, normalize_argnums
from functrans.core.staging import trace_to_jaxpr
from functrans.core.trace import Tracer, find_top_trace
from functrans.transforms.jit.call import jit_p
from functrans.transforms.toolkit import kernels
from functrans.transforms.toolkit.codegen import compile_program
from functrans.transforms.toolkit.optimize import PassStats, optimize_with_stats
from functrans.backend import array_library, get_backend, using
from functrans.tree_util import tree_flatten, tree_unflatten, treedef_is_leaf

DEFAULT_CACHE_SIZE = 64

# set by functrans.config: jax_disable_jit (a jitted function calls its Python function) and
# jax_debug_nans (the outputs of an eager jitted call are checked for NaN)
_DISABLE_JIT = False
_DEBUG_NANS = False


def set_flags(*, disable_jit: bool | None = None, debug_nans: bool | None = None) -> None:
    """Set jit's side of functrans.config's jax_disable_jit and jax_debug_nans (None: leave)."""
    global _DISABLE_JIT, _DEBUG_NANS
    if disable_jit is not None:
        _DISABLE_JIT = bool(disable_jit)
    if debug_nans is not None:
        _DEBUG_NANS = bool(debug_nans)


class _Entry:
    """One traced signature: the optimised program, the output structure, and the values of
    outer-transform tracers the function closed over (passed as leading arguments)."""

    __slots__ = ("jaxpr", "out_tree", "closure", "traced", "stats", "name", "unflatten",
                 "_compiled", "_backend", "library", "fast")

    def __init__(self, jaxpr, out_tree, closure, traced, stats, name, fast=False):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.closure = closure
        self.traced = traced
        self.stats = stats
        self.name = name
        self.unflatten = _fast_unflatten(out_tree)
        self._compiled = None
        self._backend = None
        self.library = None  # the adapter of its dask or CuPy inputs (functrans.backends)
        self.fast = fast     # compile with numba where a program allows (jit's backend)

    def compiled(self):
        backend = get_backend()
        if self._backend is not backend:
            # workspace buffers (`out=` writes) and numba's loop kernels are numpy's: other
            # libraries (CuPy) allocate, and run their own kernels
            self._compiled = compile_program(self.jaxpr, workspace=backend is np,
                                             fast=self.fast and backend is np)
            self._backend = backend
        return self._compiled.fn

    def release(self) -> None:
        """Free the workspace of the compiled program (jit's cache is dropping this entry)."""
        if self._compiled is not None:
            self._compiled.release_workspace()


_view = np.ndarray.view


def _fast_unflatten(out_tree):
    """Rebuilding the output from the flat list, cheaply for the common structures; arrays
    are handed back as functrans's `Array` (a view), as eager functrans.numpy returns them."""
    if treedef_is_leaf(out_tree):
        return lambda outs: _view(o, Array) if type(o := outs[0]) is np.ndarray else o
    if out_tree.node_type is tuple and all(treedef_is_leaf(c) for c in out_tree.children):
        return lambda outs: tuple([as_array(o) for o in outs])
    return lambda outs: tree_unflatten(out_tree, [as_array(o) for o in outs])


class Lowered:
    """What `jit(f)` does for given arguments: the traced program, the optimised program, the
    equation counts before and after the passes, and the generated Python code."""

    def __init__(self, entry: _Entry):
        self.traced: ClosedJaxpr = entry.traced
        self.jaxpr: ClosedJaxpr = entry.jaxpr
        self.stats: PassStats = entry.stats
        self.fast = entry.fast      # the backend the entry runs on (see jit's `backend`)

    eqns_before = property(lambda self: self.stats.eqns_before)
    eqns_after = property(lambda self: self.stats.eqns_after)

    @property
    def source(self) -> str:
        return self.compile().source

    def compile(self):
        """The compiled program, as the jitted function runs it: call it with the flat
        arguments, get the flat outputs."""
        return compile_program(self.jaxpr, workspace=True, fast=self.fast)

    def as_text(self, what: str = "all") -> str:
        """`what`: "traced", "optimized", "code", or "all" (the last two with the counts)."""
        parts = {
            "traced": f"# traced program ({self.stats.eqns_before} equations)\n{self.traced}",
            "optimized": f"# optimized program: {self.stats}\n{self.jaxpr}",
            "code": f"# generated code\n{self.source}",
        }
        if what == "all":
            return "\n\n".join([parts["optimized"], parts["code"]])
        if what not in parts:
            raise ValueError(f"Lowered.as_text: what={what!r}; use 'traced', 'optimized', "
                             "'code' or 'all'.")
        return parts[what]

    def __str__(self):
        return self.as_text()


def _static_key(static_idx, args, static_kwargs=None):
    key = []
    items = [(i, args[i], "static_argnums") for i in static_idx]
    items += [(repr(k), v, "static_argnames") for k, v in (static_kwargs or {}).items()]
    for i, v, where in items:
        if isinstance(v, Tracer):
            raise TypeError(
                f"jit: static argument {i} is a traced value {v.aval.str_short()}; static "
                "arguments must be concrete Python values known at trace time. Remove "
                f"{i} from {where} to trace it, or pass a concrete value.")
        try:
            hash(v)
        except TypeError:
            raise TypeError(
                f"jit: static argument {i} has unhashable type {type(v).__name__}; static "
                "arguments key the compilation cache, so they must be hashable. Pass a tuple "
                "instead of a list (or another hashable value), or remove "
                f"{i} from {where} to pass it as a traced argument.") from None
        key.append((i, type(v), v))
    return tuple(key)


def _resolve_static(fun, static_argnums: tuple, static_argnames: tuple):
    """static_argnums and static_argnames completed from each other through the signature of
    `fun`, as in JAX: an argument marked static by position is static when passed by name too,
    and the other way round."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):  # builtins and some callables have no signature
        return static_argnums, static_argnames
    kinds = inspect.Parameter
    positional = [p for p in params if p.kind in (kinds.POSITIONAL_ONLY,
                                                  kinds.POSITIONAL_OR_KEYWORD)]
    has_varargs = any(p.kind is kinds.VAR_POSITIONAL for p in params)
    has_varkw = any(p.kind is kinds.VAR_KEYWORD for p in params)
    for i in static_argnums:
        if not has_varargs and not -len(positional) <= i < len(positional):
            raise ValueError(
                f"jit: static_argnums={static_argnums!r}, but {getattr(fun, '__name__', fun)} "
                f"takes {len(positional)} positional argument(s). Use indices in "
                f"[0, {len(positional)}).")
    named = {p.name for p in params if p.kind in (kinds.POSITIONAL_OR_KEYWORD,
                                                 kinds.KEYWORD_ONLY)}
    for name in static_argnames:
        if name not in named and not has_varkw:
            raise ValueError(
                f"jit: static_argnames contains {name!r}, which is not a parameter of "
                f"{getattr(fun, '__name__', fun)} (parameters: {sorted(named)}).")
    nums = set(static_argnums) | {i for i, p in enumerate(positional)
                                  if p.name in static_argnames}
    names = set(static_argnames) | {positional[i].name for i in static_argnums
                                    if -len(positional) <= i < len(positional)
                                    and positional[i].kind is kinds.POSITIONAL_OR_KEYWORD}
    return tuple(sorted(nums)), tuple(sorted(names))


class Jitted:
    """A function compiled once per signature (see `jit`)."""

    def __init__(self, fun, static_argnums=(), cache_size: int = DEFAULT_CACHE_SIZE,
                 static_argnames=(), backend: str | None = None):
        if not callable(fun):
            raise TypeError(f"jit: expected a function, got {type(fun).__name__}.")
        self._fun = fun
        self._fast = _fast_backend(backend)
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) \
            else tuple(static_argnames)
        self._static_argnums, self._static_argnames = _resolve_static(fun, nums, names)
        self._cache = LRUCache(cache_size, name="jit", on_evict=_Entry.release)
        self._name = getattr(fun, "__name__", type(fun).__name__)
        self.trace_count = 0
        # name and docs only: copying fun.__dict__ (update_wrapper's default) would import the
        # state of a wrapped Jitted through functools.wraps layers (hessian(jit(f)))
        functools.update_wrapper(self, fun, updated=())

    def _signature(self, args, kwargs):
        if not kwargs and not self._static_argnums:
            flat = _flat_key(args)
            if flat is not None:  # arrays and floats in lists, tuples, dicts: no PyTreeDef
                return *flat, None, (), {}
        static_kwargs = {}
        if self._static_argnames and kwargs:
            static_kwargs = {k: v for k, v in kwargs.items() if k in self._static_argnames}
            kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        if self._static_argnums or static_kwargs:
            # a static position not passed positionally was passed by name (or left default)
            nums = tuple(i for i in self._static_argnums if i < len(args)) \
                if self._static_argnames else self._static_argnums
            static_idx = normalize_argnums(nums, len(args), "jit")
            static = _static_key(static_idx, args, static_kwargs)
            dyn = tuple(a for i, a in enumerate(args) if i not in static_idx)
        else:
            static_idx, static, dyn = (), (), args
        leaves, in_tree = tree_flatten((dyn, kwargs))
        # a Python scalar is weakly typed (it takes the dtype of the arrays it meets): its
        # program differs from a 0-d array's of the same dtype, so the key tells them apart
        weak = [weak_scalar_type(x) is not None for x in leaves]
        leaves = [as_plain(as_value(x, "jit")) for x in leaves]
        sig = tuple((x.shape, x.dtype, True) if w else (x.shape, x.dtype)
                    for x, w in zip(leaves, weak))
        if not static and in_tree == _flat_tree(len(args)):
            key = ("flat", *sig)  # the same key as the fast path above
        else:
            key = (in_tree, sig, static)
        library = array_library(leaves)  # dask or CuPy inputs: a program per library
        if library is not None:
            key = (library, key)
        return key, leaves, in_tree, static_idx, static_kwargs

    def _entry(self, args, kwargs):
        key, leaves, in_tree, static_idx, static_kwargs = self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            if in_tree is None:
                in_tree = tree_flatten((args, {}))[1]
            library = key[0] if type(key[0]) is types.ModuleType else None
            entry = self._trace(key[1] if library else key, args, leaves, in_tree,
                                static_idx, static_kwargs)
            entry.library = library
            if not entry.closure:  # programs closing over outer tracers are per call
                entry = self._cache.put(key, entry)  # another thread's, if it came first
        return entry, leaves

    def _trace(self, key, args, leaves, in_tree, static_idx, static_kwargs) -> _Entry:
        self.trace_count += 1
        fun = self._fun

        def with_static(*dyn, **kwargs):
            it = iter(dyn)
            full = [args[i] if i in static_idx else next(it) for i in range(len(args))]
            return fun(*full, **kwargs, **static_kwargs)

        f_flat, out_store = flatten_fun(with_static, in_tree, f"jit({self._name})")
        # the signature marks Python scalars (see _signature); their avals are weak
        sig = _leaf_signatures(key[1:]) if isinstance(key[0], str) else key[1]
        avals = [ShapedArray(s[0], s[1], True) if len(s) == 3 else get_aval(x)
                 for x, s in zip(leaves, sig)]
        # closed-over arrays are constants captured now (JAX's rule), whatever their values
        traced = trace_to_jaxpr(f_flat, avals, name=f"jit({self._name})", capture_consts=True)
        traced.out_tree = out_store.val
        traced, closure = _closure_to_args(traced)
        optimized, stats = optimize_with_stats(traced)
        return _Entry(optimized, out_store.val, closure, traced, stats, self._name, self._fast)

    def __call__(self, *args, **kwargs):
        if _DISABLE_JIT:  # functrans.config's jax_disable_jit, or functrans.disable_jit()
            return self._fun(*args, **kwargs)
        if "dask.array" in sys.modules:  # chunked dask arrays of points: one task per chunk
            from functrans.backends import dask_jit
            if dask_jit.holds_dask(args, kwargs):
                return dask_jit.call(self._entry, args, kwargs)
        entry, leaves = self._entry(args, kwargs)
        if entry.library is not None and not entry.closure and find_top_trace(leaves) is None:
            with using(entry.library):  # compiled for, and run on, that library
                outs = entry.library.unaliased(entry.compiled()(*leaves), leaves)
            return entry.unflatten(outs)
        if not entry.closure and find_top_trace(leaves) is None:
            outs = entry.compiled()(*leaves)  # eager: no bind needed
            if _DEBUG_NANS:
                self._check_nans(args, kwargs, leaves, outs)
            return entry.unflatten(outs)
        outs = jit_p.bind(*entry.closure, *leaves, jaxpr=entry.jaxpr, name=entry.name)
        return entry.unflatten(outs)

    def _check_nans(self, args, kwargs, leaves, outs) -> None:
        """jax_debug_nans: a NaN among the outputs (from inputs without one) re-runs the
        function op by op, unjitted, so the error names the primitive that made it (JAX's way)."""
        from functrans.flags import disable_jit
        from functrans.core.nan_check import any_nan, nan_error
        if not any_nan(outs) or any_nan(leaves):
            return
        with disable_jit():
            self._fun(*args, **kwargs)  # eager bind checks each primitive
        raise nan_error(f"jit({self._name})")  # the compiled program's NaN, not the eager one's

    def lower(self, *args, **kwargs) -> Lowered:
        """The traced and optimised programs and generated code for these arguments.

        >>> import functrans.numpy as fnp
        >>> low = jit(lambda x: fnp.sin(x) * 1.0).lower(fnp.ones(3))
        >>> (low.eqns_before, low.eqns_after)
        (2, 1)
        """
        return Lowered(self._entry(args, kwargs)[0])

    def __get__(self, obj, objtype=None):
        """As a method decorator: the instance is the first (positional) argument, so mark it
        static (static_argnums=0) unless it is a pytree of arrays."""
        if obj is None:
            return self
        return functools.partial(self, obj)

    def cache_info(self) -> CacheInfo:
        return self._cache.info()

    def clear_cache(self) -> None:
        """Drop every traced program, and free the workspace buffers they hold."""
        self._cache.clear()

    def __repr__(self):
        return f"jit({self._name})"


_FLOAT_KEY = ((), np.dtype(np.float64), True)  # weak: a Python float, not a float64 array


def _flat_key(args) -> tuple | None:
    """(cache key, leaves) of a call whose arguments are numpy arrays, Python floats, and
    lists, tuples and dicts of them, or None. Cheaper than tree_flatten with a PyTreeDef (a
    third of the cost of a small jitted call with a network's parameters among its
    arguments)."""
    key, leaves = ["flat"], []
    return (tuple(key), leaves) if _add_keys(args, key, leaves) else None


def _add_keys(items, key: list, leaves: list) -> bool:
    """Append each item's key to `key`: (shape, dtype) for an array, _FLOAT_KEY for a float,
    (type, length or sorted keys, *keys of the children) for a list, tuple or dict; and its
    leaves to `leaves`, in tree_flatten's order (an Array as a plain view: numpy's ufuncs cost
    more on a subclass). False at the first item of another kind."""
    for a in items:
        t = type(a)
        if t is np.ndarray or t is Array:
            key.append((a.shape, a.dtype))
            leaves.append(a if t is np.ndarray else np.asarray(a))
        elif t is float:
            key.append(_FLOAT_KEY)
            leaves.append(a)
        elif t is list or t is tuple or t is dict:
            names = tuple(sorted(a)) if t is dict else None
            nested = [t, len(a) if names is None else names]
            if not _add_keys(a if names is None else [a[k] for k in names], nested, leaves):
                return False
            key.append(tuple(nested))
        else:
            return False
    return True


def _leaf_signatures(key) -> list:
    """The (shape, dtype[, weak]) of each leaf, in order, from the items of a `_flat_key`."""
    out = []
    for item in key:
        if type(item[0]) is type:  # a list, tuple or dict: (type, length or keys, *children)
            out += _leaf_signatures(item[2:])
        else:
            out.append(item)
    return out


@functools.lru_cache(maxsize=64)
def _flat_tree(n: int):
    return tree_flatten((tuple(range(n)), {}))[1]


def _closure_to_args(closed: ClosedJaxpr):
    """Turn constants that are outer-transform tracers into leading inputs of the program."""
    pos = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
    if not pos:
        return closed, []
    j = closed.jaxpr
    moved = set(pos)
    rest = [i for i in range(len(j.constvars)) if i not in moved]
    jaxpr = Jaxpr([j.constvars[i] for i in rest], [j.constvars[i] for i in pos] + j.invars,
                  j.outvars, j.eqns)
    out = ClosedJaxpr(jaxpr, [closed.consts[i] for i in rest])
    out.out_tree = closed.out_tree
    return out, [closed.consts[i] for i in pos]


def _fast_backend(backend: str | None) -> bool:
    """Whether jit compiles with numba: `backend` "numba", or None with numba installed."""
    if backend not in (None, "numpy", "numba"):
        raise ValueError(f"jit: backend={backend!r}; use None (numba when installed, else "
                         "numpy), 'numpy' or 'numba'.")
    if backend == "numba" and not kernels.available():
        raise ImportError("jit(backend='numba') needs numba: pip install 'functrans[fast]'.")
    return backend == "numba" or (backend is None and kernels.available())


def jit(fun, static_argnums=(), *, static_argnames=(),
        cache_size: int = DEFAULT_CACHE_SIZE, backend: str | None = None) -> Jitted:
    """Compile `fun`: trace it once per signature (argument structure, shapes, dtypes, static
    argument values), optimise the program and run it as straight-line numpy code. Static
    arguments are given by position (static_argnums) or name (static_argnames); each is
    static however it is passed, as in JAX. `backend`: with numba installed (the extra
    "fast") or "numba", programs numba runs as one kernel are compiled with it (see
    docs/transforms/jit.md); "numpy" always runs numpy code.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> f = jit(lambda x: fnp.sum(fnp.sin(x) * x))
    >>> float(f(fnp.zeros(3))), float(ft.grad(f)(fnp.zeros(3))[0])
    (0.0, 0.0)
    """
    return Jitted(fun, static_argnums, cache_size, static_argnames, backend)
