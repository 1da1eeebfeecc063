"""Linearization: JVP with the tangent half staged into a linear program.

Primal computations run on the trace below (eagerly, or staged by an outer transform); every
operation touching a tangent is recorded, by a `JaxprTrace` one level above the JVP trace, into
a linear jaxpr whose constants are the residuals it needs. Reverse mode is this program
transposed; nothing else knows how to differentiate backwards.
"""

from __future__ import annotations

from functrans.core.avals import get_aval
from functrans.core.ir import ClosedJaxpr
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value, check_callable, flatten_fun
from functrans.core.staging import JaxprBuilder, JaxprTrace
from functrans.core.symbolic import Zero
from functrans.core.trace import new_main
from functrans.transforms.toolkit import dce
from functrans.transforms.jvp import JVPTrace, JVPTracer, tangent_aval, tangent_input, \
    tangent_output
from functrans.transforms.transpose import backward_pass
from functrans.tree_util import tree_flatten, tree_unflatten


class LinearFunction:
    """The linear map x_dot -> y_dot at a point, as a program closed over residuals."""

    def __init__(self, jaxpr: ClosedJaxpr, in_avals, in_mask, out_avals, out_mask):
        self.jaxpr = jaxpr          # inputs: nonzero tangents; outputs: nonzero out tangents
        self.in_avals = in_avals    # one per primal input
        self.in_mask = in_mask      # which inputs have a tangent input in the jaxpr
        self.out_avals = out_avals
        self.out_mask = out_mask    # which outputs have a (possibly) nonzero tangent

    def __call__(self, tangents) -> list:
        from functrans.core.eval import eval_jaxpr
        ins = [t for t, m in zip(tangents, self.in_mask) if m]
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *ins))
        return [next(outs) if m else Zero(a) for a, m in zip(self.out_avals, self.out_mask)]

    def transpose(self, cts) -> list:
        """Cotangents of the inputs (Zero where none reaches them)."""
        cts = [c for c, m in zip(cts, self.out_mask) if m]
        res = iter(backward_pass(self.jaxpr.jaxpr, self.jaxpr.consts, cts))
        return [next(res) if m else Zero(a) for a, m in zip(self.in_avals, self.in_mask)]


def linearize_flat(fun_flat, primals, *, name="linearize", num_aux=0):
    """(primals_out, LinearFunction) for a function of flat arrays. The last `num_aux` outputs
    are auxiliary: returned as primal values, left out of the linear map (`num_aux` may be a
    function called once `fun_flat` has run, when the count is known only then)."""
    in_avals = [get_aval(p) for p in primals]
    in_mask = [tangent_aval(a) is not None for a in in_avals]
    builder = JaxprBuilder()
    with new_main(JVPTrace, name=name) as main, \
            new_main(JaxprTrace, builder, name=f"{name} (tangents)") as tmain:
        trace, ttrace = main.trace, tmain.trace
        t_in = [ttrace.new_arg(a) if m else Zero(a) for a, m in zip(in_avals, in_mask)]
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, t_in)]
        outs = [trace.full_raise(o) for o in fun_flat(*ins)]
        primals_out = [o.primal for o in outs]
        outs = outs[:len(outs) - (num_aux() if callable(num_aux) else num_aux)]
        out_mask = [type(o.tangent) is not Zero and tangent_aval(get_aval(o.primal)) is not None
                    for o in outs]
        t_out = [ttrace.full_raise(o.tangent) for o, m in zip(outs, out_mask) if m]
        closed = builder.to_closed_jaxpr([t for t in t_in if type(t) is not Zero], t_out)
    out_avals = [get_aval(p) for p in primals_out[:len(outs)]]
    return primals_out, LinearFunction(dce(closed), in_avals, in_mask, out_avals, out_mask)


def with_aux_leaves(f_flat, out_store, where: str):
    """For has_aux: f_flat (returning the leaves of a pair (output, aux)) as a function
    returning the output's leaves then aux's, so aux leaves the trace as primal values; and
    a function giving (output tree, aux tree, number of aux leaves) once it has run."""
    info = []

    def f_main(*xs):
        out_flat = f_flat(*xs)  # sets out_store
        pair = tree_unflatten(out_store.val, out_flat)
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(f"{where}has_aux=True: f must return a pair (output, aux), got "
                            f"{out_store.val}.")
        out_leaves, tree = tree_flatten(pair[0])
        aux_leaves, aux_tree = tree_flatten(pair[1])
        info[:] = [(tree, aux_tree, len(aux_leaves))]
        return [*out_leaves, *aux_leaves]

    return f_main, lambda: info[0]


def linearize(f, *primals, has_aux=False):
    """(f(*primals), f_jvp) where f_jvp(*tangents) evaluates the linearized program; with
    has_aux, f returns (output, aux) and linearize returns (output, f_jvp, aux), as in JAX.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, f_jvp = ft.linearize(fnp.sin, 0.0)
    >>> float(f_jvp(3.0))
    3.0
    """
    check_callable(f, "linearize")
    flat, in_tree = tree_flatten((primals, {}))
    flat = [as_value(x, "linearize") for x in flat]
    f_flat, out_store = flatten_fun(f, in_tree, "linearize")
    if has_aux:
        f_flat, aux_info = with_aux_leaves(f_flat, out_store, "linearize: ")
    out, lin = linearize_flat(f_flat, flat, num_aux=(lambda: aux_info()[2]) if has_aux else 0)
    out = unaliased(out, flat)
    if has_aux:
        out_tree, aux_tree, n_aux = aux_info()
        out, aux = out[:len(out) - n_aux], tree_unflatten(aux_tree, out[len(out) - n_aux:])
    else:
        out_tree = out_store.val

    def f_jvp(*tangents):
        t_flat, t_tree = tree_flatten((tangents, {}))
        if t_tree != in_tree:
            raise TypeError(f"linearize: the tangents' structure {t_tree} differs from the "
                            f"primals' {in_tree}.")
        t_flat = [as_value(t, "linearize tangents") for t in t_flat]
        given = list(t_flat)
        # numpy broadcasting would hide a shape mismatch; an integer primal takes float0
        t_flat = [tangent_input(i, a, t, "linearize")
                  for i, (t, a) in enumerate(zip(t_flat, lin.in_avals))]
        return tree_unflatten(out_tree, unaliased([tangent_output(t) for t in lin(t_flat)],
                                                  given))

    out = tree_unflatten(out_tree, out)
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)
