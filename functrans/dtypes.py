"""dtypes beyond numpy's own.

`float0` is the dtype of the tangent (and cotangent) of an integer or boolean value, as in JAX:
such a value has no derivative, and a float0 array carries only a shape. Pass
`np.zeros(shape, float0)` as the tangent of an integer primal to `jvp` or `linearize`; they
return float0 tangents for integer and boolean outputs.

>>> import numpy as np, functrans as ft
>>> y, y_dot = ft.jvp(lambda n: n * 2, (3,), (np.zeros((), ft.dtypes.float0),))
>>> int(y), y_dot.dtype == ft.dtypes.float0
(6, True)
"""

from __future__ import annotations

import numpy as np

__all__ = ["float0"]

float0 = np.dtype([("float0", np.void, 0)])  # JAX's jax.dtypes.float0, bit for bit
