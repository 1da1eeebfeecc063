"""`functrans.lax`: structured control flow and derivative control, named as in `jax.lax`.

>>> import numpy as np
>>> import functrans as ft
>>> from functrans import lax
>>> float(ft.grad(lambda x: lax.fori_loop(0, 3, lambda i, v: v * x, 1.0))(2.0))
12.0
"""

from functrans.primitives.ad_control import stop_gradient
from functrans.transforms.control_flow import cond, fori_loop, scan, switch, while_loop

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "stop_gradient"]


def map(f, xs):  # noqa: A001  (jax.lax.map)
    """`f` applied to each slice of `xs` along axis 0, results stacked: a scan without carry.

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.map(lambda x: x * 2.0, np.arange(3.0)).tolist()
    [0.0, 2.0, 4.0]
    """
    _, ys = scan(lambda carry, x: (carry, f(x)), (), xs)
    return ys


