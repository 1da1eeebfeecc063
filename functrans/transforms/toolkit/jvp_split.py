"""The JVP of a program split by partial evaluation into a primal program and a linear
tangent program joined by residuals (so that under `linearize` only the tangent part is
staged, and reverse mode transposes only it)."""

from __future__ import annotations

from functrans.core.ir import ClosedJaxpr
from functrans.transforms.jvp import jvp_jaxpr
from functrans.transforms.partial_eval import partial_eval_jaxpr
from functrans.transforms.toolkit.dce import dce
from functrans.transforms.toolkit.stage import hoist


class JVPSplit:
    """The JVP of a program split for linearization.

    known:   ([known consts...,] primals...) -> (primal outputs..., residuals...)
    tangent: (residuals..., nonzero tangents...) -> nonzero output tangents (linear in them)
    known_consts: the values of known's leading inputs when hoisted (else empty)
    """

    __slots__ = ("known", "known_consts", "tangent", "num_res", "out_nonzeros")

    def __init__(self, known, known_consts, tangent, num_res, out_nonzeros):
        self.known = known
        self.known_consts = known_consts
        self.tangent = tangent
        self.num_res = num_res
        self.out_nonzeros = out_nonzeros


def jvp_split(closed: ClosedJaxpr, nonzeros, instantiate=False, *, simplify=dce,
              hoisted: bool = True) -> JVPSplit:
    """JVP of `closed` for the input tangents flagged in `nonzeros`, split by partial
    evaluation into the primal work and the (linear) tangent work. `simplify` runs on both
    programs (dead-code elimination by default; jit passes its whole optimiser); with
    `hoisted`, the known program is const-free (its consts become leading inputs)."""
    jvp_closed, out_nz = jvp_jaxpr(closed, list(nonzeros), instantiate)
    n_in, n_out = len(closed.in_avals), len(closed.out_avals)
    n_t_in, n_t_out = sum(map(bool, nonzeros)), sum(map(bool, out_nz))
    known, tangent, out_unknowns, num_res = partial_eval_jaxpr(
        jvp_closed, [False] * n_in + [True] * n_t_in,
        instantiate=[False] * n_out + [True] * n_t_out)
    assert list(out_unknowns) == [False] * n_out + [True] * n_t_out, out_unknowns
    known, known_consts = simplify(known), []
    if hoisted:
        known, known_consts = hoist(known)
    return JVPSplit(known, known_consts, simplify(tangent), num_res, list(out_nz))
