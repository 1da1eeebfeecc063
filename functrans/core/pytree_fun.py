"""Wrapping user functions of pytrees into functions of flat lists, as every transform needs."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from functrans.core.avals import get_aval, is_valid_value
from functrans.core.trace import Tracer
from functrans.core.trace import trace_state as _trace_state  # read only: is a program staged
from functrans.errors import DTypeError
from functrans.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten


class Store:
    """A box set once, read after the wrapped function ran (its output structure)."""

    __slots__ = ("val",)

    def __init__(self):
        self.val = None


def flatten_fun(f: Callable, in_tree, name: str = "functrans") -> tuple[Callable, Store]:
    """`f` over flat leaves; the output structure lands in the returned store. An output leaf
    that is not an array fails here, named by its place in the output (`name` is the
    transform's, for the message).

    A transform calls `f` on tracers, so a numpy array among its results is a constant of `f`
    (an array it closed over, or made). Run eagerly (jvp, vjp, vmap), the transform hands it
    to its caller: it is copied here, so the caller never holds the function's own array.
    While a program is staged (jit, make_jaxpr) it stays a constant of the program, and jit
    copies constants it returns."""
    store = Store()

    def f_flat(*leaves):
        args, kwargs = tree_unflatten(in_tree, leaves)
        out = f(*args, **kwargs)
        out_flat, out_tree = tree_flatten(out)
        for o in out_flat:
            if not (isinstance(o, Tracer) or is_valid_value(o) or hasattr(o, "__array__")):
                raise _not_an_array_output(out, name)
        store.val = out_tree
        if not _trace_state.dynamic.level:
            out_flat = [o.copy() if isinstance(o, np.ndarray) else o for o in out_flat]
        return out_flat

    return f_flat, store


def _not_an_array_output(out, name: str) -> DTypeError:
    """The error naming the first output leaf that is not an array, by its path."""
    for path, o in tree_flatten_with_path(out)[0]:
        if not (isinstance(o, Tracer) or is_valid_value(o) or hasattr(o, "__array__")):
            where = f"output{keystr(path)}" if path else "the output"
            kind = f"{type(o).__module__}.{type(o).__qualname__}" \
                if type(o).__module__ != "builtins" else type(o).__name__
            return DTypeError(
                f"{name}: {where} of the function has type {kind} ({o!r:.40}), which is not an "
                "array. A transformed function returns pytrees (tuple, list, dict, None) of "
                f"arrays or Python scalars. Return the {kind} value from outside the transformed "
                "function (a wrapper that calls it and adds the value), or drop it from the "
                "output.")
    raise AssertionError("no output leaf is invalid")


def as_value(x, where: str):
    """Check a leaf is an array-like functrans can trace, converting lists and scalars."""
    if isinstance(x, Tracer | np.ndarray):
        return x
    if isinstance(x, bool | int | float | complex | np.generic):
        return np.asarray(x)
    if is_valid_value(x):
        return x
    if hasattr(x, "__array__"):
        return np.asarray(x)
    raise DTypeError(
        f"{where}: a leaf of type {type(x).__module__}.{type(x).__qualname__} is not an array. "
        "Arguments must be pytrees (tuple, list, dict, None) of numpy arrays or Python scalars.")


def normalize_argnums(argnums, nargs: int, fname: str, distinct: bool = False
                      ) -> tuple[int, ...]:
    """argnums as a tuple of indices in [0, nargs); `distinct` refuses repeats (differentiating
    twice with respect to one argument would give that argument one slot, the other zeros)."""
    single = isinstance(argnums, int)
    if not single and not isinstance(argnums, tuple | list):
        raise TypeError(f"{fname}: argnums={argnums!r} must be an int or a tuple of ints, got "
                        f"{type(argnums).__name__}.")
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, int):
            raise TypeError(f"{fname}: argnums={argnums!r} must be an int or a tuple of ints; "
                            f"entry {a!r} is a {type(a).__name__}.")
        if not -nargs <= a < nargs:
            raise ValueError(f"{fname}: argnums={argnums!r} is out of range for a function "
                             f"called with {nargs} positional argument(s). Use indices in "
                             f"[0, {nargs}).")
    norm = tuple(a % nargs for a in nums)
    if distinct and len(set(norm)) != len(norm):
        raise ValueError(f"{fname}: argnums={argnums!r} names an argument more than once; list "
                         "each argument once (e.g. argnums=(0, 1)).")
    return norm


def check_callable(f, fname: str):
    """A transform of something not callable fails when it is built, not when called."""
    if not callable(f):
        raise TypeError(f"{fname}: expected a function to transform, got "
                        f"{type(f).__name__} {f!r:.60}. Pass the function itself, e.g. "
                        f"{fname}(f), not its result {fname}(f(x)).")


def split_static(args: Sequence, static_argnums, fname: str):
    """(dynamic args, function rebuilding the full argument list, static values)."""
    static = normalize_argnums(static_argnums, len(args), fname) if static_argnums != () \
        else ()
    static_vals = tuple(args[i] for i in static)
    dyn = [a for i, a in enumerate(args) if i not in static]

    def merge(dyn_args):
        it = iter(dyn_args)
        return [args[i] if i in static else next(it) for i in range(len(args))]

    return dyn, merge, static_vals


def leaf_avals(leaves) -> list:
    """The abstract value (shape, dtype, weak type) of each leaf."""
    return [get_aval(x) for x in leaves]


