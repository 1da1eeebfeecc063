"""`functrans.debug.print`: print values when the program runs, eagerly or under transforms.

`print` binds the primitive `debug_print`, which has no outputs and whose impl prints. Its row
states the fact `effectful`, so the jit passes keep it though nothing reads its (absent)
outputs: dead-code elimination keeps it, common-subexpression elimination never merges two of
them, constant folding never runs it at compile time. Under `jit` it prints the runtime values
each time the compiled program runs; under `grad` and `jvp` it prints the primal values; under
`vmap` it prints once per batch element, as JAX does.
"""

from __future__ import annotations

import builtins
from typing import Any

from functrans.primitives.registry import define
from functrans.tree_util import tree_flatten, tree_unflatten


def _print_impl(*vals, fmt: str, in_tree):
    args, kwargs = tree_unflatten(in_tree, list(vals))
    builtins.print(fmt.format(*args, **kwargs))
    return []


def _print_abstract(*avals, fmt: str, in_tree):
    return []


def _print_jvp(primals, tangents, *, fmt: str, in_tree):
    debug_print_p.bind(*primals, fmt=fmt, in_tree=in_tree)
    return [], []


def _print_batch(vals, dims, *, fmt: str, in_tree):
    import functrans.numpy as fnp
    size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
    moved = [v if d is None else fnp.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    for i in range(size):  # one line per batch element, as JAX prints
        debug_print_p.bind(*[v if d is None else v[i] for v, d in zip(moved, dims)],
                           fmt=fmt, in_tree=in_tree)
    return [], []


debug_print_p = define("debug_print", impl=_print_impl, abstract=_print_abstract,
                       jvp=_print_jvp, batch=_print_batch,
                       multiple_results=True, facts=dict(effectful=True))


def print(fmt: str, *args: Any, **kwargs: Any) -> None:  # noqa: A001  (JAX's name)
    """Print `fmt.format(*args, **kwargs)` with the values the program computes: at once when
    called eagerly, and each time the program runs under `jit` (JAX's `jax.debug.print`).
    `args` and `kwargs` may be pytrees of arrays.

    >>> import numpy as np, functrans as ft
    >>> @ft.jit
    ... def f(x):
    ...     ft.debug.print("x = {}", x)
    ...     return x * 2.0
    >>> _ = f(np.array([1.0, 2.0]))
    x = [1. 2.]
    >>> _ = f(np.array([3.0, 4.0]))
    x = [3. 4.]
    """
    if not isinstance(fmt, str):
        from functrans.errors import ArgumentTypeError
        raise ArgumentTypeError(
            f"debug.print: the format must be a string, got {type(fmt).__name__}; call "
            "debug.print('x = {}', x).")
    leaves, in_tree = tree_flatten((args, kwargs))
    debug_print_p.bind(*leaves, fmt=fmt, in_tree=in_tree)
