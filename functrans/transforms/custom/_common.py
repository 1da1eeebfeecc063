"""What custom_jvp and custom_vjp share: their errors, the staging of the decorated function
and of rules that close over tracers, and the plumbing of their call primitives."""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, NamedTuple

import numpy as np

from functrans.core.avals import get_aval, is_float
from functrans.core.eval import eval_jaxpr
from functrans.core.ownership import unaliased_tree
from functrans.core.pytree_fun import as_value
from functrans.core.staging import trace_to_jaxpr
from functrans.core.symbolic import Zero
from functrans.core.trace import Tracer, current_level
from functrans.errors import FunctransError, ShapeError
from functrans.primitives.shape_ops import convert_element_type
from functrans.primitives.layout import moveaxis
from functrans.transforms.higher_order import instantiate_zeros, level
from functrans.transforms.toolkit import batch_size, split_list, stage
from functrans.transforms.jvp import JVPTracer
from functrans.tree_util import tree_flatten, tree_unflatten



class CustomVJPForwardModeError(FunctransError, TypeError):
    """Forward-mode differentiation reached a custom_vjp function."""


class CustomVJPClosureError(FunctransError, TypeError):
    """A custom_vjp function closes over a value that is being differentiated."""


class CustomRuleClosureError(FunctransError, TypeError):
    """A custom rule returned a traced value of a transform it was not given."""


_local = threading.local()


def _staging_rules() -> set:
    """ids of the custom functions whose rules this thread is staging right now."""
    ids = getattr(_local, "ids", None)
    if ids is None:
        ids = _local.ids = set()
    return ids


def _max_level(xs) -> int:
    return max([level(x) for x in xs] + [0])


def _check_rule_outputs(outs, inputs, what, name):
    """A rule's outputs live no higher than its inputs; a higher one comes from a closure."""
    if _max_level(outs) > _max_level(inputs):
        raise CustomRuleClosureError(
            f"{name}: {what} returned a value traced by an enclosing transform that it was not "
            "given: it closes over a traced value (captured from an enclosing function) in a "
            "way this combination of transforms cannot follow. Pass that value to the "
            "function as an explicit argument instead.")


def _forward_mode_error(*_, **__):
    raise CustomVJPForwardModeError(
        "can't apply forward-mode differentiation (jvp, jacfwd, linearize, hessian) to a "
        "custom_vjp function: it defines only a reverse-mode rule. Use reverse mode (grad, vjp, "
        "jacrev), or define the function with custom_jvp, whose rule serves both modes.")


# --- shared plumbing -------------------------------------------------------------------------

def _resolve_args(fun, args, kwargs, name):
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(f"{name}: keyword-only arguments {sorted(bound.kwargs)} are not "
                        "supported by custom derivative rules; make them positional.")
    return tuple(bound.args)


def _split_nondiff(args, nondiff_argnums, name):
    """(nondiff values, diff args, rebuild(diff args) -> full argument tuple)."""
    nums = sorted({a % len(args) for a in nondiff_argnums}) if args else []
    for a in nondiff_argnums:
        if not -len(args) <= a < len(args):
            raise ValueError(f"{name}: nondiff_argnums entry {a} is out of range for a call "
                             f"with {len(args)} positional arguments.")
    for i in nums:
        if any(isinstance(x, Tracer) for x in tree_flatten(args[i])[0]):
            raise TypeError(
                f"{name}: argument {i} is listed in nondiff_argnums but holds a traced value. "
                "nondiff_argnums are for static values (functions, ints, config); pass arrays as "
                "ordinary arguments (a zero tangent / None cotangent leaves them undifferentiated"
                ").")
    nondiff = [args[i] for i in nums]
    diff = [a for i, a in enumerate(args) if i not in nums]

    def rebuild(diff_args):
        it = iter(diff_args)
        return tuple(args[i] if i in nums else next(it) for i in range(len(args)))

    return nondiff, diff, rebuild


def _stage_fun(fun, rebuild, leaves, in_tree, name):
    """Stage fun on the avals of `leaves`: (const-free program, consts, output tree)."""
    box = []

    def fun_flat(*xs):
        out = fun(*rebuild(tree_unflatten(in_tree, xs)))
        out_leaves, out_tree = tree_flatten(out)
        box.append(out_tree)
        return [as_value(o, name) for o in out_leaves]

    prog, consts = stage(fun_flat, [get_aval(x) for x in leaves], name)
    return prog, consts, box[-1]


def _conform(x, aval, what, name):
    """`x` typed like `aval` (float dtypes converted), or an error naming both shapes."""
    x = as_value(x, name)
    xa = get_aval(x)
    if xa.shape != aval.shape:
        raise ShapeError(f"{name}: {what} has shape {xa.shape} but must have shape {aval.shape} "
                         f"(the shape of the value it pairs with).")
    if xa.dtype != aval.dtype:
        if not (is_float(xa.dtype) or np.issubdtype(xa.dtype, np.integer)) or \
                not is_float(aval.dtype):
            raise TypeError(f"{name}: {what} has dtype {xa.dtype.name} but must have dtype "
                            f"{aval.dtype.name}.")
        x = convert_element_type(x, aval.dtype)
    return x


def _closure_converted(fn_flat, args, const_primals, name):
    """fn_flat(*args), staged first so that every closed-over tracer whose primal chain reaches
    one of `const_primals` (the primals of the call's closed-over operands, as this trace sees
    them) can be replaced by it: a Python rule closing over tracers of this very trace (or of
    one above it) then computes on the values this trace works with."""
    closed = trace_to_jaxpr(lambda *xs: [as_value(o, name) for o in fn_flat(*xs)],
                            [get_aval(a) for a in args], name=name)
    return eval_jaxpr(closed.jaxpr, [_substitute(c, const_primals) for c in closed.consts],
                      *args)


def _substitute(c, const_primals):
    x = c
    while isinstance(x, JVPTracer):
        x = x.primal
        for p in const_primals:
            if x is p:
                return p
    return c


def _split_ops(xs, *sizes):
    """`xs` cut into lists of lengths `sizes`, then the rest."""
    return split_list(xs, [*sizes, len(xs) - sum(sizes)])


def _batch_front(vals, dims):
    """Batched operands with the batch axis first; unbatched ones stay as they are."""
    size = batch_size(vals, dims)
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    return vals, [None if d is None else 0 for d in dims], size


class _StagedCall(NamedTuple):
    """A call of a custom function staged for the active transforms (see `_stage_call`)."""

    nondiff: list
    rebuild: Any
    leaves: list
    in_tree: Any
    prog: Any
    consts: list
    out_tree: Any


class _CustomFunction:
    """What custom_jvp and custom_vjp share: the function, its nondiff_argnums, the name its
    errors use, and the staging of a call."""

    kind = "custom"

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.symbolic_zeros = False

    @property
    def _name(self):
        return f"{self.kind} function {getattr(self.fun, '__name__', repr(self.fun))!r}"

    def _stage_call(self, args, kwargs):
        """The function's result when no transform is active (nothing to differentiate);
        otherwise the call staged: a `_StagedCall`."""
        name = self._name
        args = _resolve_args(self.fun, args, kwargs, name)
        nondiff, diff, rebuild = _split_nondiff(args, self.nondiff_argnums, name)
        leaves, in_tree = tree_flatten(tuple(diff))
        leaves = [as_value(x, name) for x in leaves]
        if current_level() == 0:
            return unaliased_tree(self.fun(*args), args)
        prog, consts, out_tree = _stage_fun(self.fun, rebuild, leaves, in_tree, name)
        return _StagedCall(nondiff, rebuild, leaves, in_tree, prog, consts, out_tree)


class SymbolicZero:
    """A tangent known to be zero, as a custom_jvp rule defined with symbolic_zeros=True sees
    it (JAX's jax.custom_derivatives.SymbolicZero): shape and dtype of the zero, no array. A
    rule may return one for an output whose tangent is zero."""

    def __init__(self, aval):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def __bool__(self):
        return False

    def instantiate(self):
        """The zero as an array."""
        return instantiate_zeros([Zero(self.aval)])[0]

    @staticmethod
    def from_primal_value(val):
        return SymbolicZero(get_aval(as_value(val, "SymbolicZero")))

    def __repr__(self):
        return f"SymbolicZero({self.aval})"
