"""What the rows of higher-order primitives (control flow, custom rules, checkpoint) share
besides the program toolkit: their props and facts, loop-carry typing, zeros of an aval."""

from __future__ import annotations

import numpy as np

from functrans.core.avals import ShapedArray, get_aval, weak_scalar_type
from functrans.core.symbolic import Zero
from functrans.core.trace import Tracer
from functrans.primitives.shape_ops import convert_element_type
from functrans.primitives.layout import broadcast_to
from functrans.primitives.layout import instantiate

HIGHER_ORDER = ("higher_order",)
# the impls run their sub-programs through `toolkit.run` (loops unalias their final carries),
# so their results share no memory with their operands: the code generator need not check them
OWNED_RESULTS = {"fresh_result": True}


def promote_weak_carry(leaves, out_avals) -> tuple[list, bool]:
    """Loop carries that start weak (Python scalars) converted to the dtype numpy promotion
    gives them with what the body returns for them, as JAX does: `fori_loop(0, 3, lambda i, c:
    c + 0.5, 0)` carries a float64. Returns (leaves, whether any changed); the caller stages the
    body again on the new leaves. Strong carries are left for the caller to check."""
    out, changed = list(leaves), False
    for k, (x, b) in enumerate(zip(leaves, out_avals)):
        py_type = weak_scalar_type(x)
        a = get_aval(x)
        if py_type is None or a.shape != b.shape or a.dtype == b.dtype:
            continue
        dtype = np.result_type(py_type(0), b.dtype)  # NEP 50: the scalar's kind, b's width
        if dtype != a.dtype:
            out[k] = convert_element_type(x, dtype) if isinstance(x, Tracer) else \
                np.asarray(x, dtype)
            changed = True
    return out, changed


def carry_fix(init: str, body: str, a, b) -> str:
    """How to fix a strong loop carry whose aval `a` in `init` differs from `b` as returned."""
    if a.shape != b.shape:
        return (f"The carry must keep its shape and dtype; fix {init}'s shape, or reshape or "
                f"reduce what {body} returns to {list(a.shape)}.")
    return (f"The carry must keep its shape and dtype (only a Python scalar takes the dtype "
            f"{body} gives it); fix {init}'s dtype (e.g. {init}.astype(np.{b.dtype.name})) or "
            f"convert what {body} returns with .astype(np.{a.dtype.name}).")


def any_tracer(xs) -> bool:
    """Whether any of `xs` is a tracer."""
    return any(isinstance(x, Tracer) for x in xs)


def level(x) -> int:
    """The trace level of `x` (0 for a concrete value)."""
    return x._trace.main.level if isinstance(x, Tracer) else 0


def zeros_like_aval(aval: ShapedArray):
    """Zeros of the shape and dtype of `aval`."""
    return broadcast_to(np.zeros((), aval.dtype), aval.shape)


def instantiate_zeros(ts, avals=None):
    """Materialised arrays for tangents or cotangents that may be symbolic zeros. `avals`
    types the zeros (backward_pass may hand multiple-result rules a mistyped Zero)."""
    if avals is not None:
        ts = [Zero(a) if type(t) is Zero else t for t, a in zip(ts, avals)]
    return [instantiate(t) for t in ts]
