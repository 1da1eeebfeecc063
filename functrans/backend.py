"""The one namespace through which primitive implementations reach an array library.

Implementations call `xp.sin(x)`, never `numpy.sin(x)`, so another array library can run the
same IR without touching a derivative rule. Which library is chosen from the inputs, as
array-api-compat's `array_namespace` does: numpy arrays and Python scalars run on numpy (the
embedded default); dask arrays on dask.array, CuPy arrays on CuPy, each through one small
adapter module in `functrans.backends` (imported on first sight of such an array, so
`import functrans` imports neither library). `using(adapter)` routes `xp` to an adapter for
the duration of a computation; eager binds, jit and eager functrans.numpy calls do that when
an input is a foreign array. `xp` stays a plain namespace (numpy's, attribute lookups at dict
speed); an adapter's namespace functions check which thread calls them, so numpy work in
other threads meanwhile still gets numpy's functions.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types

import numpy

from functrans.errors import DTypeError


class _Namespace(types.SimpleNamespace):
    """Attribute access is a plain instance-dict lookup: cheap on the eager hot path."""


xp = _Namespace()
_NUMPY_NAMES = {k: getattr(numpy, k) for k in dir(numpy) if not k.startswith("__")}
_default = {"module": numpy}  # what set_backend chose (numpy unless changed)


class _ThreadState(threading.local):
    adapter = None  # the library this thread computes on now (None: the default)


_thread = _ThreadState()
# `xp` holds one adapter's namespace while any thread computes on that library; a thread on
# another library waits (two threads on the same library share it)
_swap = threading.Condition()
_holder = {"adapter": None, "count": 0}


def _namespace_names(module) -> dict:
    if module is numpy:
        return _NUMPY_NAMES
    if hasattr(module, "namespace"):
        return module.namespace()
    return {k: getattr(module, k) for k in dir(module) if not k.startswith("__")}


def _install(names) -> None:
    xp.__dict__.clear()
    xp.__dict__.update(names)


def set_backend(module) -> None:
    """Route every primitive implementation through `module` (default: numpy), for the whole
    process. Foreign arrays (dask, CuPy) need no call: their library is chosen from the
    inputs (`using`)."""
    with _swap:
        _install(_namespace_names(module))
        _default["module"] = module


def get_backend():
    """The array module (or adapter of functrans.backends) the calling thread's primitive
    implementations run on now: numpy unless `set_backend` or `using` changed it."""
    return _thread.adapter or _default["module"]


def current_adapter():
    """The adapter the calling thread computes on inside `using`, or None. An adapter's
    namespace functions ask it: called from any other thread they are numpy's own, so a
    thread computing on numpy while another computes on dask or CuPy gets numpy's results."""
    return _thread.adapter


@contextlib.contextmanager
def using(adapter):
    """Run the body with `xp` routed to `adapter` (a module of functrans.backends; numpy or
    None: the default) in the calling thread."""
    if adapter is numpy:
        adapter = None
    before = _thread.adapter
    if adapter is before:
        yield
        return
    if adapter is None:  # back to numpy inside a foreign computation: the namespace's
        _thread.adapter = None  # functions see it and call numpy's
        try:
            yield
        finally:
            _thread.adapter = before
        return
    with _swap:
        while _holder["adapter"] not in (None, adapter):
            _swap.wait()
        if _holder["adapter"] is None:
            _install(_namespace_names(adapter))
            _holder["adapter"] = adapter
        _holder["count"] += 1
    _thread.adapter = adapter
    try:
        yield
    finally:
        _thread.adapter = before
        with _swap:
            _holder["count"] -= 1
            if _holder["count"] == 0:
                _holder["adapter"] = None
                _install(_namespace_names(_default["module"]))
                _swap.notify_all()


def routed(adapter, library_fn, numpy_fn):
    """A namespace function of `adapter`: `library_fn` in a thread computing on the adapter's
    library, `numpy_fn` in any other (see `current_adapter`)."""
    def call(*args, **kwargs):
        if _thread.adapter is adapter:
            return library_fn(*args, **kwargs)
        return numpy_fn(*args, **kwargs)
    call.__name__ = getattr(numpy_fn, "__name__", "routed")
    call.__wrapped__ = library_fn
    for method in ("at", "reduce", "accumulate", "outer", "reduceat"):  # a ufunc's methods
        if hasattr(numpy_fn, method):
            setattr(call, method, routed(adapter, getattr(library_fn, method, _missing(
                library_fn, method)), getattr(numpy_fn, method)))
    return call


def _missing(fn, method):
    def call(*args, **kwargs):
        raise TypeError(f"{getattr(fn, '__name__', fn)!r} has no method {method!r} in this "
                        "array library")
    return call


# --- which library an array belongs to -------------------------------------------------------

# type -> its adapter module, or None for numpy's and every other type; filled on first sight
# (its size is the number of argument types a program uses; two threads filling one entry
# at once store the same answer)
_ADAPTER_OF_TYPE: dict[type, object] = {}
# the types whose adapter is not None: empty until a foreign array has been met, so numpy-only
# programs pay one truth test on the eager bind path (functrans.core.trace.bind)
FOREIGN_TYPES: set[type] = set()

_ADAPTER_MODULES = {"dask": "functrans.backends.dask", "cupy": "functrans.backends.cupy"}


def adapter_of_type(t: type):
    """The adapter module of functrans.backends for arrays of type `t`, or None (numpy, a
    scalar, a tracer, anything else)."""
    try:
        return _ADAPTER_OF_TYPE[t]
    except KeyError:
        pass
    adapter = None
    root = (getattr(t, "__module__", None) or "").partition(".")[0]
    name = _ADAPTER_MODULES.get(root)
    if name is not None and root in sys.modules:  # its arrays exist only once it is imported
        import importlib
        candidate = importlib.import_module(name)
        if candidate.is_array_type(t):
            adapter = candidate
    _ADAPTER_OF_TYPE[t] = adapter
    if adapter is not None:
        FOREIGN_TYPES.add(t)
    return adapter


def adapter_of(x):
    """The adapter for the array `x`, or None when numpy (or no array library) computes it."""
    return adapter_of_type(type(x))


def array_library(values):
    """The adapter that must compute on `values` (an iterable of leaves), or None for numpy:
    numpy arrays and Python scalars join any library; two foreign libraries do not mix."""
    found = None
    for x in values:
        a = adapter_of_type(type(x))
        if a is not None and a is not found:
            if found is not None:
                raise DTypeError(
                    f"one computation got arrays of two array libraries, {found.NAME} and "
                    f"{a.NAME}. Convert them to one library first (for example "
                    f"{a.NAME} arrays with their library's asarray/from_array).")
            found = a
    return found


_install(_NUMPY_NAMES)
