"""numpy functions met on traced values.

`np.sin(x)`, `np.sum(x)` or `ndarray + x` on a tracer reach functrans through numpy's
`__array_ufunc__` / `__array_function__` protocols, which hand over the numpy function object
itself. `stand_ins` maps those objects, by identity, to the functrans.numpy functions of the
same name in the same namespace (numpy -> functrans.numpy, numpy.linalg ->
functrans.numpy.linalg). A name is not enough: numpy.linalg.trace sums over the last two axes
and numpy.trace over the first two; numpy.emath.sqrt is complex below 0 where numpy.sqrt is
nan. Any other numpy function raises TracerArrayConversionError, naming what to call instead.
"""

from __future__ import annotations

import types

import numpy as np

# (numpy namespace, its functrans.numpy counterpart's attribute path), most specific last
_NAMESPACES = (("numpy", ""), ("numpy.linalg", "linalg"))
# where numpy functions missing from the table are looked up, to name them in errors
_NUMPY_NAMESPACES = {"numpy": np, "numpy.linalg": np.linalg, "numpy.fft": np.fft,
                     "numpy.emath": np.emath, "numpy.random": np.random}


def _public_functions(module) -> dict:
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    out = {}
    for name in names:
        fn = getattr(module, name, None)
        if callable(fn) and not isinstance(fn, type | types.ModuleType):
            out[name] = fn
    return out


def is_numpy_function(obj) -> bool:
    return isinstance(obj, np.ufunc | types.FunctionType | types.BuiltinFunctionType) or \
        hasattr(obj, "_implementation")  # numpy's array_function_dispatch wrappers


def _submodule(module, path: str):
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    return module


def stand_ins(fnp) -> dict:
    """{numpy function or ufunc: functrans.numpy function}, by identity, for the functrans.numpy
    module `fnp`: every public function of functrans.numpy (and of .linalg) stands in for the
    numpy function bound to the same name in the matching numpy namespace."""
    table = {}
    for np_name, fnp_path in _NAMESPACES:
        np_space = _NUMPY_NAMESPACES[np_name]
        for name, fn in _public_functions(_submodule(fnp, fnp_path)).items():
            obj = getattr(np_space, name, None)
            if obj is not None and is_numpy_function(obj):
                table[obj] = fn
    return table


def numpy_name(func) -> str:
    """The public name of a numpy function, e.g. numpy.linalg.trace."""
    name = getattr(func, "__name__", repr(func))
    for space_name, space in reversed(list(_NUMPY_NAMESPACES.items())):
        if getattr(space, name, None) is func:
            return f"{space_name}.{name}"
    return f"{getattr(func, '__module__', None) or 'numpy'}.{name}"


def explainer(fnp, table: dict):
    """`explain(func, method, kwarg_names)`: why numpy's `func` cannot run on a traced value,
    and which functrans.numpy function to call instead (or that there is none)."""
    fnp_names = {fn: name for name, fn in _public_functions(fnp).items()}
    fnp_names.update({fn: "linalg." + name
                      for name, fn in _public_functions(fnp.linalg).items()})

    def explain(func, method: str, kwarg_names: list) -> str:
        what = numpy_name(func)
        stand_in = table.get(func)
        if stand_in is not None:  # a ufunc method (np.add.reduce) or numpy-only keywords
            used = f".{method}" if method != "__call__" else \
                f" with keyword arguments {kwarg_names}"
            return (f"{what}{used} cannot trace values. Call "
                    f"functrans.numpy.{fnp_names.get(stand_in, what.split('.')[-1])} directly, "
                    "without ufunc methods or numpy-only keyword arguments (out=, where=, "
                    "dtype=; for .reduce use the reduction, e.g. functrans.numpy.sum)")
        name = what.rsplit(".", 1)[-1]
        namesake = getattr(fnp, name, None)
        also = (f" functrans.numpy.{name} is numpy.{name}'s counterpart, which differs from "
                f"{what}." if callable(namesake) and what != f"numpy.{name}" else "")
        return (f"{what} cannot trace values, and functrans.numpy has no counterpart of it."
                f"{also} Express it with functrans.numpy functions (import functrans.numpy "
                "as fnp), or compute it outside the transformed function")

    return explain
