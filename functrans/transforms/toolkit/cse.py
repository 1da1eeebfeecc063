"""Common-subexpression elimination: one equation per (primitive, params, inputs).

Params compare by value (arrays and sub-programs by identity); operands of commutative
primitives compare as a set (x + y and y + x are the same IEEE value). Constants that are the
same array object, or small arrays with equal contents, are merged too.
"""

from __future__ import annotations

import numpy as np

from functrans.core.ir import ClosedJaxpr, Literal
from functrans.core.trace import Tracer
from functrans.transforms.toolkit.rewrite import ProgramBuilder, literal_key, params_key

_MERGE_BY_VALUE_SIZE = 4096


def _atom_key(a):
    return literal_key(a) if type(a) is Literal else ("var", id(a))


def _const_key(c):
    if isinstance(c, np.ndarray | np.generic) and not isinstance(c, Tracer) \
            and np.size(c) <= _MERGE_BY_VALUE_SIZE:
        arr = np.asarray(c)
        return ("value", arr.dtype.str, arr.shape, arr.tobytes())
    return ("id", id(c))


def cse(closed: ClosedJaxpr, keep=()) -> ClosedJaxpr:
    """Reuse the first of several equations computing the same thing from the same inputs,
    except an equation computing one of the variables `keep`: nothing merges into it (the torch
    shim's forward outputs, which a derivative rule computes again when it means to read the
    inputs rather than the saved output)."""
    keep = {v for v in keep if type(v) is not Literal}
    b = ProgramBuilder(closed)
    seen_consts: dict = {}
    for v, c in zip(closed.jaxpr.constvars, closed.consts):
        first = seen_consts.setdefault(_const_key(c), v)
        if first is not v:
            b.env[v] = first
            b.changed = True
    table: dict = {}
    for eqn in closed.jaxpr.eqns:
        ins = [b.read(a) for a in eqn.invars]
        in_keys = [_atom_key(a) for a in ins]
        if "commutative" in eqn.primitive.props:
            in_keys.sort()
        if "effectful" in eqn.primitive.facts:  # two prints print twice
            b.keep(eqn, ins)
            continue
        key = (eqn.primitive, params_key(eqn.params), tuple(in_keys))
        prev = table.get(key)
        if prev is not None:
            b.bind_outputs(eqn, prev)
            continue
        kept = b.keep(eqn, ins)
        if not keep or keep.isdisjoint(eqn.outvars):
            table[key] = kept.outvars
    return b.finish(closed.jaxpr.outvars) if b.changed else closed
