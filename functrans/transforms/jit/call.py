"""`jit_p`: the call primitive. An equation `jit[jaxpr=..., name=...] args` runs an optimised,
compiled program; its rules transform that program (IR to IR) and bind new calls, so jit
composes with grad, vmap, jvp, linearize and itself.

JVP splits the JVP program of the body into a primal call (known: primal outputs and residuals)
and a tangent call (unknown: residuals and tangents to tangents). Under `linearize` the tangent
call alone is staged into the linear program, and its transpose is one more call.
Derived programs are built once per program and cached on it.
"""

from __future__ import annotations

from functrans.core.ir import ClosedJaxpr, Literal, Var
from functrans.core.symbolic import Zero, is_undefined
from functrans.core.trace import Tracer
from functrans.errors import DTypeError
from functrans.primitives.registry import define
from functrans.transforms.taylor.programs import (carries, float_flags, jet_program, pack,
                                                series_order, unpack)
from functrans.transforms.toolkit import (batch_jaxpr, batch_size, compile_program, jvp_split,
                                          keep_outputs, optimize, restrict_inputs,
                                          specialize_inputs, transpose_program, used_inputs)


# --- impl and abstract eval -----------------------------------------------------------------

def _jit_impl(*args, jaxpr: ClosedJaxpr, name: str):
    return compile_program(jaxpr).fn(*args)


def _jit_abstract(*avals, jaxpr: ClosedJaxpr, name: str):
    expected = jaxpr.in_avals
    if list(avals) != expected:
        raise DTypeError(
            f"jit call of {name}: called with {[str(a) for a in avals]} but its program takes "
            f"{[str(a) for a in expected]}. Call the jitted function itself rather than "
            "binding its program by hand.")
    return jaxpr.out_avals


# --- JVP: a primal call and a tangent call joined by residuals -------------------------------

class _JVPSplit:
    """The two calls of a JVP. `residuals` says where each residual input of `tangent` comes
    from: ("in", i) the i-th primal input, ("primal_out", i) the i-th primal output, ("out", j)
    the j-th residual output of `primal`."""

    __slots__ = ("primal", "tangent", "out_nonzero", "residuals")

    def __init__(self, primal, tangent, out_nonzero, residuals):
        self.primal = primal
        self.tangent = tangent
        self.out_nonzero = out_nonzero
        self.residuals = residuals


def _jvp_split(closed: ClosedJaxpr, nonzeros) -> _JVPSplit:
    """The toolkit's JVP split of `closed`, optimised, with its residuals trimmed for calls."""
    n_out = len(closed.out_avals)
    n_t = sum(nonzeros)
    split = jvp_split(closed, nonzeros, simplify=optimize, hoisted=False)
    known, unknown, out_nz, n_res = split.known, split.tangent, split.out_nonzeros, split.num_res

    # residuals: bake in constant ones, share repeated ones, drop unused ones, and take those
    # that are primal inputs straight from the caller instead of returning them
    kouts = known.jaxpr.outvars[n_out:]
    consts = dict(zip(known.jaxpr.constvars, known.consts))
    used = used_inputs(unknown)
    bindings, seen = {}, {}
    for j, a in enumerate(kouts):
        if not used[j]:
            continue
        if type(a) is Literal:
            bindings[j] = ("const", a.val)
        elif a in consts and not isinstance(consts[a], Tracer):
            bindings[j] = ("const", consts[a])
        elif a in seen:
            bindings[j] = ("same", seen[a])
        else:
            seen[a] = j
    if bindings:
        unknown = optimize(specialize_inputs(unknown, bindings))
    remaining = [j for j in range(n_res) if j not in bindings]
    still_used = used_inputs(unknown)[:len(remaining)]
    unknown = restrict_inputs(unknown, still_used + [True] * n_t)
    first_in = {v: i for i, v in reversed(list(enumerate(known.jaxpr.invars)))}
    primal_out = {v: i for i, v in reversed(list(enumerate(known.jaxpr.outvars[:n_out])))
                  if type(v) is Var}
    sources, returned = [], []
    for j in (j for j, u in zip(remaining, still_used) if u):
        a = kouts[j]
        if a in first_in:
            sources.append(("in", first_in[a]))
        elif a in primal_out:
            sources.append(("primal_out", primal_out[a]))
        else:
            sources.append(("out", len(returned)))
            returned.append(n_out + j)
    returned = set(returned)
    known = keep_outputs(known, [i < n_out or i in returned
                                 for i in range(len(known.out_avals))])
    return _JVPSplit(known, unknown, out_nz, sources)


def _jit_jvp(primals, tangents, *, jaxpr: ClosedJaxpr, name: str):
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    split = jaxpr.derived.get_or_build(("jvp", nonzeros), lambda: _jvp_split(jaxpr, nonzeros))
    n_out = len(jaxpr.out_avals)
    outs = jit_p.bind(*primals, jaxpr=split.primal, name=name)
    primals_out, res_out = outs[:n_out], outs[n_out:]
    from_kind = {"in": primals, "primal_out": primals_out, "out": res_out}
    residuals = [from_kind[kind][i] for kind, i in split.residuals]
    t_in = [t for t in tangents if type(t) is not Zero]
    t_out = iter(jit_p.bind(*residuals, *t_in, jaxpr=split.tangent, name=f"jvp_{name}")
                 if any(split.out_nonzero) else [])
    tangents_out = [next(t_out) if nz else Zero(a)
                    for a, nz in zip(jaxpr.out_avals, split.out_nonzero)]
    return primals_out, tangents_out


# --- transpose: of a linear call (linear inputs arrive as UndefinedPrimal) -------------------

class _Transposed:
    __slots__ = ("program", "keep_known", "ct_nonzero")

    def __init__(self, program, keep_known, ct_nonzero):
        self.program = program          # (used known inputs..., nonzero cts...) -> cts
        self.keep_known = keep_known    # which known inputs the program still reads
        self.ct_nonzero = ct_nonzero    # per linear input: does it receive a cotangent


def _transpose_program(closed: ClosedJaxpr, linear, ct_nonzero) -> _Transposed:
    t = transpose_program(closed, linear, ct_nonzero, drop_zeros=True)
    program = optimize(t.program)
    n_known = len(linear) - sum(linear)
    used = used_inputs(program)
    keep = used[:n_known] + [True] * sum(ct_nonzero)
    return _Transposed(restrict_inputs(program, keep), used[:n_known], t.ct_out)


def _jit_transpose(cts, *args, jaxpr: ClosedJaxpr, name: str):
    linear = tuple(is_undefined(a) for a in args)
    ct_nonzero = tuple(type(c) is not Zero for c in cts)
    t = jaxpr.derived.get_or_build(("transpose", linear, ct_nonzero),
                lambda: _transpose_program(jaxpr, linear, ct_nonzero))
    known = [a for a, lin in zip(args, linear) if not lin]
    known = [a for a, k in zip(known, t.keep_known) if k]
    nz_cts = [c for c in cts if type(c) is not Zero]
    outs = iter(jit_p.bind(*known, *nz_cts, jaxpr=t.program, name=f"transpose_{name}")
                if any(t.ct_nonzero) else [])
    nz = iter(t.ct_nonzero)
    return [(next(outs) if next(nz) else Zero(a.aval)) if lin else None
            for a, lin in zip(args, linear)]


# --- batching --------------------------------------------------------------------------------

def _jit_batch(vals, dims, *, jaxpr: ClosedJaxpr, name: str):
    size = batch_size(vals, dims)
    dims = tuple(dims)
    batched = jaxpr.derived.get_or_build(
        ("vmap", dims, size), lambda: optimize(batch_jaxpr(jaxpr, dims, size, hoisted=False)[0]))
    outs = jit_p.bind(*vals, jaxpr=batched, name=name)
    return outs, [0] * len(outs)


def _jit_taylor(primals, series, *, jaxpr: ClosedJaxpr, name: str):
    order, which = series_order(series), carries(series)
    def build():
        prog, consts = jet_program(jaxpr, order, which, f"jet_{name}")
        return optimize(prog), consts

    prog, consts = jaxpr.derived.get_or_build(("jet", order, tuple(which)), build)
    outs = jit_p.bind(*consts, *primals, *pack(series, which), jaxpr=prog, name=f"jet_{name}")
    avals = jaxpr.out_avals
    return outs[:len(avals)], unpack(outs[len(avals):], avals, float_flags(avals), order)


jit_p = define("jit", impl=_jit_impl, abstract=_jit_abstract, jvp=_jit_jvp,
               transpose=_jit_transpose, batch=_jit_batch, multiple_results=True,
               taylor=_jit_taylor,
               props=("higher_order",), facts=dict(call_param="jaxpr", fresh_result=True))
