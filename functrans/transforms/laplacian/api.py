"""The public functions: the Laplacian, the Hessian's diagonal, the divergence, with the value
and gradient where asked, over pytrees of inputs.
"""

from __future__ import annotations

import functools

import numpy as np

from functrans.core.avals import get_aval
from functrans.core.ownership import unaliased, unaliased_tree
from functrans.core.pytree_fun import as_value, normalize_argnums
from functrans.core.trace import new_main
from functrans.errors import ShapeError
from functrans.primitives.elementwise import mul
from functrans.primitives.shape_ops import slice_
from functrans.primitives.reductions import reduce_sum
from functrans.primitives.layout import broadcast_to, moveaxis, reshape
from functrans.transforms.vjp import check_differentiable
from functrans.tree_util import tree_flatten, tree_unflatten
from functrans.transforms.laplacian._blocks import (_Config, _DIAG, _FIRST, _SUM, _Scaled, _add,
                                                    _dense)
from functrans.transforms.laplacian.trace import LaplacianTrace, LaplacianTracer


# --- running a function under the trace ------------------------------------------------------

def _basis(leaves):
    """Gradient blocks of the inputs: identity rows over their concatenated entries."""
    avals = [get_aval(x) for x in leaves]
    sizes = [a.size for a in avals]
    n = sum(sizes)
    eye = np.eye(n, dtype=np.result_type(*[a.dtype for a in avals]))
    out, start = [], 0
    for a, s in zip(avals, sizes):
        out.append(np.ascontiguousarray(eye[:, start:start + s]).reshape((n, *a.shape))
                   .astype(a.dtype))
        start += s
    return out, n


def _selection(indices, n, fname):
    if indices is None:
        return None
    sel = tuple(int(i) for i in np.ravel(indices))
    if not sel or len(set(sel)) != len(sel) or any(not 0 <= i < n for i in sel):
        raise ValueError(f"{fname}: indices={indices!r} must be distinct flat indices in "
                         f"[0, {n}) of the differentiated inputs (all of argnums' entries, "
                         "concatenated in order).")
    return None if sel == tuple(range(n)) else sel


def _forward(f, args, argnums, mode, fname, indices=None):
    """Run f under the trace; returns (results, out_tree, in_leaves, in_tree, n, sel)."""
    nums = normalize_argnums(argnums, len(args), fname)
    dyn = [args[i] for i in nums]
    check_differentiable(dyn, nums, fname)
    in_leaves, in_tree = tree_flatten(tuple(dyn))
    in_leaves = [as_value(x, fname) for x in in_leaves]
    basis, n = _basis(in_leaves)
    if n == 0:
        raise ShapeError(f"{fname}: the arguments at argnums={argnums!r} have no entries (size "
                         "0); there is nothing to differentiate with respect to.")
    sel = _selection(indices, n, fname)
    with new_main(LaplacianTrace, _Config(n, mode, sel), name=fname) as main:
        trace = main.trace
        ins = [LaplacianTracer(trace, x, _Scaled(None, g), None)
               for x, g in zip(in_leaves, basis)]
        full = list(args)
        for i, a in zip(nums, tree_unflatten(in_tree, ins)):
            full[i] = a
        out = f(*full)
        out_leaves, out_tree = tree_flatten(out)
        outs = [trace.full_raise(as_value(o, fname)) for o in out_leaves]
        res = [(o.primal, _dense(o.grad), o.second) for o in outs]
    return res, out_tree, in_leaves, in_tree, n, sel


def _zeros(shape, dtype):
    return broadcast_to(np.zeros((), dtype), tuple(shape))


def _per_input(block, out_shape, dtype, in_leaves, in_tree, argnums):
    """Split an (n, *out_shape) block into out_shape + in_shape pieces, one per input leaf,
    packed like a Jacobian (a single array when argnums is an int)."""
    n = sum(get_aval(x).size for x in in_leaves)
    if block is None:
        block = _zeros((n, *out_shape), dtype)
    block = moveaxis(block, 0, len(out_shape))           # (*out_shape, n)
    pieces, start = [], 0
    for x in in_leaves:
        a = get_aval(x)
        piece = block if a.size == n else slice_(
            block, (0,) * len(out_shape) + (start,), (*out_shape, start + a.size))
        pieces.append(reshape(piece, (*out_shape, *a.shape)))
        start += a.size
    tree = tree_unflatten(in_tree, pieces)
    return tree[0] if isinstance(argnums, int) else tree


def value_grad_and_laplacian(f, argnums=0, *, indices=None):
    """(f(x), gradient of f, Laplacian of f) from one forward pass.

    The gradient is laid out like a Jacobian (output shape + input shape); the Laplacian has
    the output's shape (each output entry's Laplacian). With several arguments in argnums or a
    pytree argument, the Laplacian sums over all their entries; `indices` (flat positions in
    those entries, concatenated in argnums order) restricts it to some of them, e.g. the
    spatial Laplacian of u(t, x) beside the full gradient (u_t included).

    >>> import functrans.numpy as fnp
    >>> u, du, lap = value_grad_and_laplacian(lambda x: fnp.sum(x * x))(fnp.ones(2))
    >>> float(u), du.tolist(), float(lap)
    (2.0, [2.0, 2.0], 4.0)
    """
    @functools.wraps(f)
    def wrapped(*args):
        res, out_tree, in_leaves, in_tree, _, _ = _forward(
            f, args, argnums, _SUM, "value_grad_and_laplacian", indices)
        vals, grads, laps = [], [], []
        for y, g, s in res:
            a = get_aval(y)
            vals.append(y)
            grads.append(_per_input(g, a.shape, a.dtype, in_leaves, in_tree, argnums))
            laps.append(_zeros(a.shape, a.dtype) if s is None else s)
        return unaliased_tree((tree_unflatten(out_tree, vals), tree_unflatten(out_tree, grads),
                               tree_unflatten(out_tree, laps)), args)

    return wrapped


def laplacian(f, argnums=0, *, indices=None):
    """The Laplacian of f (sum of unmixed second derivatives) by one forward pass; `indices`
    restricts the sum to some input entries (see value_grad_and_laplacian).

    Composes with vmap (over collocation points), grad (with respect to parameters) and jit.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> lap = laplacian(lambda x: fnp.sin(x[0]) * fnp.exp(x[1]))
    >>> round(float(lap(fnp.array([0.5, 0.0]))), 12)  # -sin(x)e^y + sin(x)e^y
    0.0
    """
    vgl = value_grad_and_laplacian(f, argnums, indices=indices)

    @functools.wraps(f)
    def wrapped(*args):
        return vgl(*args)[2]

    return wrapped


def value_grad_and_hessian_diag(f, argnums=0, *, indices=None):
    """(f(x), gradient, Hessian diagonal) from one forward pass; the diagonal is laid out like
    the gradient (output shape + input shape): d2f/dx_i^2 at each position i. With `indices`
    (flat positions in the differentiated entries) only those diagonal entries are carried
    and returned, as output shape + (len(indices),), in the order given; the gradient stays
    complete. Burgers' u_t, u_x, u_xx:

    >>> import functrans.numpy as fnp
    >>> u = lambda z: fnp.sin(z[0]) * z[1] * z[1] * z[1]          # z = (t, x)
    >>> _, du, d2u = value_grad_and_hessian_diag(u, indices=[1])(fnp.array([0.0, 2.0]))
    >>> du.tolist(), d2u.tolist()
    ([8.0, 0.0], [0.0])
    """
    @functools.wraps(f)
    def wrapped(*args):
        res, out_tree, in_leaves, in_tree, _, sel = _forward(
            f, args, argnums, _DIAG, "value_grad_and_hessian_diag", indices)
        vals, grads, diags = [], [], []
        for y, g, s in res:
            a = get_aval(y)
            vals.append(y)
            grads.append(_per_input(g, a.shape, a.dtype, in_leaves, in_tree, argnums))
            if sel is None:
                diags.append(_per_input(s, a.shape, a.dtype, in_leaves, in_tree, argnums))
            else:
                diags.append(_zeros((*a.shape, len(sel)), a.dtype) if s is None
                             else moveaxis(s, 0, a.ndim))
        return unaliased_tree((tree_unflatten(out_tree, vals), tree_unflatten(out_tree, grads),
                               tree_unflatten(out_tree, diags)), args)

    return wrapped


def hessian_diag(f, argnums=0, *, indices=None):
    """The diagonal of the Hessian of f (e.g. u_xx and u_tt separately), by one forward pass.

    >>> import functrans.numpy as fnp
    >>> hessian_diag(lambda x: x[0] * x[0] * x[0] * x[1])(fnp.array([1.0, 2.0])).tolist()
    [12.0, 0.0]
    """
    vgd = value_grad_and_hessian_diag(f, argnums, indices=indices)

    @functools.wraps(f)
    def wrapped(*args):
        return vgd(*args)[2]

    return wrapped


def divergence(F, argnums=0):
    """The divergence of a vector field F: R^n -> R^n (trace of its Jacobian), by one forward
    pass of (value, gradient block).

    >>> import functrans.numpy as fnp
    >>> float(divergence(lambda x: x * x)(fnp.array([1.0, 2.0, 3.0])))
    12.0
    """
    @functools.wraps(F)
    def wrapped(*args):
        res, out_tree, in_leaves, in_tree, n, _ = _forward(F, args, argnums, _FIRST,
                                                           "divergence")
        sizes = [get_aval(y).size for y, _, _ in res]
        if sum(sizes) != n:
            shapes = [get_aval(y).shape for y, _, _ in res]
            raise ShapeError(
                f"divergence: the field has {sum(sizes)} entries (output shapes {shapes}) but "
                f"its argument has {n}; a divergence needs F: R^n -> R^n. Return one entry per "
                "input entry (same shape as the input).")
        dtype = np.result_type(*[get_aval(y).dtype for y, _, _ in res])
        total, start = None, 0
        for (y, g, _), size in zip(res, sizes):
            if g is not None:
                block = reshape(g, (n, size))
                eye = np.eye(n, dtype=dtype)[:, start:start + size]
                total = _add(total, reduce_sum(mul(block, eye), (0, 1)))
            start += size
        return unaliased([_zeros((), dtype) if total is None else total], in_leaves)[0]

    return wrapped
