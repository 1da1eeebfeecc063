"""`checkpoint` (remat): trade memory for recomputation in reverse mode.

The wrapped function is staged and bound as the call primitive `checkpoint`. Its JVP rule
makes two calls: a primal call computing only the outputs, and a tangent call taking the
primal *inputs* and the tangents, which recomputes whatever intermediates the tangents need.
Under linearize only the tangent call is staged, so the linear program saves nothing of the
function but its inputs; transposing it (one more `checkpoint` call) re-runs the forward
equations in the backward pass, where each intermediate lives only as long as it is needed.
"""

from __future__ import annotations

import functools

from functrans.core.ownership import unaliased_tree
from functrans.core.pytree_fun import as_value, check_callable, flatten_fun, split_static
from functrans.core.symbolic import Zero, is_undefined
from functrans.core.trace import current_level
from functrans.primitives.registry import define
from functrans.transforms.higher_order import (HIGHER_ORDER, OWNED_RESULTS, any_tracer,
                                               instantiate_zeros)
from functrans.transforms.toolkit import (batch_jaxpr, batch_size, hoist, keep_outputs, run, stage,
                                          transpose_jaxpr, weak_avals)
from functrans.transforms.jvp import jvp_jaxpr
from functrans.transforms.taylor.programs import jet_call
from functrans.tree_util import tree_flatten, tree_unflatten


def _cached(closed, key, build):
    """A derived program cached on `closed`, unless it closes over tracers (then rebuilt)."""
    hit = closed.derived.get(key)
    if hit is not None:
        return hit
    val = build()
    return closed.derived.put(key, val) if not any_tracer(val[1]) else val


def _checkpoint_impl(*args, jaxpr, prevent_cse):
    return run(jaxpr, *args)


def _checkpoint_abstract(*avals, jaxpr, prevent_cse):
    if list(avals) != list(jaxpr.in_avals):
        raise TypeError(f"checkpoint: operands {[str(a) for a in avals]} do not match the "
                        f"program's inputs {[str(a) for a in jaxpr.in_avals]}.")
    return list(jaxpr.out_avals)


def _tangent_program(jaxpr, nonzeros, with_primals):
    """(primals..., nonzero tangents...) -> [primal outputs...,] nonzero output tangents,
    as a const-free program with its consts, and which output tangents are nonzero."""
    prog, out_nz = jvp_jaxpr(jaxpr, list(nonzeros))
    n_out = len(jaxpr.out_avals)
    if not with_primals:
        prog = keep_outputs(prog, [False] * n_out + [True] * sum(out_nz))
    prog, consts = hoist(prog)
    return prog, consts, out_nz


def _checkpoint_jvp(primals, tangents, *, jaxpr, prevent_cse):
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    t_in = [t for t in tangents if type(t) is not Zero]
    n_out = len(jaxpr.out_avals)
    eager = not any_tracer([*primals, *t_in])  # plain forward mode: one call does both
    prog, consts, out_nz = _cached(jaxpr, ("checkpoint_jvp", nonzeros, eager),
                                   lambda: _tangent_program(jaxpr, nonzeros, eager))
    if eager:
        outs = checkpoint_p.bind(*consts, *primals, *t_in, jaxpr=prog, prevent_cse=prevent_cse)
        primal_out, t_out = outs[:n_out], iter(outs[n_out:])
    else:
        primal_out = checkpoint_p.bind(*primals, jaxpr=jaxpr, prevent_cse=prevent_cse)
        t_out = iter(checkpoint_p.bind(*consts, *primals, *t_in, jaxpr=prog,
                                       prevent_cse=prevent_cse) if any(out_nz) else [])
    return primal_out, [next(t_out) if nz else Zero(a)
                        for nz, a in zip(out_nz, jaxpr.out_avals)]


def _checkpoint_transpose(cts, *args, jaxpr, prevent_cse):
    linear_in = tuple(is_undefined(a) for a in args)
    prog, consts = _cached(jaxpr, ("checkpoint_transpose", linear_in),
                           lambda: hoist(transpose_jaxpr(jaxpr, linear_in)))
    known = [a for a in args if not is_undefined(a)]
    res = iter(checkpoint_p.bind(*consts, *known, *instantiate_zeros(cts, jaxpr.out_avals),
                                 jaxpr=prog, prevent_cse=prevent_cse))
    return [next(res) if lin else None for lin in linear_in]


def _checkpoint_batch(vals, dims, *, jaxpr, prevent_cse):
    size = batch_size(vals, dims)
    prog, consts, out_b = batch_jaxpr(jaxpr, list(dims), size, False)
    outs = checkpoint_p.bind(*consts, *vals, jaxpr=prog, prevent_cse=prevent_cse)
    return outs, [0 if b else None for b in out_b]


def _checkpoint_taylor(primals, series, *, jaxpr, prevent_cse):
    # forward only: nothing is saved for a backward pass, so the program is jetted in place
    return jet_call(jaxpr, primals, series)


checkpoint_p = define("checkpoint", impl=_checkpoint_impl,
                      abstract=_checkpoint_abstract, jvp=_checkpoint_jvp,
                      transpose=_checkpoint_transpose, batch=_checkpoint_batch,
                      taylor=_checkpoint_taylor,
                      multiple_results=True, props=HIGHER_ORDER, facts=OWNED_RESULTS)


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """`fun` with its intermediates recomputed in the backward pass instead of stored.

    Under grad/vjp only the inputs of `fun` are kept for the backward pass. Values are
    unchanged; `prevent_cse` is accepted for JAX compatibility (the recomputation is a call of
    its own, never merged with the forward pass).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> layer = checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    >>> round(float(ft.grad(layer)(0.5)), 6)
    0.778644
    """
    check_callable(fun, "checkpoint")
    if policy is not None:
        raise NotImplementedError("checkpoint: policies are not supported; checkpoint saves "
                                  "only the inputs of the function. Split the function into "
                                  "several checkpointed pieces to save more.")

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        if current_level() == 0:  # no transform active: nothing to save or recompute
            return unaliased_tree(fun(*args, **kwargs), (args, kwargs))
        dyn, merge, _ = split_static(args, static_argnums, "checkpoint")
        leaves, in_tree = tree_flatten((tuple(dyn), kwargs))
        avals = weak_avals(leaves, "checkpoint")  # Python scalars stay weak, as in eager mode
        leaves = [as_value(x, "checkpoint") for x in leaves]
        f_flat, out_store = flatten_fun(lambda *d, **kw: fun(*merge(d), **kw), in_tree,
                                        "checkpoint")
        prog, consts = stage(lambda *xs: [as_value(o, "checkpoint") for o in f_flat(*xs)],
                             avals, "checkpoint")
        outs = checkpoint_p.bind(*consts, *leaves, jaxpr=prog, prevent_cse=bool(prevent_cse))
        return tree_unflatten(out_store.val, outs)

    return remat_fun


remat = checkpoint
