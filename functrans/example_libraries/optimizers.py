"""jax.example_libraries.optimizers: optimisers as `(init_fun, update_fun, get_params)` triples.

`init_fun(params) -> opt_state`; `update_fun(step, grads, opt_state) -> opt_state`;
`get_params(opt_state) -> params`. Each optimiser is written for one array and lifted to
pytrees of parameters by the `optimizer` decorator; the state is an `OptimizerState` pytree,
so it passes through jit. Formulas, argument names and defaults are JAX's (for new code, the
optax-shaped `functrans.optimizers` is the fuller library).

>>> import numpy as np
>>> from functrans.example_libraries import optimizers
>>> opt_init, opt_update, get_params = optimizers.sgd(0.1)
>>> state = opt_init({"w": np.array([1.0, 2.0])})
>>> get_params(opt_update(0, {"w": np.array([1.0, -1.0])}, state))["w"].tolist()
[0.9, 2.1]
"""

from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import numpy as np

import functrans.numpy as fnp
from functrans.core.ownership import unaliased
from functrans.errors import ArgumentError, ArgumentTypeError
from functrans.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

__all__ = ["OptimizerState", "Optimizer", "optimizer", "sgd", "momentum", "nesterov", "adagrad",
           "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay", "piecewise_constant",
           "make_schedule", "l2_norm", "clip_grads", "JoinPoint", "unpack_optimizer_state",
           "pack_optimizer_state"]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
OptimizerState.__doc__ = """The state of a pytree optimiser: the flat per-leaf states (its
only pytree child) and the structures that unflatten them (static)."""
register_pytree_node(
    OptimizerState, lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]))

Schedule = Callable[[Any], Any]


class Optimizer(NamedTuple):
    """The `(init_fn, update_fn, params_fn)` triple an optimiser returns."""

    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def _unzip2(pairs):
    """Tuples, as JAX's unzip2 gives: the structures become hashable static data."""
    pairs = list(pairs)
    return tuple(a for a, _ in pairs), tuple(b for _, b in pairs)


def optimizer(opt_maker: Callable) -> Callable[..., Optimizer]:
    """Lifts an optimiser written for one array (its init, update, get_params) to pytrees:
    each leaf of the parameters gets its own state, packed into an OptimizerState."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            states_flat, subtrees = _unzip2(map(tree_flatten, initial_states))
            return OptimizerState(_own(states_flat, x0_flat), tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise ArgumentTypeError(
                    "optimizer update function was passed a gradient tree that did not match "
                    f"the parameter tree structure with which it was initialized: parameter "
                    f"tree {tree} and grad tree {tree2}.")
            states = map(tree_unflatten, subtrees, states_flat)
            new_states = [update(i, g, s) for g, s in zip(grad_flat, states)]
            new_states_flat, subtrees2 = _unzip2(map(tree_flatten, new_states))
            for subtree, subtree2 in zip(subtrees, subtrees2):
                if subtree2 != subtree:
                    raise ArgumentTypeError(
                        "optimizer update function produced an output structure that did not "
                        f"match its input structure: input {subtree} and output {subtree2}.")
            return OptimizerState(_own(new_states_flat, (grad_flat, states_flat)), tree,
                                  subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = map(tree_unflatten, subtrees, states_flat)
            params = tree_unflatten(tree, [get_params(s) for s in states])
            leaves, treedef = tree_flatten(params)
            return tree_unflatten(treedef, unaliased(leaves, tree_flatten(states_flat)[0]))

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _own(states_flat, sources):
    """The per-leaf states with no array shared with `sources` (the parameters or gradients
    passed in: numpy arrays can be written into afterwards, JAX's cannot)."""
    leaves, treedef = tree_flatten(states_flat)
    return tree_unflatten(treedef, unaliased(leaves, tree_flatten(sources)[0]))


def _zeros_like(x):
    return fnp.zeros_like(x)


@optimizer
def sgd(step_size):
    """Gradient descent: x - step_size(i) * g."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return fnp.subtract(x, fnp.multiply(step_size(i), g))

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: Schedule, mass: float):
    """Heavy-ball momentum: v = mass * v + g; x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, _zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = fnp.add(fnp.multiply(mass, velocity), g)
        return fnp.subtract(x, fnp.multiply(step_size(i), velocity)), velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size: Schedule, mass: float):
    """Nesterov momentum: v = mass * v + g; x - step_size(i) * (mass * v + g)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, _zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = fnp.add(fnp.multiply(mass, velocity), g)
        step = fnp.add(fnp.multiply(mass, velocity), g)
        return fnp.subtract(x, fnp.multiply(step_size(i), step)), velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum (Duchi et al.), as JAX's example library has it."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, _zeros_like(x0), _zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = fnp.add(g_sq, fnp.square(g))
        g_sq_inv_sqrt = fnp.where(fnp.greater(g_sq, 0), fnp.divide(1.0, fnp.sqrt(g_sq)), 0.0)
        m = fnp.add(fnp.multiply(1.0 - momentum, fnp.multiply(g, g_sq_inv_sqrt)),
                    fnp.multiply(momentum, m))
        return fnp.subtract(x, fnp.multiply(step_size(i), m)), g_sq, m

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: x - step_size(i) * g / sqrt(avg_sq_grad + eps)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, _zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = fnp.add(fnp.multiply(avg_sq_grad, gamma),
                              fnp.multiply(fnp.square(g), 1.0 - gamma))
        x = fnp.subtract(x, fnp.divide(fnp.multiply(step_size(i), g),
                                       fnp.sqrt(fnp.add(avg_sq_grad, eps))))
        return x, avg_sq_grad

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the rescaled step."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, _zeros_like(x0), _zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = fnp.add(fnp.multiply(avg_sq_grad, gamma),
                              fnp.multiply(fnp.square(g), 1.0 - gamma))
        mom = fnp.add(fnp.multiply(momentum, mom),
                      fnp.divide(fnp.multiply(step_size(i), g),
                                 fnp.sqrt(fnp.add(avg_sq_grad, eps))))
        return fnp.subtract(x, mom), avg_sq_grad, mom

    def get_params(state):
        return state[0]

    return init, update, get_params


def _power_of_step(b, like, i):
    """b ** (i + 1) with b in the moment's dtype, as JAX's example library computes it."""
    return fnp.power(fnp.asarray(b, dtype=fnp.result_type(like)), fnp.add(i, 1))


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba), bias-corrected, step i counted from 0."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, _zeros_like(x0), _zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = fnp.add(fnp.multiply(1 - b1, g), fnp.multiply(b1, m))
        v = fnp.add(fnp.multiply(1 - b2, fnp.square(g)), fnp.multiply(b2, v))
        mhat = fnp.divide(m, fnp.subtract(1, _power_of_step(b1, m, i)))
        vhat = fnp.divide(v, fnp.subtract(1, _power_of_step(b2, m, i)))
        x = fnp.subtract(x, fnp.divide(fnp.multiply(step_size(i), mhat),
                                       fnp.add(fnp.sqrt(vhat), eps)))
        return x, m, v

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam's infinity-norm variant."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, _zeros_like(x0), _zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = fnp.add(fnp.multiply(1 - b1, g), fnp.multiply(b1, m))
        u = fnp.maximum(fnp.multiply(b2, u), fnp.abs(g))
        rate = fnp.divide(step_size(i), fnp.subtract(1, _power_of_step(b1, m, i)))
        x = fnp.subtract(x, fnp.divide(fnp.multiply(rate, m), fnp.add(u, eps)))
        return x, m, u

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al.), memory-efficient adaptive steps with one accumulator per axis."""
    step_size = make_schedule(step_size)

    def splice(seq, i, x):
        lst = list(seq)
        lst[i:i + 1] = x
        return lst

    def broadcast_into(ndim, x, axis):
        idx = splice([None] * ndim, axis, [slice(None)])
        return x[tuple(idx)]

    def init(x0):
        x_shape = np.shape(x0)
        x0 = fnp.atleast_1d(x0)
        vs = [fnp.zeros(sz, dtype=fnp.result_type(x0)) for sz in np.shape(x0)]
        return x0, _zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        vs = [broadcast_into(fnp.ndim(g), v, ax) for ax, v in enumerate(vs)]
        accum = fnp.add(functools.reduce(fnp.minimum, vs), fnp.square(g))
        accum_inv_sqrt = fnp.where(fnp.greater(accum, 0), fnp.divide(1.0, fnp.sqrt(accum)), 0)
        m = fnp.add(fnp.multiply(1.0 - momentum, fnp.multiply(g, accum_inv_sqrt)),
                    fnp.multiply(momentum, m))
        x = fnp.subtract(x, fnp.multiply(step_size(i), m))
        vs = [fnp.max(accum, axis=tuple(splice(range(fnp.ndim(x)), j, [])))
              for j in range(fnp.ndim(x))]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return fnp.reshape(x, tuple(int(d) for d in x_shape))

    return init, update, get_params


# --- learning-rate schedules ------------------------------------------------------------------

def constant(step_size) -> Schedule:
    """The same step size at every step."""
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps)."""
    return lambda i: fnp.multiply(step_size, fnp.power(decay_rate, fnp.divide(i, decay_steps)))


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps), the ratio floored with staircase."""
    if staircase:
        return lambda i: fnp.divide(step_size, fnp.add(1, fnp.multiply(
            decay_rate, fnp.floor(fnp.divide(i, decay_steps)))))
    return lambda i: fnp.divide(step_size, fnp.add(1, fnp.divide(fnp.multiply(decay_rate, i),
                                                                 decay_steps)))


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """From step_size to final_step_size over decay_steps as (1 - i / decay_steps) ** power."""
    def schedule(step_num):
        step_num = fnp.minimum(step_num, decay_steps)
        step_mult = fnp.power(fnp.subtract(1, fnp.divide(step_num, decay_steps)), power)
        return fnp.add(fnp.multiply(step_mult, step_size - final_step_size), final_step_size)
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """values[k] where k counts the boundaries strictly below i (JAX's example library: a step
    equal to a boundary still takes the earlier value)."""
    boundaries = np.array(boundaries)
    values = np.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ArgumentError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ArgumentError("boundaries length must be one shorter than values length")

    def schedule(i):
        return fnp.take(values, fnp.sum(fnp.greater(i, boundaries)))

    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A schedule as given, or a constant one for a scalar."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise ArgumentError(f"make_schedule: a step size is a scalar or a function of the step, "
                        f"got a {type(scalar_or_schedule).__name__} of shape "
                        f"{np.shape(scalar_or_schedule)}.")


# --- utilities --------------------------------------------------------------------------------

def l2_norm(tree):
    """The 2-norm of all the leaves of a pytree together."""
    leaves, _ = tree_flatten(tree)
    return fnp.sqrt(sum(fnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scales the gradients down to a global 2-norm of at most max_norm."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: fnp.where(fnp.less(norm, max_norm), g,
                                        fnp.multiply(g, fnp.divide(max_norm, norm))), grad_tree)


class JoinPoint:
    """Marks where a per-leaf optimiser state joins the parameter tree (for serialisation)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as a tree of JoinPoints shaped like the parameters (picklable)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(tree_unflatten, subtree_defs, states_flat)
    return tree_unflatten(tree_def, [JoinPoint(subtree) for subtree in subtrees])


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise ArgumentError("pack_optimizer_state: expected the tree unpack_optimizer_state "
                            "returned, whose every leaf is a JoinPoint.")
    subtrees = [s.subtree for s in sentinels]
    states_flat, subtree_defs = _unzip2(map(tree_flatten, subtrees))
    return OptimizerState(states_flat, tree_def, subtree_defs)
