"""Symbolic values the differentiation rules pass around instead of arrays."""

from __future__ import annotations

from functrans.core.avals import ShapedArray


class Zero:
    """A tangent or cotangent known to be zero: never materialised, never emitted as IR."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"


class UndefinedPrimal:
    """A linear input of an equation being transposed: its value is what we solve for."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x) -> bool:
    """Whether `x` is an UndefinedPrimal: a linear input transposition solves for."""
    return type(x) is UndefinedPrimal
