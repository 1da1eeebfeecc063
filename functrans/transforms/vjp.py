"""Reverse mode: vjp, grad and value_and_grad, all as linearize followed by transpose."""

from __future__ import annotations

import functools

import numpy as np

from functrans.core.avals import get_aval, is_float
from functrans.core.ownership import unaliased
from functrans.core.pytree_fun import as_value, check_callable, flatten_fun, normalize_argnums
from functrans.core.trace import Tracer
from functrans.errors import DTypeError, ShapeError
from functrans.primitives.layout import instantiate
from functrans.transforms.linearize import linearize_flat, with_aux_leaves
from functrans.tree_util import tree_flatten, tree_unflatten


def vjp(f, *primals, has_aux=False):
    """(f(*primals), vjp_fn), where vjp_fn(ct) returns the cotangents of the primals: ct @ J.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> y, f_vjp = ft.vjp(lambda x: x * x, 3.0)
    >>> [float(g) for g in f_vjp(1.0)]
    [6.0]
    """
    check_callable(f, "vjp")
    flat, in_tree = tree_flatten((primals, {}))
    flat = [as_value(x, "vjp") for x in flat]
    f_flat, out_store = flatten_fun(f, in_tree, "vjp")
    if has_aux:
        f_flat, aux_info = with_aux_leaves(f_flat, out_store, "")
    out_flat, lin = linearize_flat(f_flat, flat, name="vjp",
                                   num_aux=(lambda: aux_info()[2]) if has_aux else 0)
    out_flat = returned = unaliased(out_flat, flat)  # aux leaves included
    aux = None
    if has_aux:
        out_tree, aux_tree, n_aux = aux_info()
        out_flat, aux_flat = out_flat[:len(out_flat) - n_aux], out_flat[len(out_flat) - n_aux:]
        aux = tree_unflatten(aux_tree, aux_flat)
    else:
        out_tree = out_store.val
    out_avals = [get_aval(o) for o in out_flat]

    def vjp_fn(ct):
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"vjp_fn: the cotangent's structure {ct_tree} differs from the "
                            f"output's {out_tree}; pass one cotangent per output leaf.")
        cts = []
        for i, (c, a) in enumerate(zip(ct_flat, out_avals)):
            c = as_value(c, "vjp_fn")
            ca = get_aval(c)
            if ca.shape != a.shape:
                raise ShapeError(f"vjp_fn: cotangent {i} has shape {ca.shape} but the output "
                                 f"it pairs with has shape {a.shape}.")
            if ca.dtype.kind == "c" and a.dtype.kind != "c":
                raise DTypeError(
                    f"vjp_fn: cotangent {i} is complex ({ca.dtype.name}) but the output it "
                    f"pairs with is real ({a.dtype.name}); its imaginary part would be "
                    "dropped. Pass a real cotangent (its real part), or make the function's "
                    "output complex.")
            if ca.dtype != a.dtype and not isinstance(c, Tracer):
                c = np.asarray(c, a.dtype)
            cts.append(c)
        # the caller's cotangents, primals and outputs may reach the result unchanged
        cts_in = unaliased([instantiate(c) for c in lin.transpose(cts)],
                           [*ct_flat, *flat, *returned])
        return tree_unflatten(in_tree, cts_in)[0]

    out = tree_unflatten(out_tree, out_flat)
    if has_aux:
        return out, vjp_fn, aux
    return out, vjp_fn


def check_differentiable(dyn_args, argnums, fname: str, holomorphic: bool = False,
                         complex_inputs: bool = True) -> None:
    """Raise DTypeError when an argument in `argnums` has a leaf that cannot be differentiated
    with respect to (shared by every transform that differentiates with respect to arguments):
    an integer or boolean leaf; with `holomorphic`, any leaf that is not complex; without it,
    a complex leaf where `complex_inputs` is False (jacfwd, as JAX's)."""
    for a, arg in zip(argnums, dyn_args):
        for leaf in tree_flatten(arg)[0]:
            dtype = get_aval(as_value(leaf, fname)).dtype
            if holomorphic and dtype.kind != "c":
                raise DTypeError(
                    f"{fname} with holomorphic=True requires inputs with complex dtype, but "
                    f"argument {a} has dtype {dtype.name}. Pass complex values (e.g. "
                    "x.astype(complex)), or drop holomorphic=True.")
            if not is_float(dtype):
                raise DTypeError(
                    f"{fname} requires float inputs to differentiate with respect to, but "
                    f"argument {a} has dtype {dtype.name}. Pass floats (e.g. 3.0 instead of 3, or "
                    "x.astype(float)), or leave that argument out of argnums.")
            if dtype.kind == "c" and not complex_inputs and not holomorphic:
                raise DTypeError(
                    f"{fname} requires real-valued inputs, but argument {a} has dtype "
                    f"{dtype.name}. For holomorphic differentiation, pass holomorphic=True; "
                    f"for a function that is not holomorphic, use ft.jvp directly (or "
                    f"{fname} of the real and imaginary parts as two float arrays).")


def check_output_dtype(dtype, fname: str, holomorphic: bool) -> None:
    """Raise DTypeError unless a reverse-mode derivative (grad, jacrev) can start from an output
    of `dtype`: real floating point, or complex with `holomorphic` (JAX's rules)."""
    if holomorphic:
        if dtype.kind != "c":
            raise DTypeError(
                f"{fname} with holomorphic=True requires outputs with complex dtype, but the "
                f"function returned {dtype.name}. Drop holomorphic=True for a real output.")
    elif dtype.kind == "c":
        raise DTypeError(
            f"{fname} requires real-valued outputs, but the function returned {dtype.name}. "
            "For holomorphic differentiation, pass holomorphic=True; to differentiate a "
            "function that is not holomorphic, return a real value (e.g. fnp.abs(y) ** 2 or "
            "fnp.real(y)), or use ft.vjp directly with a complex cotangent.")
    elif not is_float(dtype):
        raise DTypeError(
            f"{fname} requires real-valued outputs (a float output), but the function "
            f"returned {dtype.name}, which has no derivative. Return a float quantity, or use "
            "ft.vjp directly.")


def value_and_grad(f, argnums=0, has_aux=False, holomorphic: bool = False):
    """A function returning (f(*args), gradient of f with respect to args[argnums]).

    Complex numbers follow JAX: for a real-valued f of z = x + iy the gradient is
    df/dx - i df/dy (the conjugate of the direction of steepest ascent); a complex-valued f
    needs `holomorphic=True` (complex inputs and output), and then gives f'(z).

    >>> import functrans as ft
    >>> v, g = ft.value_and_grad(lambda a: a * a * a)(3.0)
    >>> float(v), float(g)
    (27.0, 27.0)
    """
    check_callable(f, "grad")

    @functools.wraps(f)
    def vg(*args, **kwargs):
        nums = normalize_argnums(argnums, len(args), "grad", distinct=True)
        dyn = [args[i] for i in nums]
        check_differentiable(dyn, nums, "grad", holomorphic)

        def f_dyn(*dyn_args):
            full = list(args)
            for i, a in zip(nums, dyn_args):
                full[i] = a
            return f(*full, **kwargs)

        res = vjp(f_dyn, *dyn, has_aux=has_aux)
        out, f_vjp = res[0], res[1]
        out_leaves, out_tree = tree_flatten(out)
        if len(out_leaves) != 1 or get_aval(as_value(out_leaves[0], "grad")).shape != ():
            shapes = [get_aval(as_value(o, "grad")).str_short() for o in out_leaves]
            raise TypeError(
                f"grad requires a function with a scalar output, but it returned "
                f"{shapes[0] if len(shapes) == 1 else shapes}. Reduce it to a scalar (e.g. "
                "fnp.sum), or use ft.vjp for vector-Jacobian products or ft.jacrev for the "
                "full Jacobian.")
        y = out_leaves[0]
        dtype = get_aval(as_value(y, "grad")).dtype
        check_output_dtype(dtype, "grad", holomorphic)
        g = f_vjp(tree_unflatten(out_tree, [np.ones((), dtype)]))
        g = g[0] if isinstance(argnums, int) else tuple(g)
        return ((out, res[2]), g) if has_aux else (out, g)

    return vg


def grad(f, argnums=0, has_aux=False, holomorphic: bool = False):
    """The gradient of scalar-valued `f` with respect to args[argnums]; nest for higher orders.
    `holomorphic=True` differentiates a complex-valued holomorphic f of complex inputs, giving
    f'(z); a real-valued f of complex z gets df/dx - i df/dy, as in JAX.

    >>> import functrans as ft
    >>> float(ft.grad(ft.grad(lambda a: a * a * a))(3.0))
    18.0
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    @functools.wraps(f)
    def g(*args, **kwargs):
        res, grads = vg(*args, **kwargs)
        return (grads, res[1]) if has_aux else grads

    return g
