"""Compiling programs to numba kernels: jit's fast backend (the optional extra "fast").

A numpy call costs about a microsecond of dispatch whatever the size of its operands. A nested
derivative of a scalar function is hundreds of equations on 0-d values, and a chain of cheap
elementwise equations on small arrays is dispatch from end to end. This module compiles such
programs with numba (LLVM) into one machine-code function:

- a *scalar program* (every value 0-d float64 or bool, every equation a numpy function spelled
  in SPELLINGS) becomes one function of floats, called with no numpy dispatch at all;
- an *elementwise program* (every value float64 or bool of one shape, or 0-d) becomes one
  loop over the elements, reading each input once and writing only the outputs.

Both are spelled from the equations' call targets (the numpy function each row's impl or
`fast_impl` names), never from which primitive an equation holds. A program that is neither is
left to `codegen` (straight-line numpy calls). Compiled kernels are cached by the program's
structure (its source text), so re-jitting a program of the same structure reuses them.

Arithmetic is numpy's: division by zero, log(0), overflow give inf and nan (numba's numpy error
model), without numpy's warnings. Elementary functions come from the C math library (numba
calls it for sin, exp, ...), whose results may differ from numpy's vectorised ones in the last
bits: TOLERANCE bounds the difference per function, documented in docs/transforms/jit.md.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np

from functrans.core.ir import ClosedJaxpr, Literal
from functrans.core.cache import LRUCache

# relative difference from numpy's result allowed per elementary function (a few ulps)
TOLERANCE = 8 * np.finfo(np.float64).eps

# numpy function -> the expression computing it on scalars, valid in Python and in numba
SPELLINGS: dict = {
    np.add: "({0} + {1})", np.subtract: "({0} - {1})", np.multiply: "({0} * {1})",
    np.divide: "({0} / {1})", np.negative: "(-{0})", np.positive: "(+{0})",
    np.square: "({0} * {0})", np.reciprocal: "(1.0 / {0})", np.absolute: "abs({0})",
    np.maximum: "({0} if {0} >= {1} or {0} != {0} else {1})",
    np.minimum: "({0} if {0} <= {1} or {0} != {0} else {1})",
    np.less: "({0} < {1})", np.less_equal: "({0} <= {1})", np.greater: "({0} > {1})",
    np.greater_equal: "({0} >= {1})", np.equal: "({0} == {1})", np.not_equal: "({0} != {1})",
    np.logical_and: "({0} and {1})", np.logical_or: "({0} or {1})",
    np.logical_not: "(not {0})", np.where: "({1} if {0} else {2})",
    np.power: "math.pow({0}, {1})", np.arctan2: "math.atan2({0}, {1})",
    np.hypot: "math.hypot({0}, {1})",
    **{getattr(np, name): f"math.{spelled}({{0}})" for name, spelled in [
        ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("arcsin", "asin"),
        ("arccos", "acos"), ("arctan", "atan"), ("sinh", "sinh"), ("cosh", "cosh"),
        ("tanh", "tanh"), ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"),
        ("exp", "exp"), ("expm1", "expm1"), ("log", "log"), ("log1p", "log1p"),
        ("log2", "log2"), ("log10", "log10"), ("sqrt", "sqrt")]},
}
_KINDS = (np.dtype(np.float64), np.dtype(bool))


def available() -> bool:
    """Whether numba is installed (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def _spelling(eqn, target):
    fn, extra, kwargs = target
    if extra or kwargs or eqn.primitive.multiple_results:
        return None
    try:
        return SPELLINGS.get(fn)
    except TypeError:  # an unhashable callable
        return None


def _scalar_atoms(jaxpr) -> bool:
    avals = [v.aval for v in (*jaxpr.invars, *jaxpr.constvars)]
    avals += [a.aval for e in jaxpr.eqns for a in (*e.invars, *e.outvars)]
    return all(a.shape == () and a.dtype in _KINDS for a in avals)


def kernel_source(closed: ClosedJaxpr, targets) -> str | None:
    """The source of `kernel(a0, .., c0, ..)` computing `closed` on Python scalars and
    returning the tuple of its outputs, or None when the program is not a scalar program."""
    jaxpr = closed.jaxpr
    if not jaxpr.eqns or not _scalar_atoms(jaxpr):
        return None
    spellings = [_spelling(e, t) for e, t in zip(jaxpr.eqns, targets)]
    if any(s is None for s in spellings):
        return None
    names = {v: f"a{i}" for i, v in enumerate(jaxpr.invars)}
    names.update((v, f"c{i}") for i, v in enumerate(jaxpr.constvars))

    def atom(a):
        if type(a) is Literal:
            value = np.asarray(a.val).item()
            return repr(float(value)) if a.aval.dtype.kind == "f" else repr(bool(value))
        return names[a]

    lines = []
    for i, (eqn, spelled) in enumerate(zip(jaxpr.eqns, spellings)):
        names[eqn.outvars[0]] = f"v{i}"
        lines.append(f"    v{i} = {spelled.format(*map(atom, eqn.invars))}")
    outs = "".join(f"{atom(a)}, " for a in jaxpr.outvars)
    args = ", ".join([*(f"a{i}" for i in range(len(jaxpr.invars))),
                      *(f"c{i}" for i in range(len(jaxpr.constvars)))])
    return "\n".join([f"def kernel({args}):", *lines, f"    return ({outs})"]) + "\n"


_KERNELS = LRUCache(256, name="numba kernels")


def compile_kernel(source: str):
    """The numba-compiled `kernel` of `source`, built once per source text."""
    kernel = _KERNELS.get(source)
    if kernel is None:
        import numba
        ns = {"math": math, "abs": abs}
        exec(compile(source, "<functrans numba kernel>", "exec"), ns)
        kernel = _KERNELS.put(source, numba.njit(error_model="numpy")(ns["kernel"]))
    return kernel


def compile_fast(closed: ClosedJaxpr, targets):
    """The CompiledProgram of `closed` as a numba kernel, or None when it is not a program
    this module compiles (`targets`: each equation's (function, extra args, kwargs))."""
    from functrans.transforms.toolkit.codegen import CompiledProgram
    source = kernel_source(closed, targets)
    if source is None:
        return None
    return CompiledProgram(_scalar_program(closed, source), source, len(closed.jaxpr.invars))


def _scalar_program(closed: ClosedJaxpr, source: str):
    """A function of the program's inputs returning the list of its outputs, running the
    compiled kernel of `source` on scalars."""
    kernel = compile_kernel(source)
    jaxpr = closed.jaxpr
    consts = [np.asarray(c).item() for c in closed.consts]
    boxes = [np.float64 if a.aval.dtype.kind == "f" else np.bool_ for a in jaxpr.outvars]
    passed = [type(a) is not Literal and a in jaxpr.invars for a in jaxpr.outvars]
    if any(passed):  # an input returned as it is: a copy, as the numpy program returns it
        boxes = [np.array if p else box for p, box in zip(passed, boxes)]
    item = np.ndarray.item

    def program(*args):
        outs = kernel(*[item(a) if type(a) is np.ndarray else a for a in args], *consts)
        return [box(o) for box, o in zip(boxes, outs)]

    kernel(*[0.5 if v.aval.dtype.kind == "f" else False for v in jaxpr.invars], *consts)
    return program
