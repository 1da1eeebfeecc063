"""Primitives that steer differentiation itself: stop_gradient."""

from __future__ import annotations

from functrans.core.avals import ShapedArray, get_aval, is_float, shape_of
from functrans.core.symbolic import Zero
from functrans.primitives.registry import define


def _stop_gradient_jvp(primals, tangents):
    # the value passes through; no derivative does (the primal is re-bound so that outer
    # transforms stop too)
    out = stop_gradient_p.bind(*primals)
    return out, Zero(ShapedArray(shape_of(out), out.dtype))


stop_gradient_p = define(
    "stop_gradient", impl=lambda x: x, abstract=lambda x: x,
    jvp=_stop_gradient_jvp, batch=lambda vals, dims: (stop_gradient_p.bind(vals[0]), dims[0]),
    props=("elementwise",), torch_name=None)


def stop_gradient(x):
    """`x` unchanged, but treated as a constant by every derivative (a pytree is mapped).

    >>> import functrans as ft
    >>> float(ft.grad(lambda x: x * stop_gradient(x))(3.0))
    3.0
    """
    from functrans.core.pytree_fun import as_value
    from functrans.tree_util import tree_map

    def leaf(v):
        v = as_value(v, "stop_gradient")
        return stop_gradient_p.bind(v) if is_float(get_aval(v).dtype) else v

    return tree_map(leaf, x)
