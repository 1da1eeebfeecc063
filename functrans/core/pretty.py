"""JAX-style text for jaxprs: one equation per line, variables named a, b, ..., z, ba, bb, ..."""

from __future__ import annotations

import numpy as np

from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var


def _name(i: int) -> str:
    """JAX's names: base-26 digits a..z, so 25 is z, 26 is ba and 702 is bba."""
    s = ""
    while not s or i:
        i, d = divmod(i, 26)
        s = chr(ord("a") + d) + s
    return s


class _Names:
    def __init__(self):
        self.names: dict[Var, str] = {}

    def __call__(self, v) -> str:
        if isinstance(v, Literal):
            return _pp_literal(v)
        if v not in self.names:
            self.names[v] = _name(len(self.names))
        return self.names[v]

    def binder(self, v: Var) -> str:
        return f"{self(v)}:{v.aval.str_short()}"


def _pp_literal(lit: Literal) -> str:
    val = lit.val
    if lit.aval.dtype == np.bool_:
        return "True" if val else "False"
    if np.issubdtype(lit.aval.dtype, np.floating):
        return repr(float(val))
    if np.issubdtype(lit.aval.dtype, np.integer):
        return str(int(val))
    return repr(val)


def _pp_param(v) -> str:
    if isinstance(v, ClosedJaxpr):
        v = v.jaxpr
    if isinstance(v, Jaxpr):  # _pp_eqn indents its lines to the equation's column
        return _pp_jaxpr(v, _Names())
    if isinstance(v, np.dtype) or isinstance(v, type) and issubclass(v, np.generic):
        return np.dtype(v).name
    if callable(v):
        return getattr(v, "__name__", type(v).__name__)
    return repr(v)


def _pp_eqn(eqn: Eqn, names: _Names, indent: int) -> str:
    params = ""
    if eqn.params:
        items = (f"{k}={_pp_param(v)}" for k, v in sorted(eqn.params.items()))
        params = "[" + " ".join(items).replace("\n", "\n" + " " * indent) + "]"
    ins = " ".join(names(v) for v in eqn.invars)
    outs = " ".join(names.binder(v) for v in eqn.outvars)
    return f"{outs} = {eqn.primitive.name}{params} {ins}".rstrip()


def _pp_jaxpr(jaxpr: Jaxpr, names: _Names) -> str:
    consts = " ".join(names.binder(v) for v in jaxpr.constvars)
    ins = " ".join(names.binder(v) for v in jaxpr.invars)
    lines = [f"{{ lambda {consts}; {ins}. let"]
    for eqn in jaxpr.eqns:
        lines.append("    " + _pp_eqn(eqn, names, 4))
    outs = ", ".join(names(v) for v in jaxpr.outvars)
    if len(jaxpr.outvars) == 1:
        outs += ","
    lines.append(f"  in ({outs}) }}")
    return "\n".join(lines)


def pp_jaxpr(jaxpr: Jaxpr) -> str:
    """`jaxpr` as text, JAX's layout: `{ lambda ; invars. let eqns in (outvars,) }`."""
    return _pp_jaxpr(jaxpr, _Names())


def pp_eqn(eqn: Eqn) -> str:
    """One equation as text, `outvars = primitive[params] invars`."""
    return _pp_eqn(eqn, _Names(), 0)
