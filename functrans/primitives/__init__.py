"""The table of primitives: importing this package registers every row."""

from functrans.primitives import elementwise, indexing, linalg, reductions, shape_ops  # noqa
from functrans.primitives.registry import REGISTRY, names  # noqa: F401
