"""`jet`: truncated Taylor series pushed through a function, with JAX's signature."""

from __future__ import annotations

import numpy as np

from functrans.core.avals import get_aval, is_float
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value, check_callable, flatten_fun
from functrans.core.symbolic import Zero
from functrans.core.trace import Tracer
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.layout import instantiate
from functrans.transforms.taylor.trace import jet_flat
from functrans.tree_util import tree_flatten, tree_structure, tree_unflatten


def jet(fun, primals, series):
    """Taylor-mode derivatives: push the truncated series of each input through `fun`.

    `primals` is a tuple of arrays, `series` a tuple holding for each primal a list of K terms
    x_1..x_K, the derivatives of an input curve t -> x(t) at t = 0 (JAX's convention, not
    Taylor coefficients divided by k!). Returns (fun(*primals), series_out), series_out
    holding for each output leaf the K derivatives of t -> fun(x(t)) at 0.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, (y1, y2) = ft.jet(fnp.exp, (0.0,), ([1.0, 0.0],))
    >>> float(y), float(y1), float(y2)
    (1.0, 1.0, 1.0)
    """
    check_callable(fun, "jet")
    if not isinstance(primals, tuple | list) or not isinstance(series, tuple | list):
        raise TypeError("jet: primals and series must be tuples, one entry per positional "
                        f"argument of fun; got {type(primals).__name__} and "
                        f"{type(series).__name__}. Write jet(f, (x,), ([x1, x2],)).")
    if len(primals) != len(series):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series; give one list "
                         "of terms per primal.")
    p_flat, s_flat = [], []
    for i, (x, terms) in enumerate(zip(primals, series)):
        if isinstance(x, tuple | list | dict) or tree_structure(x).num_leaves != 1:
            raise TypeError(f"jet: primal value at position {i} is not an array (jet takes one "
                            "array per argument, not a pytree); flatten it first, e.g. with "
                            "functrans.flatten_util.ravel_pytree.")
        if not isinstance(terms, tuple | list):
            raise TypeError(f"jet: the series for argument {i} must be a list of terms, got "
                            f"{type(terms).__name__}. Write ([x1, x2, ...],) per argument.")
        x = as_value(x, "jet primals")
        aval = get_aval(x)
        checked = []
        for j, t in enumerate(terms):
            t = as_value(t, "jet series")
            ta = get_aval(t)
            if ta.shape != aval.shape:
                raise ShapeError(f"jet: term {j + 1} for argument {i} has shape {ta.shape} but "
                                 f"its primal has shape {aval.shape}; every term must match "
                                 "its primal's shape.")
            if not is_float(aval.dtype):
                raise DTypeError(f"jet: primal {i} has dtype {aval.dtype.name}, which has no "
                                 "derivatives; make it a float (x.astype(float)) to push a "
                                 "series through it.")
            checked.append(np.asarray(t, aval.dtype) if ta.dtype != aval.dtype
                           and not isinstance(t, Tracer) else t)
        p_flat.append(x)
        s_flat.append(checked)
    orders = {len(s) for s in s_flat}
    if len(orders) > 1:
        raise ValueError(f"jet: the series have different lengths {sorted(orders)}; every "
                         "argument needs the same number of terms (pad with zeros).")
    order = orders.pop() if orders else 0
    in_tree = tree_structure((tuple(p_flat), {}))
    f_flat, out_tree = flatten_fun(fun, in_tree, "jet")
    p_out, s_out = jet_flat(f_flat, p_flat, s_flat, order)
    s_out = [[instantiate(t) if type(t) is Zero else t for t in ts] for ts in s_out]
    outs = unaliased([*p_out, *[t for ts in s_out for t in ts]],
                     [*p_flat, *[t for ts in s_flat for t in ts]])
    p_out, rest = outs[:len(p_out)], iter(outs[len(p_out):])
    s_out = [[next(rest) for _ in ts] for ts in s_out]
    return tree_unflatten(out_tree.val, p_out), tree_unflatten(out_tree.val, s_out)
