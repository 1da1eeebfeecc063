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

import cupy
import numpy as np

from functrans.backend import using
from functrans.backends import result_avals

NAME = "cupy"

FELL_BACK: set[str] = set()


def is_array_type(t: type) -> bool:
    return issubclass(t, cupy.ndarray)


def from_numpy(a):
    """A numpy array as a device array (scalars stay as they are: CuPy takes them)."""
    return cupy.asarray(a) if isinstance(a, np.ndarray) else a


def _asarray(a, dtype=None, copy=None, **kwargs):
    if copy:
        return cupy.array(a, dtype=dtype)
    return cupy.asarray(a, dtype=dtype)


def _array(a, dtype=None, copy=True, **kwargs):
    return cupy.array(a, dtype=dtype, copy=copy) if copy is not None else cupy.asarray(a, dtype)


@functools.cache
def namespace() -> dict:
    """numpy's names with CuPy's functions over them (dtype helpers stay numpy's)."""
    names = {k: getattr(np, k) for k in dir(np) if not k.startswith("__")}
    for k in dir(cupy):
        if not k.startswith("_") and k in names:
            v = getattr(cupy, k)
            if callable(v) and not isinstance(v, type):
                names[k] = v
    for k in ("dtype", "finfo", "iinfo", "result_type", "issubdtype", "errstate",
              "promote_types", "can_cast"):
        names[k] = getattr(np, k)
    names.update(asarray=_asarray, array=_array, linalg=cupy.linalg, fft=cupy.fft)
    return names


_IMPLS: dict = {}


def impl_for(prim):
    """How `prim` runs on CuPy arrays (see the module docstring)."""
    fn = _IMPLS.get(prim)
    if fn is None:
        fn = _IMPLS[prim] = functools.partial(_on_device, prim)
    return fn


def _device(x):
    return cupy.asarray(x) if isinstance(x, np.ndarray) else x


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
