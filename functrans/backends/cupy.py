"""CuPy as an array library for functrans programs: the same programs on an NVIDIA GPU
(imported on first sight of a CuPy array; see functrans/backends/__init__.py).

A primitive runs its impl with `xp` routed to CuPy's functions (cupy, cupy.linalg), on
operands moved to the device (numpy constants and Python scalars mixed in are copied once per
call; jit copies its program's constants once, when it compiles). Where CuPy lacks what an impl
calls, the primitive runs numpy's impl on host copies and its results go back to the device:
correct, slow, and recorded in FELL_BACK so tests and benchmarks can show it.
"""

from __future__ import annotations

import functools
import sys
import types
import warnings

import numpy as np

try:
    import cupy
except ImportError:  # only the doctest collector imports this module without CuPy
    cupy = None

from functrans.backend import routed, using
from functrans.backends import result_avals

NAME = "cupy"

FELL_BACK: set[str] = set()


def is_array_type(t: type) -> bool:
    """Whether `t` is CuPy's array type."""
    return issubclass(t, cupy.ndarray)


def from_numpy(a):
    """A numpy array as a device array (scalars stay as they are: CuPy takes them)."""
    return cupy.asarray(a) if isinstance(a, np.ndarray) else a


def unaliased(outs, sources) -> list:
    """`outs` with every array that may share memory with one of `sources` (or an earlier
    output) replaced by a copy: CuPy arrays are mutable, so a result never views the
    caller's data (functrans.core.ownership does this for numpy arrays)."""
    seen = [s for s in sources if isinstance(s, cupy.ndarray)]
    out = []
    for o in outs:
        if isinstance(o, cupy.ndarray):
            if any(cupy.may_share_memory(o, s) for s in seen):
                o = o.copy()
            seen.append(o)
        out.append(o)
    return out


def _asarray(a, dtype=None, copy=None, **kwargs):
    if copy:
        return cupy.array(a, dtype=dtype)
    return cupy.asarray(a, dtype=dtype)


def _array(a, dtype=None, copy=True, **kwargs):
    return cupy.array(a, dtype=dtype, copy=copy) if copy is not None else cupy.asarray(a, dtype)


def _on_device_args(fn):
    """`fn` with numpy arrays among its arguments (top level, or in a list or tuple) moved to
    the device first: CuPy refuses numpy operands."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        return fn(*[_device_tree(a) for a in args],
                  **{k: _device_tree(v) for k, v in kwargs.items()})
    return call


def _device_tree(a):
    if isinstance(a, np.ndarray):
        return cupy.asarray(a)
    if isinstance(a, list | tuple) and any(isinstance(b, np.ndarray) for b in a):
        return type(a)(_device_tree(b) for b in a)
    return a


def _attribute(module, name):
    """module.<name>, or None where it is missing (or deprecated and raising)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return getattr(module, name, None)
        except Exception:
            return None


# numpy names that are types, dtype helpers or context managers: numpy's own
_NUMPY_KEPT = frozenset({"dtype", "finfo", "iinfo", "result_type", "issubdtype", "errstate",
                         "promote_types", "can_cast", "broadcast_shapes", "ndim", "shape",
                         "isscalar", "iterable"})


def _routed_module(numpy_module, cupy_module) -> types.SimpleNamespace:
    this = sys.modules[__name__]
    out = {}
    for k, v in vars(numpy_module).items():
        mine = _attribute(cupy_module, k)
        if k.startswith("_") or not callable(v) or mine is None:
            out[k] = v
        else:
            out[k] = routed(this, _on_device_args(mine), v)
    return types.SimpleNamespace(**out)


@functools.lru_cache(maxsize=1)  # built once
def namespace() -> dict:
    """numpy's names, each function routed (functrans.backend.routed): in the thread computing
    on CuPy, CuPy's function (numpy operands moved to the device); in any other thread, and
    for the names CuPy lacks, numpy's own."""
    this = sys.modules[__name__]
    names = {}
    for k in dir(np):
        if k.startswith("__"):
            continue
        v = getattr(np, k)
        mine = _attribute(cupy, k)
        if k in _NUMPY_KEPT or isinstance(v, type) or not callable(v) or mine is None \
                or isinstance(mine, type) or not callable(mine):
            names[k] = v
        else:
            names[k] = routed(this, _on_device_args(mine), v)
    names.update(asarray=routed(this, _asarray, np.asarray),
                 array=routed(this, _array, np.array),
                 linalg=_routed_module(np.linalg, cupy.linalg),
                 fft=_routed_module(np.fft, cupy.fft))
    return names


_IMPLS: dict = {}


def impl_for(prim):
    """How `prim` runs on CuPy arrays (see the module docstring)."""
    fn = _IMPLS.get(prim)
    if fn is None:
        fn = _IMPLS[prim] = functools.partial(_on_device, prim)
    return fn


def _device(x):
    return cupy.asarray(x) if isinstance(x, np.ndarray | np.generic) else x


def _on_device(prim, *args, **params):
    args = [_device(a) for a in args]
    try:
        with using(sys.modules[__name__]):
            out = prim.impl(*args, **params)
    except Exception:
        FELL_BACK.add(prim.name)
        return _on_host(prim, args, params)
    if prim.multiple_results:
        return [_device(o) for o in out]
    return _device(out)


def _on_host(prim, args, params):
    host = [cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else a for a in args]
    result_avals(prim, host, params)  # a shape or dtype error names the fix here
    with using(np):
        out = prim.impl(*host, **params)
    if prim.multiple_results:
        return [cupy.asarray(o) for o in out]
    return cupy.asarray(out)
