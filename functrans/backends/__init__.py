"""Adapters that let primitive implementations run on array libraries other than numpy.

One small module per library (`dask`, `cupy`), imported by `functrans.backend` the first time
an array of that library is met, so `import functrans` imports neither. Each adapter gives:

  NAME                      the library's name (in errors and jit's cache key)
  is_array_type(t)          whether `t` is the library's array type
  namespace()               the names `functrans.backend.xp` holds while the library computes:
                            numpy's names with the library's own functions over them
  impl_for(prim)            how one application of `prim` runs on the library's arrays (its
                            impl on the namespace, or a mapping of numpy's impl over blocks)
  from_numpy(a)             a numpy constant as the library's array (what jit's programs hold)
  unaliased(outs, sources)  results copied where they may share memory with the arguments
                            (or each other), for libraries whose arrays are mutable

The derivative rules never see a library: they bind primitives, and each primitive's impl
reaches the library through `xp`.

`functrans.backends.dask_jit`: `jit` over chunked dask arrays of points (one fused task per
chunk, dask's tree reductions of the partial results) and `compute(tree)`, a pytree of dask
results in one `dask.compute`.
"""

from __future__ import annotations

from functrans.core.avals import get_aval

__all__ = ["cupy", "dask", "dask_jit"]


def result_avals(prim, args, params) -> list:
    """The abstract values of `prim`'s results on `args` (a list, one per result)."""
    out = prim.abstract_eval(*[get_aval(a) for a in args], **params)
    return list(out) if prim.multiple_results else [out]


def eval_on(adapter, closed, args) -> list:
    """Run the program `closed` on `args` with `adapter`'s library: every equation through
    `adapter.impl_for`, numpy constants converted once by `adapter.from_numpy`."""
    from functrans.backend import using
    from functrans.core.ir import Literal

    jaxpr = closed.jaxpr
    env = dict(zip(jaxpr.constvars, map(adapter.from_numpy, closed.consts)))
    env.update(zip(jaxpr.invars, args))

    def read(a):
        return adapter.from_numpy(a.val) if type(a) is Literal else env[a]

    with using(adapter):
        for eqn in jaxpr.eqns:
            outs = adapter.impl_for(eqn.primitive)(*map(read, eqn.invars), **eqn.params)
            env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
        return adapter.unaliased([read(v) for v in jaxpr.outvars], list(args))


def call_traced(fn, adapter, args, kwargs):
    """`fn(*args, **kwargs)` for an eager functrans.numpy function given arrays of `adapter`'s
    library: `fn` is traced with those arrays as inputs (everything else stays as given), so
    every numpy-specific step of `fn` sees a tracer, and the program runs on the library;
    results that do not depend on the arrays (a shape, a dtype) come back as `fn` made them."""
    from functrans.backend import adapter_of
    from functrans.core.staging import trace_to_jaxpr
    from functrans.core.trace import Tracer
    from functrans.tree_util import tree_flatten, tree_unflatten

    leaves, in_tree = tree_flatten((args, kwargs))
    where = [i for i, x in enumerate(leaves) if adapter_of(x) is not None]
    inputs = [leaves[i] for i in where]
    store = {}

    def flat(*tracers):
        full = list(leaves)
        for i, t in zip(where, tracers):
            full[i] = t
        a, k = tree_unflatten(in_tree, full)
        outs, store["tree"] = tree_flatten(fn(*a, **k))
        store["outs"] = outs
        store["traced"] = [i for i, o in enumerate(outs) if isinstance(o, Tracer)]
        return [outs[i] for i in store["traced"]]

    closed = trace_to_jaxpr(flat, [get_aval(x) for x in inputs],
                            name=getattr(fn, "__name__", "functrans.numpy"))
    outs = list(store["outs"])
    for i, value in zip(store["traced"], eval_on(adapter, closed, inputs)):
        outs[i] = value
    return tree_unflatten(store["tree"], outs)
