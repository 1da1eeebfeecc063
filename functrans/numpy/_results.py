"""Which eager functrans.numpy results are functrans's `Array` (functrans/core/array.py).

numpy's own rule for subclasses, with functrans's `Array` as the subclass: a function whose
array arguments are all plain numpy arrays returns what numpy would (plain arrays), one given
an `Array` returns `Array`s, and one that builds its arrays from lists, scalars or shapes
(`zeros`, `arange`, `linspace`, `sin([1.0, 2.0])`) returns `Array`s; `array` and `asarray`
always return one. So a table made by functrans.numpy, and everything computed from it, takes
traced indices and has `.at[...]`, while numpy data passed in comes back as numpy made it.

Why not an `Array` from every call, as JAX returns its arrays: the view that makes one costs
about 0.15 us, which on the small calls of benchmarks/bench_eager_overhead.py grew the eager
overhead by 8-12% (docs/arrays.md has the figures); the rule above adds nothing to a call on
plain arrays.

Most functions compute with primitives, whose eager implementations return plain numpy
arrays: `return_arrays` wraps each public function once, at import, to apply the rule.
Functions whose hot eager paths apply it themselves (the ufunc-like functions, `sum`,
`mean`, `where`, `asarray`) say so with `returns_arrays = True` and are left as they are: a
wrapper costs a Python call, a tenth of a small numpy call.
"""

from __future__ import annotations

import functools
import types

import numpy as np

from functrans.backend import adapter_of_type
from functrans.core.array import Array, as_arrays

_ndarray = np.ndarray
_PLAIN, _ARRAY = "plain", "array"
# argument types that are never another library's array (axes, flags, dtypes): no lookup
_NEVER_FOREIGN = frozenset({int, float, bool, complex, str, type(None), slice, np.dtype})


def keeps_plain(args, kwargs=None) -> bool:
    """Whether a call with these arguments returns plain numpy arrays: some argument (or an
    item of a list or tuple argument) is a plain numpy array, and none is an `Array`."""
    plain = False
    for a in (*args, *kwargs.values()) if kwargs else args:
        t = type(a)
        if t is _ndarray:
            plain = True
        elif t is Array:
            return False
        elif t is list or t is tuple:
            for b in a:
                tb = type(b)
                if tb is Array:
                    return False
                plain = plain or tb is _ndarray
    return plain


def like_inputs(out, args, kwargs=None):
    """`out` (an array, or a tuple or list of them) as the rule says for these arguments."""
    return out if keeps_plain(args, kwargs) else as_arrays(out)


def _result_rule(args, kwargs):
    """keeps_plain's answer as _PLAIN or _ARRAY, found before the call; or the adapter of the
    dask or CuPy arrays among the arguments (functrans.backends), whose library computes."""
    plain = array = False
    for a in (*args, *kwargs.values()) if kwargs else args:
        t = type(a)
        if t is _ndarray:
            plain = True
        elif t is Array:
            array = True
        elif t is list or t is tuple:
            for b in a:
                tb = type(b)
                if tb is Array:
                    array = True
                elif tb is _ndarray:
                    plain = True
                elif tb not in _NEVER_FOREIGN and (adapter := adapter_of_type(tb)) is not None:
                    return adapter
        elif t not in _NEVER_FOREIGN and (adapter := adapter_of_type(t)) is not None:
            return adapter
    return _PLAIN if plain and not array else _ARRAY


def foreign_adapter(args, kwargs=None):
    """The adapter of the dask or CuPy arrays among `args` (or in a list or tuple argument),
    or None: a functrans.numpy function then runs through `functrans.backends.call_traced`."""
    rule = _result_rule(args, kwargs)
    return None if rule is _PLAIN or rule is _ARRAY else rule


def _following_inputs(fn, module_name: str):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        rule = _result_rule(args, kwargs)
        if rule is _PLAIN:
            return fn(*args, **kwargs)
        if rule is _ARRAY:
            return as_arrays(fn(*args, **kwargs))
        from functrans.backends import call_traced
        return call_traced(fn, rule, args, kwargs)
    wrapped.returns_arrays = True
    # pickle (and help()) find the function under the public module's name
    wrapped.__module__ = module_name
    return wrapped


def return_arrays(module: types.ModuleType, names) -> None:
    """Replace each function `module.<name>` of functrans.numpy by one following the rule."""
    done: dict = {}  # one wrapper per function: aliases (abs, absolute) stay one object
    for name in names:
        fn = getattr(module, name, None)
        if not isinstance(fn, types.FunctionType) or getattr(fn, "returns_arrays", False) \
                or not fn.__module__.startswith(("functrans.numpy", "functrans.scipy")):
            continue
        if id(fn) not in done:
            done[id(fn)] = _following_inputs(fn, module.__name__)
        setattr(module, name, done[id(fn)])
