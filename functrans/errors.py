"""Exceptions functrans raises. Each subclasses what users already catch, and each message says
what happened, why, and what to do about it."""

from __future__ import annotations

import numpy as _np


class FunctransError(Exception):
    """Base class of every functrans-specific error."""


class ShapeError(FunctransError, ValueError):
    """Operand shapes do not fit an operation (the message names both shapes)."""


class DTypeError(FunctransError, TypeError):
    """An operand's dtype is not accepted by an operation or a transform."""


class ConcretizationTypeError(FunctransError, TypeError):
    """A traced value was used where a concrete Python value is needed (`if`, `int()`, ...)."""


class TracerBoolConversionError(ConcretizationTypeError):
    """`if`/`bool()` on a traced value."""


class TracerIntegerConversionError(ConcretizationTypeError):
    """`int()`, `range()` or list indexing (`__index__`) on a traced value."""


class TracerArrayConversionError(ConcretizationTypeError):
    """A traced value was handed to numpy itself (np.asarray, a numpy function without a
    functrans.numpy equivalent)."""


class TracerItemAssignmentError(FunctransError, TypeError):
    """`x[i] = v` on a traced array: traced arrays are immutable (use `x.at[i].set(v)`)."""


class UnsizedTracerError(FunctransError, TypeError):
    """`len()` of, or iteration over, a 0-d traced array (it has no leading axis)."""


class ArgumentError(FunctransError, ValueError):
    """An argument of a transform or of a `lax` function has an invalid value (a negative
    `length`, an axis out of range); the message names the argument, its value and the range."""


class ArgumentTypeError(FunctransError, TypeError):
    """An argument of a transform or of a `lax` function has the wrong type (`in_axes=0.5`,
    `length=2.5`); the message names the argument, its type and what is accepted."""


class UnexpectedTracerError(FunctransError, RuntimeError):
    """A tracer escaped the transform that created it and was used after it ended."""


class MissingRuleError(FunctransError, NotImplementedError):
    """A primitive lacks the rule a transform needs (the message names the file to edit)."""


class UnsupportedFeatureError(FunctransError, NotImplementedError):
    """An option of a JAX or numpy function that functrans does not implement (the message
    names it and what to use instead)."""


class LinAlgError(FunctransError, _np.linalg.LinAlgError):
    """A matrix has no result of the kind asked (no real square root, no convergence); a
    numpy.linalg.LinAlgError, so code catching numpy's catches it."""


class InvalidJaxprError(FunctransError, ValueError):
    """The IR checker found a malformed program."""


# every exception above (the API reference lists what __all__ names)
__all__ = [_n for _n, _v in globals().items()
           if isinstance(_v, type) and issubclass(_v, Exception) and _v.__module__ == __name__]
