"""The transposed program of a linear program (IR in, IR out)."""

from __future__ import annotations

from functrans.core.ir import ClosedJaxpr
from functrans.core.staging import trace_to_jaxpr
from functrans.core.symbolic import Zero
from functrans.primitives.layout import instantiate
from functrans.transforms.transpose import backward_pass


class Transposed:
    """A transposed program and what it reads and returns."""

    __slots__ = ("program", "ct_in", "ct_out")

    def __init__(self, program, ct_in, ct_out):
        self.program = program  # (known inputs..., cotangents flagged in ct_in...) -> cts
        self.ct_in = ct_in      # per output of the linear program: is its cotangent an input
        self.ct_out = ct_out    # per linear input: does the program return its cotangent


def transpose_program(closed: ClosedJaxpr, linear_in, ct_nonzero=None, *,
                      drop_zeros: bool = False) -> Transposed:
    """Transpose `closed` with respect to its inputs flagged in `linear_in`.

    The program takes (the other, known inputs..., the cotangents of the outputs flagged in
    `ct_nonzero` (default: all)...) and returns the cotangents of the linear inputs: all of
    them, zeros materialised, or with `drop_zeros` only those not known to be zero (see
    `Transposed.ct_out`)."""
    jaxpr = closed.jaxpr
    out_avals = closed.out_avals
    ct_in = [True] * len(out_avals) if ct_nonzero is None else list(ct_nonzero)
    known_avals = [v.aval for v, lin in zip(jaxpr.invars, linear_in) if not lin]
    ct_avals = [a for a, nz in zip(out_avals, ct_in) if nz]
    n_known = len(known_avals)
    ct_out = []

    def fun(*args):
        known, cts = args[:n_known], iter(args[n_known:])
        cts_full = [next(cts) if nz else Zero(a) for a, nz in zip(out_avals, ct_in)]
        res = backward_pass(jaxpr, [*closed.consts, *known], cts_full, list(linear_in))
        res = [r for r, lin in zip(res, linear_in) if lin]
        if not drop_zeros:
            ct_out.extend([True] * len(res))
            return [instantiate(r) for r in res]
        ct_out.extend(type(r) is not Zero for r in res)
        return [r for r in res if type(r) is not Zero]

    program = trace_to_jaxpr(fun, known_avals + ct_avals, name="transpose")
    return Transposed(program, ct_in, ct_out)


def transpose_jaxpr(closed: ClosedJaxpr, linear_in) -> ClosedJaxpr:
    """The program taking (known inputs..., output cotangents...) to the cotangents of the
    linear inputs of `closed` (those flagged True in `linear_in`)."""
    return transpose_program(closed, linear_in).program
