"""Rearranging a program's inputs and outputs: permute, add, drop or specialise inputs, keep
some outputs."""

from __future__ import annotations

from functrans.core.ir import ClosedJaxpr, Jaxpr, Var
from functrans.transforms.toolkit.dce import dce, dce_jaxpr
from functrans.transforms.toolkit.rewrite import ProgramBuilder


def permute(closed: ClosedJaxpr, in_order=None, out_order=None) -> ClosedJaxpr:
    """The same program with inputs (and outputs) taken in the given index orders."""
    j = closed.jaxpr
    invars = j.invars if in_order is None else [j.invars[i] for i in in_order]
    outvars = j.outvars if out_order is None else [j.outvars[i] for i in out_order]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, outvars, j.eqns), closed.consts)


def with_extra_inputs(closed: ClosedJaxpr, avals, at: int) -> ClosedJaxpr:
    """The same program taking unused inputs of types `avals` at position `at`."""
    j = closed.jaxpr
    new = [Var(a) for a in avals]
    return ClosedJaxpr(Jaxpr(j.constvars, [*j.invars[:at], *new, *j.invars[at:]], j.outvars,
                             j.eqns), closed.consts)


def keep_outputs(closed: ClosedJaxpr, keep) -> ClosedJaxpr:
    """The program computing only the outputs flagged in `keep` (dead equations and
    constants removed)."""
    return dce(ClosedJaxpr(dce_jaxpr(closed.jaxpr, list(keep)), closed.consts))


def used_inputs(closed: ClosedJaxpr) -> list[bool]:
    """For each input of `closed`, whether any equation or output reads it."""
    used = {a for e in closed.jaxpr.eqns for a in e.invars if type(a) is Var}
    used.update(a for a in closed.jaxpr.outvars if type(a) is Var)
    return [v in used for v in closed.jaxpr.invars]


def restrict_inputs(closed: ClosedJaxpr, keep) -> ClosedJaxpr:
    """`closed` without the inputs flagged False in `keep` (they must be unused)."""
    if all(keep):
        return closed
    jaxpr = closed.jaxpr
    b = ProgramBuilder(closed)
    b.invars = [v for v, k in zip(jaxpr.invars, keep) if k]
    b.eqns = list(jaxpr.eqns)
    return b.finish(jaxpr.outvars)


def specialize_inputs(closed: ClosedJaxpr, bindings: dict) -> ClosedJaxpr:
    """`closed` with input i removed and replaced by `bindings[i]`: ("const", value) for a
    known value, or ("same", j) for another input j it always equals."""
    jaxpr = closed.jaxpr
    b = ProgramBuilder(closed)
    for i, (kind, x) in bindings.items():
        v = jaxpr.invars[i]
        b.env[v] = b.add_const(x, v.aval) if kind == "const" else jaxpr.invars[x]
    b.invars = [v for i, v in enumerate(jaxpr.invars) if i not in bindings]
    for eqn in jaxpr.eqns:
        b.keep(eqn, [b.read(a) for a in eqn.invars])
    return b.finish(jaxpr.outvars)


def split_list(xs, sizes):
    """`xs` cut into consecutive lists of lengths `sizes` (which must add up to len(xs))."""
    out, i = [], 0
    for s in sizes:
        out.append(list(xs[i:i + s]))
        i += s
    assert i == len(xs), (i, len(xs))
    return out
