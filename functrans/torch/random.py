"""torch.random: the default CPU generator's seed and state, and `fork_rng`."""

from __future__ import annotations

import contextlib

from functrans.torch._creation import (  # noqa: F401
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)
from functrans.torch._random import default_generator  # noqa: F401


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda"):
    """torch.random.fork_rng: run a block with the CPU generator's state restored after it.

    >>> import functrans.torch as torch
    >>> _ = torch.manual_seed(0)
    >>> with torch.random.fork_rng():
    ...     _ = torch.rand(5)
    >>> torch.rand(1)
    tensor([0.4963])
    """
    if not enabled:
        yield
        return
    saved = default_generator.clone_state()
    try:
        yield
    finally:
        default_generator.restore_state(saved)
