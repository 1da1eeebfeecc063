"""Sub-programs held by higher-order primitives (control flow, custom rules, checkpoint).

Every program stored in a param is *const-free*: the values it closes over (arrays, and the
tracers of outer transforms) are hoisted into leading inputs and passed as operands, so a staged
equation never hides a tracer inside its params. The helpers here stage user functions that
way, rearrange program inputs and outputs, and apply the transforms the rules share: batching
that reports which outputs are batched, and a JVP split into a primal program and a linear
tangent program joined by residuals (so that under `linearize` only the tangent part is staged).
"""

from __future__ import annotations

import numpy as np

from functrans.core.avals import ShapedArray, get_aval, weak_scalar_type
from functrans.core.eval import eval_jaxpr
from functrans.core.ir import ClosedJaxpr, Jaxpr, Var
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value, flatten_fun
from functrans.core.staging import trace_to_jaxpr
from functrans.core.trace import Tracer, new_main
from functrans.primitives.shape_ops import convert_element_type
from functrans.transforms.jit.dce import dce, dce_jaxpr
from functrans.transforms.jvp import jvp_jaxpr
from functrans.transforms.partial_eval import partial_eval_jaxpr
from functrans.transforms.vmap import BatchTrace, BatchTracer, move_batch_axis
from functrans.tree_util import tree_flatten

HIGHER_ORDER = ("higher_order",)
# the impls run their sub-programs through `run` (loops unalias their final carries), so their
# results share no memory with their operands: jit's code generator need not check them
OWNED_RESULTS = {"fresh_result": True}


# --- staging ---------------------------------------------------------------------------------

def hoist(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """(program taking its former consts as leading inputs, those consts)."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    return ClosedJaxpr(Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns), []), \
        list(closed.consts)


def stage(fun_flat, in_avals, name: str) -> tuple[ClosedJaxpr, list]:
    """Stage a function of flat arrays into a const-free program and the values it closes
    over (the program's leading inputs)."""
    return hoist(trace_to_jaxpr(fun_flat, list(in_avals), name=name))


def stage_tree(fun, args, name: str, weak: bool = False):
    """Stage `fun(*args)` (pytrees of arrays) on the avals of `args`; with `weak`, Python
    scalars among them stay weakly typed (see `weak_avals`).
    Returns (program, consts, leaves of args, output tree)."""
    leaves, in_tree = tree_flatten((tuple(args), {}))
    avals = weak_avals(leaves, name) if weak else None
    leaves = [as_value(x, name) for x in leaves]
    f_flat, out_store = flatten_fun(fun, in_tree, name)
    closed, consts = stage(lambda *xs: [as_value(o, name) for o in f_flat(*xs)],
                           avals or [get_aval(x) for x in leaves], name)
    return closed, consts, leaves, out_store.val


def weak_avals(leaves, name: str) -> list:
    """The avals of argument leaves, weak for Python scalars, which then take the dtype of the
    arrays they meet in the staged function, as in eager mode and JAX."""
    avals = [get_aval(as_value(x, name)) for x in leaves]
    return [a.weakened() if weak_scalar_type(x) is not None else a
            for a, x in zip(avals, leaves)]


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


# --- rearranging -----------------------------------------------------------------------------

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
    """The program computing only the outputs flagged in `keep` (dead equations removed)."""
    return ClosedJaxpr(dce_jaxpr(closed.jaxpr, list(keep)), closed.consts)


def pruned(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Without dead equations and unused consts (inputs are kept)."""
    return dce(closed)


def split_list(xs, sizes):
    """`xs` cut into consecutive lists of lengths `sizes` (which must add up to len(xs))."""
    out, i = [], 0
    for s in sizes:
        out.append(list(xs[i:i + s]))
        i += s
    assert i == len(xs), (i, len(xs))
    return out


def run(closed: ClosedJaxpr, *args, loop_body: bool = False) -> list:
    """Evaluate a sub-program on concrete arrays (an impl): compiled by jit's code generator
    (cached on the program), or by re-binding each equation when it cannot be compiled. The
    results share no memory with `args`, the program's constants or each other, unless
    `loop_body`: the program then runs again and again on its own results, so its large
    intermediates may live in buffers reused from call to call, and a result may be an
    argument passed through (the loop makes its final results the caller's own, with
    `unaliased`)."""
    compiled = _compiled(closed, loop_body)
    if compiled is None:
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        return outs if loop_body else unaliased(outs, [*args, *closed.consts])
    return compiled(*args)


def _compiled(closed: ClosedJaxpr, loop_body: bool):
    if closed.derived.get("functrans.control_flow.uncompilable"):
        return None
    try:
        from functrans.transforms.jit.codegen import compile_program
        return compile_program(closed, workspace=loop_body, may_return_inputs=loop_body)
    except Exception:  # the code generator is an optimisation; eval_jaxpr is always correct
        closed.derived.put("functrans.control_flow.uncompilable", True)
        return None


def zeros_like_aval(aval: ShapedArray):
    """Zeros of the shape and dtype of `aval`."""
    from functrans.primitives.shape_ops import broadcast_to
    return broadcast_to(np.zeros((), aval.dtype), aval.shape)


# --- batching --------------------------------------------------------------------------------

def batch_jaxpr(closed: ClosedJaxpr, in_dims, size: int, instantiate):
    """Batch `closed` with inputs mapped along `in_dims` (int or None each).
    Outputs are mapped along axis 0 when batched (or forced by `instantiate`, a bool or one per
    output), unmapped otherwise. Returns (const-free program, consts, out_batched)."""
    n_out = len(closed.out_avals)
    inst = [instantiate] * n_out if isinstance(instantiate, bool) else list(instantiate)
    in_avals = []
    for a, d in zip(closed.in_avals, in_dims):
        shape = list(a.shape)
        if d is not None:
            shape.insert(d, size)
        in_avals.append(ShapedArray(shape, a.dtype))
    box = []

    def fun(*xs):
        with new_main(BatchTrace, size, name="vmap") as main:
            trace = main.trace
            ins = [BatchTracer(trace, x, d) for x, d in zip(xs, in_dims)]
            outs = [trace.full_raise(o) for o in eval_jaxpr(closed.jaxpr, closed.consts, *ins)]
            batched = [o.bdim is not None or i for o, i in zip(outs, inst)]
            box.append(batched)
            return [move_batch_axis(o.val, o.bdim, size, 0 if b else None)
                    for o, b in zip(outs, batched)]

    prog, consts = stage(fun, in_avals, "vmap")
    return prog, consts, box[0]


def batch_size(vals, dims) -> int:
    """The length of the batch axis: the size of the first batched value along its axis."""
    return next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)


# --- JVP split -------------------------------------------------------------------------------

class JVPSplit:
    """The JVP of a program split for linearization.

    known:   (known consts..., primals...) -> (primal outputs..., residuals...)
    tangent: (residuals..., nonzero tangents...) -> nonzero output tangents (linear in them)
    """

    def __init__(self, known, known_consts, tangent, num_res, out_nonzeros):
        self.known = known
        self.known_consts = known_consts
        self.tangent = tangent
        self.num_res = num_res
        self.out_nonzeros = out_nonzeros


def jvp_split(closed: ClosedJaxpr, nonzeros, instantiate=False) -> JVPSplit:
    """JVP of `closed` for the input tangents flagged in `nonzeros`, split by partial
    evaluation into the primal work and the (linear) tangent work."""
    jvp_closed, out_nz = jvp_jaxpr(closed, list(nonzeros), instantiate)
    n_in, n_out = len(closed.in_avals), len(closed.out_avals)
    n_t_in, n_t_out = sum(map(bool, nonzeros)), sum(map(bool, out_nz))
    known, tangent, out_unknowns, num_res = partial_eval_jaxpr(
        jvp_closed, [False] * n_in + [True] * n_t_in,
        instantiate=[False] * n_out + [True] * n_t_out)
    assert list(out_unknowns) == [False] * n_out + [True] * n_t_out, out_unknowns
    known, known_consts = hoist(pruned(known))
    return JVPSplit(known, known_consts, pruned(tangent), num_res, list(out_nz))


def instantiate_zeros(ts, avals=None):
    """Materialised arrays for tangents or cotangents that may be symbolic zeros. `avals`
    types the zeros (backward_pass may hand multiple-result rules a mistyped Zero)."""
    from functrans.core.symbolic import Zero
    from functrans.primitives.layout import instantiate
    if avals is not None:
        ts = [Zero(a) if type(t) is Zero else t for t, a in zip(ts, avals)]
    return [instantiate(t) for t in ts]
