"""Jacobians and Hessians: vmap of jvp over the input basis (forward) or of vjp over the output
basis (reverse). Pytree inputs and outputs give pytree-of-pytree Jacobians, as in JAX."""

from __future__ import annotations

import functools

import numpy as np

from functrans.core.avals import get_aval, is_float
from functrans.core.pytree_fun import as_value, check_callable, normalize_argnums
from functrans.errors import DTypeError
from functrans.primitives.layout import reshape
from functrans.transforms.jvp import jvp
from functrans.transforms.vjp import check_differentiable, check_output_dtype, vjp
from functrans.transforms.vmap import vmap
from functrans.tree_util import tree_flatten, tree_unflatten


def _std_basis(leaves):
    """Identity rows for the concatenated flattened leaves, split back per leaf."""
    avals = [get_aval(x) for x in leaves]
    sizes = [a.size for a in avals]
    total = sum(sizes)
    dtype = np.result_type(*[a.dtype for a in avals]) if avals else np.float64
    eye = np.eye(total, dtype=dtype)
    out, start = [], 0
    for a, s in zip(avals, sizes):
        out.append(eye[:, start:start + s].reshape((total, *a.shape)).astype(a.dtype))
        start += s
    return out, total


def _split_args(f, args, kwargs, argnums, fname):
    nums = normalize_argnums(argnums, len(args), fname, distinct=True)

    def f_dyn(*dyn):
        full = list(args)
        for i, a in zip(nums, dyn):
            full[i] = a
        return f(*full, **kwargs)  # keyword arguments pass through, not differentiated

    return f_dyn, [args[i] for i in nums]


def jacfwd(f, argnums=0, has_aux=False, holomorphic: bool = False):
    """Jacobian of `f` by forward mode: one jvp per input element, vectorised with vmap.
    Inputs must be real, or complex with `holomorphic=True` (then the outputs too), as in
    JAX; for other complex functions use jvp."""
    check_callable(f, "jacfwd")

    @functools.wraps(f)
    def jac(*args, **kwargs):
        f_dyn, dyn = _split_args(f, args, kwargs, argnums, "jacfwd")
        check_differentiable(dyn, normalize_argnums(argnums, len(args), "jacfwd"), "jacfwd",
                             holomorphic, complex_inputs=False)
        in_leaves, in_tree = tree_flatten(tuple(dyn))
        in_leaves = [as_value(x, "jacfwd") for x in in_leaves]
        basis, n = _std_basis(in_leaves)

        def push(*t_leaves):
            primals = tree_unflatten(in_tree, in_leaves)
            tangents = tree_unflatten(in_tree, list(t_leaves))
            res = jvp(f_dyn, tuple(primals), tuple(tangents), has_aux=has_aux)
            return (res[1], res[2]) if has_aux else res[1]

        pushed = vmap(push, in_axes=(0,) * len(basis),
                      out_axes=(-1, None) if has_aux else -1)(*basis)
        y_t, aux = pushed if has_aux else (pushed, None)
        out_leaves, out_tree = tree_flatten(y_t)
        if holomorphic:
            for o in out_leaves:
                check_output_dtype(get_aval(o).dtype, "jacfwd", True)
        in_avals = [get_aval(x) for x in in_leaves]
        result = []
        for o in out_leaves:
            per_in, start = [], 0
            for a in in_avals:
                block = o[..., start:start + a.size]
                per_in.append(reshape(block, (*o.shape[:-1], *a.shape)))
                start += a.size
            result.append(_pack(per_in, in_tree, argnums))
        jac_tree = tree_unflatten(out_tree, result)
        return (jac_tree, aux) if has_aux else jac_tree

    return jac


def jacrev(f, argnums=0, has_aux=False, holomorphic: bool = False):
    """Jacobian of `f` by reverse mode: one vjp per output element, vectorised with vmap.
    Outputs must be real, or complex with `holomorphic=True` (then the inputs too), as in
    JAX; for other complex functions use vjp."""
    check_callable(f, "jacrev")

    @functools.wraps(f)
    def jac(*args, **kwargs):
        f_dyn, dyn = _split_args(f, args, kwargs, argnums, "jacrev")
        check_differentiable(dyn, normalize_argnums(argnums, len(args), "jacrev"), "jacrev",
                             holomorphic)
        res = vjp(f_dyn, *dyn, has_aux=has_aux)
        y, f_vjp = res[0], res[1]
        out_leaves, out_tree = tree_flatten(y)
        out_leaves = [as_value(x, "jacrev") for x in out_leaves]
        for i, leaf in enumerate(out_leaves):
            dtype = get_aval(leaf).dtype
            if not is_float(dtype):
                raise DTypeError(
                    f"jacrev requires float outputs, but output leaf {i} of {out_tree} has "
                    f"dtype {dtype.name}, whose derivative is not defined. Return it as aux "
                    "(has_aux=True), or use jacfwd or vjp.")
            check_output_dtype(dtype, "jacrev", holomorphic)
        basis, n = _std_basis(out_leaves)
        pulled = vmap(lambda *cts: f_vjp(tree_unflatten(out_tree, list(cts))))(*basis)
        in_leaves, in_tree = tree_flatten(tuple(pulled))
        out_avals = [get_aval(x) for x in out_leaves]
        per_out = []
        start = 0
        for a in out_avals:
            blocks = [reshape(g[start:start + a.size], (*a.shape, *g.shape[1:]))
                      for g in in_leaves]
            per_out.append(_pack(blocks, in_tree, argnums))
            start += a.size
        jac_tree = tree_unflatten(out_tree, per_out)
        return (jac_tree, res[2]) if has_aux else jac_tree

    return jac


def _pack(leaves, in_tree, argnums):
    tree = tree_unflatten(in_tree, leaves)
    return tree[0] if isinstance(argnums, int) else tree


def hessian(f, argnums=0, has_aux=False, holomorphic: bool = False):
    """Hessian of scalar `f`: jacfwd of jacrev (forward over reverse); `holomorphic=True` for
    a holomorphic f of complex inputs, as in JAX."""
    return jacfwd(jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)
