"""Batching a program (IR in, IR out): vmap of a staged program."""

from __future__ import annotations

import numpy as np

from functrans.core.avals import ShapedArray
from functrans.core.eval import eval_jaxpr
from functrans.core.ir import ClosedJaxpr
from functrans.core.staging import trace_to_jaxpr
from functrans.core.trace import new_main
from functrans.transforms.toolkit.stage import stage
from functrans.transforms.vmap import BatchTrace, BatchTracer, move_batch_axis


def batch_jaxpr(closed: ClosedJaxpr, in_dims, size: int, instantiate=True, out_axis: int = 0,
                hoisted: bool = True) -> tuple[ClosedJaxpr, list, list[bool]]:
    """Batch `closed` with inputs mapped along `in_dims` (int or None each).

    An output is mapped along `out_axis` when it depends on a mapped input or when
    `instantiate` (a bool, or one per output) forces it (then broadcast); otherwise it stays
    unmapped. Returns (program, consts, which outputs are mapped): with `hoisted`, a
    const-free program taking `consts` as leading inputs (see `stage`); else a program that
    keeps its consts (and an empty list).

    >>> import numpy as np, functrans as ft
    >>> closed = ft.make_jaxpr(lambda x, y: (x * y, y))(np.ones(3), np.ones(3))
    >>> prog, consts, mapped = batch_jaxpr(closed, [0, None], 5, instantiate=False)
    >>> prog.out_avals[0].shape, mapped
    ((5, 3), [True, False])
    """
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
            mapped = [o.bdim is not None or i for o, i in zip(outs, inst)]
            box.append(mapped)
            return [move_batch_axis(o.val, o.bdim, size, out_axis if m else None)
                    for o, m in zip(outs, mapped)]

    if hoisted:
        prog, consts = stage(fun, in_avals, "vmap")
    else:
        prog, consts = trace_to_jaxpr(fun, in_avals, name="vmap"), []
    return prog, consts, box[0]


def batch_size(vals, dims) -> int:
    """The length of the batch axis: the size of the first batched value along its axis."""
    return next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
