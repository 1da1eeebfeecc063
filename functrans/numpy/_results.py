"""Eager results of functrans.numpy as functrans's `Array` (see functrans/core/array.py).

Most functions here compute with primitives, whose eager implementations return plain numpy
arrays. `return_arrays` wraps each public function once, at import, so that what it hands
back is an `Array` (a view: no copy), which traced indices and `.at[...]` work on. Functions
whose hot eager paths convert their result themselves (the ufunc-like functions, `sum`,
`mean`, `where`) say so with `returns_arrays = True` and are left as they are: a wrapper
costs a Python call, a tenth of a small numpy call.
"""

from __future__ import annotations

import functools
import types

from functrans.core.array import as_arrays


def _returning_arrays(fn, module_name: str):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        return as_arrays(fn(*args, **kwargs))
    wrapped.returns_arrays = True
    # pickle (and help()) find the function under the public module's name
    wrapped.__module__ = module_name
    return wrapped


def return_arrays(module: types.ModuleType, names) -> None:
    """Replace each function `module.<name>` of functrans.numpy by one returning `Array`s."""
    done: dict = {}  # one wrapper per function: aliases (abs, absolute) stay one object
    for name in names:
        fn = getattr(module, name, None)
        if not isinstance(fn, types.FunctionType) or getattr(fn, "returns_arrays", False) \
                or not fn.__module__.startswith("functrans.numpy"):
            continue
        if id(fn) not in done:
            done[id(fn)] = _returning_arrays(fn, module.__name__)
        setattr(module, name, done[id(fn)])
