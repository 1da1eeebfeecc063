"""The one namespace through which primitive implementations reach an array library.

Implementations call `xp.sin(x)`, never `numpy.sin(x)`, so another array library can run the
same IR without touching a derivative rule. Which library is chosen from the inputs, as
array-api-compat's `array_namespace` does: numpy arrays and Python scalars run on numpy (the
embedded default); dask arrays on dask.array, CuPy arrays on CuPy, each through one small
adapter module in `functrans.backends` (imported on first sight of such an array, so
`import functrans` imports neither library). `using(adapter)` routes `xp` to an adapter for
the duration of a computation, in the calling thread; eager binds, jit and eager
functrans.numpy calls do that when an input is a foreign array.
"""

from __future__ import annotations

import contextlib
import sys
import threading

import numpy

from functrans.errors import DTypeError


class _Namespace(threading.local):
    """Attribute access is an instance-dict lookup (the calling thread's own): cheap on the
    eager hot path. Each thread starts on numpy; `using` changes the calling thread only, so a
    dask worker thread running numpy blocks is never routed to another library."""

    def __init__(self):
        self.__dict__.update(_NUMPY_NAMES)


class _Active(threading.local):
    module = numpy


_active = _Active()


def _names_of(module) -> dict:
    return {k: getattr(module, k) for k in dir(module) if not k.startswith("__")}


_NUMPY_NAMES = _names_of(numpy)
xp = _Namespace()


def _namespace_names(module) -> dict:
    if module is numpy:
        return _NUMPY_NAMES
    return module.namespace() if hasattr(module, "namespace") else _names_of(module)


def set_backend(module) -> None:
    """Route the calling thread's primitive implementations through `module` (default: numpy),
    or through an adapter of `functrans.backends` (a module with a `namespace()` function)."""
    names = _namespace_names(module)
    xp.__dict__.clear()
    xp.__dict__.update(names)
    _active.module = module


def get_backend():
    """The array module (or adapter) the calling thread's primitive implementations run on
    (numpy unless `set_backend` or `using` changed it)."""
    return _active.module


@contextlib.contextmanager
def using(adapter):
    """Run the body with `xp` routed to `adapter` (a module of functrans.backends, or numpy);
    None keeps the current library. Only the calling thread is affected."""
    before = _active.module
    if adapter is None or before is adapter:
        yield
        return
    saved = dict(xp.__dict__)
    set_backend(adapter)
    try:
        yield
    finally:
        xp.__dict__.clear()
        xp.__dict__.update(saved)
        _active.module = before


# --- which library an array belongs to -------------------------------------------------------

# type -> its adapter module, or None for numpy's and every other type; filled on first sight
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

