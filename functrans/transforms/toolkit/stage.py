"""Staging functions into programs, and running programs on concrete arrays.

Every program stored in a param of a higher-order primitive is *const-free*: the values it
closes over (arrays, and the tracers of outer transforms) are hoisted into leading inputs and
passed as operands, so a staged equation never hides a tracer inside its params.
"""

from __future__ import annotations

from functrans.core.avals import get_aval, weak_scalar_type
from functrans.core.eval import eval_jaxpr
from functrans.core.ir import ClosedJaxpr, Jaxpr
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value, flatten_fun
from functrans.core.staging import trace_to_jaxpr
from functrans.tree_util import tree_flatten

_UNCOMPILABLE = "functrans.toolkit.uncompilable"


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


def run(closed: ClosedJaxpr, *args, loop_body: bool = False) -> list:
    """Evaluate a program on concrete arrays (an impl): compiled by the code generator
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
    if closed.derived.get(_UNCOMPILABLE):
        return None
    try:
        from functrans.transforms.toolkit.codegen import compile_program
        return compile_program(closed, workspace=loop_body, may_return_inputs=loop_body)
    except Exception:  # the code generator is an optimisation; eval_jaxpr is always correct
        closed.derived.put(_UNCOMPILABLE, True)
        return None
