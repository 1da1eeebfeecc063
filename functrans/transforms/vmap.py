"""Vectorisation: a trace whose tracers carry (value, batch axis) and apply batching rules.

The batch axis is an int or None (not mapped). Every primitive is applied once to the whole
batch, so `make_jaxpr(vmap(f))` has as many equations for a batch of 10 as of 1,000.
"""

from __future__ import annotations

import functools

import numpy as np

from functrans.core.avals import ShapedArray, get_aval
from functrans.core.ownership import unaliased
from functrans.core.primitive import lookup
from functrans.core.pytree_fun import as_value, check_callable, flatten_fun
from functrans.core.trace import Trace, Tracer, new_main
from functrans.errors import ArgumentError, ArgumentTypeError, ShapeError
from functrans.primitives.layout import broadcast_in_dim, moveaxis
from functrans.tree_util import broadcast_prefix, keystr, tree_flatten, tree_flatten_with_path, \
    tree_unflatten


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")
    unknown_value_note = ("under vmap it stands for one value per element of the mapped axis, "
                          "not a single value")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        a = get_aval(self.val)
        if self.bdim is None:
            return a
        return ShapedArray(a.shape[:self.bdim] + a.shape[self.bdim + 1:], a.dtype)


class BatchTrace(Trace):
    __slots__ = ()

    def pure(self, val):
        return BatchTracer(self, val, None)

    lift = pure

    def process_primitive(self, prim, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        if all(d is None for d in dims):
            out = prim.bind(*vals, **params)
            if prim.multiple_results:
                return [BatchTracer(self, o, None) for o in out]
            return BatchTracer(self, out, None)
        out, out_dim = lookup(prim, "batch")(vals, dims, **params)
        if prim.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


def move_batch_axis(x, bdim, size: int, out_axis):
    """Put the batch axis of a batched value at `out_axis`, broadcasting unbatched values."""
    if out_axis is None:
        if bdim is not None:
            raise ValueError("vmap: out_axes=None requires that output not depend on the "
                             "mapped axis, but it does.")
        return x
    nd = np.ndim(x) + (bdim is None)  # rank of the batched result
    if not isinstance(out_axis, int) or not -nd <= out_axis < nd:
        raise ArgumentError(f"vmap: out_axes entry {out_axis!r} is out of range for an output "
                            f"of rank {nd} (batch axis included); use an int in [{-nd}, {nd}) "
                            "or None.")
    if bdim is None:
        nd = np.ndim(x)
        out_axis = out_axis % (nd + 1)
        shape = list(np.shape(x))
        shape.insert(out_axis, size)
        return broadcast_in_dim(x, tuple(shape),
                                tuple(i for i in range(nd + 1) if i != out_axis))
    return moveaxis(x, bdim, out_axis % np.ndim(x))


def batch_flat(fun_flat, vals, in_dims, out_dims, size):
    """Apply `fun_flat` to batched flat values; results with batch axes at `out_dims`."""
    with new_main(BatchTrace, size, name="vmap") as main:
        trace = main.trace
        ins = [BatchTracer(trace, v, d) for v, d in zip(vals, in_dims)]
        outs = [trace.full_raise(o) for o in fun_flat(*ins)]
        od = out_dims() if callable(out_dims) else out_dims
        return [move_batch_axis(o.val, o.bdim, size, d) for o, d in zip(outs, od)]


def vmap(f, in_axes=0, out_axes=0, axis_size=None):
    """Vectorise `f` over an axis of its arguments (in_axes) into an axis of its results.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> ft.vmap(lambda r: fnp.sum(r * r))(fnp.ones((4, 3))).shape
    (4,)
    """
    check_callable(f, "vmap")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    in_axes = _axes_spec(in_axes, "in_axes")
    out_axes = _axes_spec(out_axes, "out_axes")

    @functools.wraps(f)
    def batched(*args, **kwargs):
        if kwargs:
            raise TypeError("vmap: keyword arguments are not mapped; pass arrays positionally "
                            "(or close over constant keyword arguments with a lambda).")
        flat, in_tree = tree_flatten((args, {}))
        names = ["args" + keystr(p) for p, _ in tree_flatten_with_path(args)[0]]
        given = flat
        flat = [as_value(x, f"vmap {name}") for x, name in zip(flat, names)]
        axes_prefix = in_axes if isinstance(in_axes, tuple) or in_axes is None \
            or isinstance(in_axes, int) else in_axes
        if isinstance(axes_prefix, tuple) and len(axes_prefix) != len(args):
            raise ValueError(f"vmap: in_axes has {len(axes_prefix)} entries but the function "
                             f"was called with {len(args)} positional arguments; give one "
                             "entry per argument (or a single int for all).")
        try:
            dims = broadcast_prefix(axes_prefix if isinstance(axes_prefix, tuple)
                                    else (axes_prefix,) * len(args), args)
        except ValueError:
            raise ValueError(
                f"vmap: in_axes={in_axes!r} is not a tree prefix of the arguments, whose "
                f"structure is {tree_flatten(args)[1]}. Give one entry per positional argument: "
                "an int, None, or a pytree of those shaped like that argument.") from None
        sizes = []
        norm_dims = []
        for i, (x, d) in enumerate(zip(flat, dims)):
            if d is None:
                norm_dims.append(None)
                continue
            nd = np.ndim(x)
            if not -nd <= d < nd:
                raise ArgumentError(
                    f"vmap: in_axes entry {d!r} for {names[i]} (shape {np.shape(x)}) is out of "
                    f"range; it must be an int in [{-nd}, {nd}) (an axis of that argument), or "
                    "None to pass the argument unmapped.")
            d %= nd
            norm_dims.append(d)
            sizes.append((names[i], d, np.shape(x)[d]))
        size = axis_size
        if not sizes and size is None:
            raise ValueError("vmap: no argument is mapped (all in_axes are None); pass "
                             "axis_size= to say how many copies to make.")
        if len({s for _, _, s in sizes} | ({size} if size is not None else set())) > 1:
            desc = "; ".join(f"{name} axis {d} has size {s}" for name, d, s in sizes)
            if axis_size is not None:
                desc += f"; axis_size={axis_size}"
            raise ShapeError(f"vmap got mapped axes of different sizes: {desc}. All mapped "
                             "axes must have the same size (check in_axes).")
        size = sizes[0][2] if size is None else size
        f_flat, out_tree = flatten_fun(f, in_tree, "vmap")
        # unmapped Python scalars reach f as they are, as in JAX: an int stays an int (so it can
        # be a static argument of a jit inside). Unmapped arrays are traced all the same, so a
        # numpy array can be indexed by a batched value.
        traced = [i for i, (g, d) in enumerate(zip(given, norm_dims))
                  if d is not None or not isinstance(g, bool | int | float | complex)]

        def f_mapped(*xs):
            full = list(given)
            for i, v in zip(traced, xs):
                full[i] = v
            return f_flat(*full)

        outs = batch_flat(f_mapped, [flat[i] for i in traced], [norm_dims[i] for i in traced],
                          lambda: _out_dims(out_axes, out_tree.val), size)
        return tree_unflatten(out_tree.val, unaliased(outs, flat))

    return batched


def _axes_spec(spec, which: str):
    """in_axes/out_axes with numpy integers as ints; anything but ints and None refused."""
    leaves, tree = tree_flatten(spec)
    for a in leaves:
        if isinstance(a, bool) or not isinstance(a, int | np.integer):
            raise ArgumentTypeError(
                f"vmap: {which}={spec!r} holds {a!r}, a {type(a).__name__}; {which} must be an "
                f"int (an axis), None (not mapped), or a pytree (tuple, list, dict) of "
                f"those shaped like the {'arguments' if which == 'in_axes' else 'output'}, "
                f"e.g. {which}=0 or {which}=(0, None).")
    return tree_unflatten(tree, [int(a) for a in leaves])


def _out_dims(out_axes, out_tree):
    if isinstance(out_axes, int) or out_axes is None:
        return [out_axes] * out_tree.num_leaves
    dummy = tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
    try:
        return broadcast_prefix(out_axes, dummy)
    except ValueError:
        raise ValueError(
            f"vmap: out_axes={out_axes!r} is not a tree prefix of the function's output, whose "
            f"structure is {out_tree}. Give an int or None for all outputs, or a pytree of those "
            "shaped like the output (or a prefix of it).") from None
