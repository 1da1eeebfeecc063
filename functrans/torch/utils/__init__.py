"""torch.utils: activation checkpointing (`torch.utils.checkpoint`)."""

from functrans.torch.utils import checkpoint  # noqa: F401
