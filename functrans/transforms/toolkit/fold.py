"""Constant folding: evaluate, at compile time, equations whose inputs are all known.

Results become literals (scalars) or new constants. A result much larger than its inputs (a
broadcast of a scalar to a big shape) is left as an equation: folding it would trade a cheap
view for a giant constant.
"""

from __future__ import annotations

import numpy as np

from functrans.core.ir import ClosedJaxpr, Jaxpr
from functrans.transforms.toolkit.facts import fact
from functrans.transforms.toolkit.rewrite import ProgramBuilder

MAX_GROWN_SIZE = 1024  # a folded result may exceed its largest input only up to this size


def _foldable(eqn) -> bool:
    if eqn.primitive.impl is None or fact(eqn.primitive, "call_param") is not None or \
            fact(eqn.primitive, "effectful"):
        return False
    return not any(isinstance(p, ClosedJaxpr | Jaxpr) for p in eqn.params.values())


def _evaluate(eqn, vals):
    """The outputs of `eqn` on concrete `vals`, or None when the impl fails or disagrees with
    the equation's types (then it stays, and fails or warns at run time as eager would)."""
    try:
        with np.errstate(all="ignore"):
            res = eqn.primitive.impl(*vals, **eqn.params)
    except Exception:
        return None
    res = list(res) if eqn.primitive.multiple_results else [res]
    out = []
    for r, v in zip(res, eqn.outvars):
        if not isinstance(r, np.ndarray | np.generic):
            return None
        arr = np.array(r)  # a private, contiguous copy (impls may return views of inputs)
        if arr.shape != v.aval.shape or arr.dtype != v.aval.dtype:
            return None
        out.append(arr)
    return out


def fold_constants(closed: ClosedJaxpr, *, max_grown_size: int = MAX_GROWN_SIZE) -> ClosedJaxpr:
    """Replace equations whose inputs are literals or concrete constants by their values."""
    b = ProgramBuilder(closed)
    for eqn in closed.jaxpr.eqns:
        ins = [b.read(a) for a in eqn.invars]
        vals = [b.concrete(a) for a in ins]
        if all(v is not None for v in vals) and _foldable(eqn):
            limit = max([max_grown_size, *(np.size(v) for v in vals)])
            if all(v.aval.size <= limit for v in eqn.outvars):
                res = _evaluate(eqn, vals)
                if res is not None:
                    b.bind_outputs(eqn, [b.add_const(r, v.aval)
                                         for r, v in zip(res, eqn.outvars)])
                    continue
        b.keep(eqn, ins)
    return b.finish(closed.jaxpr.outvars) if b.changed else closed
