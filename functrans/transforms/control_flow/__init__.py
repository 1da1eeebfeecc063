"""Differentiable, batchable control flow: cond/switch, while_loop, fori_loop, scan."""

from functrans.transforms.control_flow.conditionals import cond, switch  # noqa: F401
from functrans.transforms.control_flow.loops import fori_loop, while_loop  # noqa: F401
from functrans.transforms.control_flow.scans import scan  # noqa: F401
