"""Rebuilding a program equation by equation: the machinery every IR-to-IR jit pass shares.

A pass walks the old program in order, reads each equation's inputs through `ProgramBuilder.read`
(old variables map to the atoms that now stand for them), and either keeps the equation, emits
replacement equations, or binds its outputs to existing atoms. Input programs are never mutated.
"""

from __future__ import annotations

import numpy as np

from functrans.backend import adapter_of
from functrans.core.avals import ShapedArray
from functrans.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from functrans.core.trace import Tracer


class ProgramBuilder:
    """The program being rebuilt from `closed`: its equations, constants and an old-to-new map."""

    def __init__(self, closed: ClosedJaxpr):
        self.source = closed
        self.invars = list(closed.jaxpr.invars)
        self.constvars = list(closed.jaxpr.constvars)
        self.consts = list(closed.consts)
        self.const_of: dict[Var, object] = dict(zip(self.constvars, self.consts))
        self.eqns: list[Eqn] = []
        self.env: dict[Var, Var | Literal] = {}
        self.producer: dict[Var, Eqn] = {}
        self.changed = False

    # --- reading -----------------------------------------------------------------------------

    def read(self, atom):
        if type(atom) is Literal:
            return atom
        return self.env.get(atom, atom)

    def concrete(self, atom):
        """The value of `atom` when known at compile time (a literal or a concrete constant)."""
        if type(atom) is Literal:
            return atom.val
        val = self.const_of.get(atom)
        if val is None or isinstance(val, Tracer):
            return None
        return val

    # --- writing -----------------------------------------------------------------------------

    def bind_outputs(self, eqn: Eqn, atoms) -> None:
        """The old outputs of `eqn` are now the atoms `atoms` (the equation itself is gone)."""
        for v, a in zip(eqn.outvars, atoms):
            if a is not v:
                self.env[v] = a
        self.changed = True

    def keep(self, eqn: Eqn, invars) -> Eqn:
        """Keep `eqn` (with its inputs renamed), reusing its output variables."""
        if any(a is not b for a, b in zip(invars, eqn.invars)):
            eqn = eqn._replace(invars=list(invars))
        self.eqns.append(eqn)
        for v in eqn.outvars:
            self.producer[v] = eqn
        return eqn

    def append(self, prim, invars, outvars, params) -> Eqn:
        """Append an equation with given (fresh) output variables."""
        eqn = Eqn(prim, list(invars), list(outvars), params)
        self.eqns.append(eqn)
        for v in outvars:
            self.producer[v] = eqn
        self.changed = True
        return eqn

    def emit(self, prim, invars, params):
        """Append a new equation; returns its output variable (or list, for multiple results)."""
        avals = prim.abstract_eval(*[a.aval for a in invars], **params)
        outs = [Var(a) for a in avals] if prim.multiple_results else [Var(avals)]
        eqn = Eqn(prim, list(invars), outs, dict(params))
        self.eqns.append(eqn)
        for v in outs:
            self.producer[v] = eqn
        self.changed = True
        return outs if prim.multiple_results else outs[0]

    def add_const(self, value, aval: ShapedArray):
        """An atom holding the concrete `value`: a literal for numpy and Python scalars, else a
        new constvar (a 0-d dask or CuPy array too: numpy cannot read it without computing
        or copying it off the device)."""
        if aval.shape == () and not isinstance(value, Tracer) and adapter_of(value) is None:
            return Literal(np.asarray(value, aval.dtype)[()], aval)
        v = Var(aval)
        self.constvars.append(v)
        self.consts.append(value)
        self.const_of[v] = value
        return v

    def finish(self, outvars) -> ClosedJaxpr:
        outs = [self.read(a) for a in outvars]
        jaxpr = Jaxpr(self.constvars, self.invars, outs, self.eqns)
        closed = ClosedJaxpr(jaxpr, self.consts)
        closed.out_tree = self.source.out_tree
        return closed


def literal_key(lit: Literal):
    """Hashable identity of a literal's value: dtype and bytes, so nan == nan and -0.0 != 0.0."""
    return ("lit", lit.aval.dtype.str, np.asarray(lit.val, lit.aval.dtype).tobytes())


def count_eqns(closed, recursive: bool = True) -> int:
    """Number of equations, counting those inside sub-programs held in params when `recursive`."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    n = len(jaxpr.eqns)
    if recursive:
        for eqn in jaxpr.eqns:
            for p in eqn.params.values():
                if isinstance(p, ClosedJaxpr | Jaxpr):
                    n += count_eqns(p, True)
    return n


def value_key(v):
    """A hashable key comparing params by value (arrays and programs by identity)."""
    if isinstance(v, dict):
        return ("dict", tuple(sorted((k, value_key(x)) for k, x in v.items())))
    if isinstance(v, list | tuple):
        return (type(v).__name__, tuple(value_key(x) for x in v))
    if isinstance(v, float):
        return ("float", v.hex())
    if isinstance(v, np.generic):
        return ("scalar", v.dtype.str, v.tobytes())
    if isinstance(v, np.dtype):
        return ("dtype", v.str)
    if isinstance(v, np.ndarray | ClosedJaxpr | Jaxpr):
        return ("id", id(v))
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v).__name__, v)


def params_key(params: dict):
    """A hashable key of an equation's params, compared by value (see value_key)."""
    return tuple(sorted((k, value_key(v)) for k, v in params.items()))
