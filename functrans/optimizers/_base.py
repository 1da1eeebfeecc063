"""The gradient-transformation type, its combinators and the pytree arithmetic optimisers share,
as optax defines them: a transformation is a pair of pure functions `init(params) -> state` and
`update(updates, state, params=None) -> (updates, state)`."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import functrans.numpy as fnp
from functrans.core.ownership import unaliased
from functrans.errors import ArgumentError
from functrans.tree_util import broadcast_prefix, tree_flatten, tree_leaves, tree_map, \
    tree_unflatten

Schedule = Callable[[Any], Any]


class GradientTransformation(NamedTuple):
    """A pair of pure functions: `init(params) -> state` and `update(updates, state,
    params=None) -> (updates, state)` (optax.GradientTransformation).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.GradientTransformation(lambda p: (), lambda u, s, p=None: (u, s))
    >>> t.update(np.ones(2), t.init(np.ones(2)))[0].tolist()
    [1.0, 1.0]
    """

    init: Callable
    update: Callable


class GradientTransformationExtraArgs(GradientTransformation):
    """A GradientTransformation whose `update` also takes keyword arguments (such as `value`
    for a line search), which `chain` hands to the transformations that accept them.

    >>> from functrans import optimizers as optim
    >>> isinstance(optim.chain(optim.scale(2.0)), optim.GradientTransformationExtraArgs)
    True
    """


class EmptyState(NamedTuple):
    """The state of a transformation that keeps none (optax.EmptyState).

    >>> from functrans import optimizers as optim
    >>> optim.scale(0.5).init([1.0])
    EmptyState()
    """


def _init_empty_state(params) -> EmptyState:
    return EmptyState()


def owning(update: Callable) -> Callable:
    """`update` whose results share no memory with its arguments: for the transformations that
    hand an argument on (identity, masked leaves, a zero weight decay, L-BFGS's remembered
    parameters), since numpy arrays, unlike JAX's, can be written into afterwards."""
    def owned_update(updates, state, params=None, **extra_args):
        out = update(updates, state, params, **extra_args)
        leaves, treedef = tree_flatten(out)
        return tree_unflatten(treedef, unaliased(leaves, tree_leaves((updates, state, params))))
    return owned_update


def identity() -> GradientTransformation:
    """Hands the updates on unchanged.

    >>> from functrans import optimizers as optim
    >>> optim.identity().update([1.0], optim.EmptyState())
    ([1.0], EmptyState())
    """
    return GradientTransformation(_init_empty_state, owning(
        lambda updates, state, params=None: (updates, state)))


def with_extra_args_support(tx: GradientTransformation) -> GradientTransformationExtraArgs:
    """`tx` with an `update` that accepts (and ignores) extra keyword arguments.

    >>> from functrans import optimizers as optim
    >>> t = optim.with_extra_args_support(optim.scale(2.0))
    >>> float(t.update(1.0, t.init(1.0), None, value=3.0)[0])
    2.0
    """
    if isinstance(tx, GradientTransformationExtraArgs):
        return tx

    def update(updates, state, params=None, **extra_args):
        return tx.update(updates, state, params)

    return GradientTransformationExtraArgs(tx.init, update)


def chain(*transforms: GradientTransformation) -> GradientTransformationExtraArgs:
    """Applies the transformations one after another; the state is the tuple of their states.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.chain(optim.clip(1.0), optim.scale(-0.1))
    >>> t.update(np.array([3.0, -0.5]), t.init(np.zeros(2)))[0].tolist()
    [-0.1, 0.05]
    """
    transforms = tuple(with_extra_args_support(t) for t in transforms)

    def init(params):
        return tuple(t.init(params) for t in transforms)

    def update(updates, state, params=None, **extra_args):
        if len(state) != len(transforms):
            raise ArgumentError(f"chain: {len(transforms)} transformations but a state of "
                                f"{len(state)}; pass the state that this chain's init returned.")
        new_state = []
        for t, s in zip(transforms, state):
            updates, s = t.update(updates, s, params, **extra_args)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformationExtraArgs(init, update)


def apply_updates(params, updates):
    """params + updates, leaf by leaf, in each parameter's dtype (optax.apply_updates).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.apply_updates({"w": np.array([1.0, 2.0])}, {"w": np.array([0.5, -1.0])})
    {'w': array([1.5, 1. ])}
    """
    return tree_map(lambda p, u: fnp.astype(fnp.add(p, u), fnp.result_type(p)), params, updates)


def global_norm(updates) -> Any:
    """The 2-norm of all the leaves together, sqrt(sum of their squares) (optax.global_norm).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> float(optim.global_norm([np.array([3.0]), {"b": np.array([4.0])}]))
    5.0
    """
    return fnp.sqrt(sum_of_squares(updates))


def sum_of_squares(tree) -> Any:
    """The sum of the squares of all the leaves' elements, leaf by leaf as optax adds them."""
    total = 0
    for leaf in tree_leaves(tree):
        total = fnp.add(total, fnp.sum(fnp.square(leaf)))
    return total


# --- helpers the transformations share (as optax.tree's) -------------------------------------

COUNT_DTYPE = np.int32
_COUNT_MAX = np.iinfo(COUNT_DTYPE).max


def zero_count():
    """The step counter's start: an int32 zero, as optax keeps it."""
    return np.zeros((), COUNT_DTYPE)


def safe_increment(count):
    """count + 1, held at int32's largest value rather than wrapping round."""
    return fnp.where(fnp.less(count, _COUNT_MAX), fnp.add(count, COUNT_DTYPE(1)),
                     COUNT_DTYPE(_COUNT_MAX))


def full_like(params, value, dtype=None):
    """A tree shaped like `params` filled with `value` (in each leaf's dtype unless given)."""
    return tree_map(lambda p: fnp.full_like(p, value, dtype=dtype), params)


def update_moment(updates, moments, decay, order: int):
    """The exponential moving average of the order-th power of the updates."""
    def one(g, t):
        g_pow = g if order == 1 else fnp.multiply(g, g)
        return fnp.add(fnp.multiply(1 - decay, g_pow), fnp.multiply(decay, t))
    return tree_map(one, updates, moments)


def bias_correction(moment, decay, count):
    """moment / (1 - decay ** count): undoes the pull towards the zero start."""
    correction = fnp.subtract(1, fnp.power(decay, count))
    return tree_map(lambda t: fnp.divide(t, fnp.astype(correction, fnp.result_type(t))),
                    moment)


def cast_tree(tree, dtype):
    """Each leaf cast to `dtype` (unchanged when dtype is None)."""
    return tree if dtype is None else tree_map(lambda t: fnp.astype(t, dtype), tree)


class MaskedState(NamedTuple):
    """The state of `masked`: the inner transformation's state (optax.MaskedState).

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> optim.masked(optim.scale(2.0), {"a": True, "b": False}).init({"a": 1.0, "b": 2.0})
    MaskedState(inner_state=EmptyState())
    """

    inner_state: Any


class MaskedNode(NamedTuple):
    """Stands in for a masked-out leaf: a node with no children, which tree maps pass over.

    >>> from functrans import optimizers as optim
    >>> from functrans.tree_util import tree_leaves
    >>> tree_leaves([1.0, optim.MaskedNode()])
    [1.0]
    """


def masked(inner: GradientTransformation, mask) -> GradientTransformationExtraArgs:
    """Applies `inner` to the leaves where `mask` is True and passes the others on unchanged
    (optax.masked). `mask` is a tree of booleans shaped like (or a prefix of) the parameters,
    or a function of the parameters that returns one.

    >>> import numpy as np
    >>> from functrans import optimizers as optim
    >>> t = optim.masked(optim.scale(10.0), {"w": True, "b": False})
    >>> t.update({"w": np.ones(1), "b": np.ones(1)}, t.init({"w": 0, "b": 0}))[0]
    {'b': array([1.]), 'w': array([10.])}
    """
    inner = with_extra_args_support(inner)

    def leaf_mask(tree):
        return [bool(m) for m in broadcast_prefix(mask(tree) if callable(mask) else mask, tree)]

    def mask_out(tree, flags):
        leaves, treedef = tree_flatten(tree)
        return tree_unflatten(treedef, [x if m else MaskedNode() for x, m in zip(leaves, flags)])

    def init(params):
        return MaskedState(inner.init(mask_out(params, leaf_mask(params))))

    def update(updates, state, params=None, **extra_args):
        flags = leaf_mask(updates)
        new, inner_state = inner.update(
            mask_out(updates, flags), state.inner_state,
            None if params is None else mask_out(params, flags), **extra_args)
        new_leaves = tree_flatten(new, is_leaf=lambda x: isinstance(x, MaskedNode))[0]
        old_leaves, treedef = tree_flatten(updates)
        return (tree_unflatten(treedef, [n if m else o for n, o, m in
                                         zip(new_leaves, old_leaves, flags)]),
                MaskedState(inner_state))

    return GradientTransformationExtraArgs(init, owning(update))
