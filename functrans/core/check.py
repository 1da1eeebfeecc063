"""`check_jaxpr`: validate any program (single assignment, defined before use, types agree)."""

from __future__ import annotations

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from functrans.errors import InvalidJaxprError


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Raise InvalidJaxprError naming the first equation that breaks an invariant."""
    if isinstance(jaxpr, ClosedJaxpr):
        if len(jaxpr.consts) != len(jaxpr.jaxpr.constvars):
            raise InvalidJaxprError("ClosedJaxpr: consts and constvars differ in number")
        for i, (v, c) in enumerate(zip(jaxpr.jaxpr.constvars, jaxpr.consts)):
            aval = get_aval(c)
            if (aval.shape, aval.dtype) != (v.aval.shape, v.aval.dtype):
                raise InvalidJaxprError(f"ClosedJaxpr: const {i} is {aval.str_short()} but its "
                                        f"constvar typed {v.aval.str_short()}")
        jaxpr = jaxpr.jaxpr
    defined: set[Var] = set()

    def define(v, where):
        if not isinstance(v, Var):
            raise InvalidJaxprError(f"{where}: binder {v!r} is not a Var")
        if v in defined:
            raise InvalidJaxprError(f"{where}: variable {v!r} is assigned twice")
        defined.add(v)

    def read(a, where):
        if isinstance(a, Literal):
            if a.aval.shape != () or np.shape(a.val) != ():
                raise InvalidJaxprError(f"{where}: literal {a!r} is not a scalar")
            if isinstance(a.val, np.generic) and a.val.dtype != a.aval.dtype:
                raise InvalidJaxprError(f"{where}: literal {a!r} holds a {a.val.dtype.name} "
                                        f"but is typed {a.aval.str_short()}")
            return
        if a not in defined:
            raise InvalidJaxprError(f"{where}: variable {a!r} is used before it is defined")

    for v in jaxpr.constvars:
        define(v, "constvars")
    for v in jaxpr.invars:
        define(v, "invars")
    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i} ({eqn.primitive.name})"
        for a in eqn.invars:
            read(a, where)
        for v in eqn.outvars:
            if not isinstance(v, Var):
                raise InvalidJaxprError(f"{where}: binder {v!r} is not a Var")
        try:
            out = eqn.primitive.abstract_eval(*[a.aval for a in eqn.invars], **eqn.params)
        except Exception as e:  # the shape rule itself rejects the operands
            raise InvalidJaxprError(f"{where}: the shape rule rejects its inputs: {e}") from e
        out = out if eqn.primitive.multiple_results else [out]
        if [a for a in out] != [v.aval for v in eqn.outvars]:
            raise InvalidJaxprError(
                f"{where}: outputs typed {[str(v.aval) for v in eqn.outvars]} but the shape rule "
                f"gives {[str(a) for a in out]}")
        for v in eqn.outvars:
            define(v, where)
        for p in eqn.params.values():
            if isinstance(p, Jaxpr | ClosedJaxpr):
                check_jaxpr(p)
    for a in jaxpr.outvars:
        read(a, "outvars")
