"""The one namespace through which primitive implementations reach an array library.

Implementations call `xp.sin(x)`, never `numpy.sin(x)`, so another Array-API-style library
(CuPy, dask.array) can run the same IR: `set_backend(cupy)` swaps every implementation at once,
without touching a derivative rule.
"""

from __future__ import annotations

import types

import numpy


class _Namespace(types.SimpleNamespace):
    """Attribute access is a plain instance-dict lookup: cheap on the eager hot path."""


xp = _Namespace()
_active = {"module": None}


def set_backend(module) -> None:
    """Route every primitive implementation through `module` (default: numpy)."""
    xp.__dict__.clear()
    xp.__dict__.update({k: getattr(module, k) for k in dir(module) if not k.startswith("__")})
    _active["module"] = module


def get_backend():
    """The array module primitive implementations run on (numpy unless set_backend changed it)."""
    return _active["module"]


set_backend(numpy)
