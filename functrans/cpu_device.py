"""The CPU device: `devices`, `device_put`, `device_get`, `block_until_ready`, as in JAX.

functrans computes with numpy on the host CPU, so there is one device and nothing is ever
asynchronous. `device_put` and `device_get` return copies of numpy arrays (JAX's `device_put`
of a numpy array makes a new buffer too), so the result never aliases the caller's data;
`block_until_ready` returns its argument itself, as JAX does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from functrans.core.array import as_array
from functrans.core.trace import Tracer
from functrans.errors import ArgumentError
from functrans.tree_util import tree_map


class CpuDevice:
    """The host CPU, functrans's only device (JAX's `CpuDevice`)."""

    id = 0
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0

    def __repr__(self):
        return "CpuDevice(id=0)"


_CPU = CpuDevice()


def devices(backend: str | None = None) -> list[CpuDevice]:
    """The devices functrans runs on: one CPU device. `backend` may be None or "cpu".

    >>> import functrans as ft
    >>> ft.devices()
    [CpuDevice(id=0)]
    """
    if backend not in (None, "cpu"):
        raise ArgumentError(
            f"devices(backend={backend!r}): functrans runs on the CPU only (numpy); pass "
            "backend='cpu' or leave it out.")
    return [_CPU]


def local_devices(process_index: int | None = None,
                  backend: str | None = None) -> list[CpuDevice]:
    """The devices of this process: the one CPU device (see `devices`).

    >>> import functrans as ft
    >>> ft.local_devices()[0].platform
    'cpu'
    """
    return devices(backend)


def _copy(x):
    if isinstance(x, Tracer):
        return x  # a traced value is not caller data: under jit, device_put is the identity
    return np.array(x, copy=True)


def device_put(x: Any, device: CpuDevice | None = None) -> Any:
    """`x` (a pytree) with each leaf a new array on the CPU (functrans's `Array`, as JAX gives
    its own): a copy, so later changes to the caller's arrays do not reach the result. `device` may be None or a CPU device. A Python
    number becomes a 0-d array of numpy's dtype for it (float64 for a float).

    >>> import numpy as np, functrans as ft
    >>> a = np.zeros(2)
    >>> b = ft.device_put(a)
    >>> a[0] = 1.0
    >>> b
    array([0., 0.])
    """
    if device is not None and not isinstance(device, CpuDevice):
        raise ArgumentError(
            f"device_put: device={device!r}; functrans has one device, functrans.devices()[0] "
            "(the CPU). Pass it, or leave device out.")
    return tree_map(lambda leaf: as_array(_copy(leaf)), x)  # JAX's arrays: functrans's Array


def device_get(x: Any) -> Any:
    """`x` (a pytree) with each leaf as a new plain numpy array (a copy of it): JAX's transfer
    to the host, which functrans's arrays are on already.

    >>> import numpy as np, functrans as ft
    >>> ft.device_get({"w": np.ones(2)})
    {'w': array([1., 1.])}
    """
    return tree_map(_copy, x)


def block_until_ready(x: Any) -> Any:
    """`x` itself: functrans computes eagerly on the CPU, so every value is ready when it is
    returned (JAX's `block_until_ready` waits for asynchronous dispatch; there is none here).

    >>> import numpy as np, functrans as ft
    >>> ft.block_until_ready(ft.jit(lambda x: x * 2.0)(np.ones(2)))
    array([2., 2.])
    """
    return x
