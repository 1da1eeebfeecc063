"""functrans.example_libraries against jax.example_libraries: stax networks initialised from
the same keys (the same weights), applied and differentiated; the optimiser triples trained
step by step under jit; compared with the values recorded from JAX in float64
(jax_fixtures.json) and with live JAX when it is installed."""

import json
import pickle

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import random
from functrans.errors import ArgumentError
from functrans.example_libraries import optimizers, stax
from functrans.tree_util import tree_leaves

from example_libraries_programs import (CLIP, CLIPPED, FIXTURES, KEYS, OPTIMIZERS,
                                        RECORDED_STEPS, STAX, flat, stax_record, train)

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)

# initialisers: the normal samplers' ulp bound (functrans.random); training: 30 steps of both
RTOL, ATOL = 1e-12, 1e-13
# 30 training steps, the gradients from two engines (ulps apart) each step
RTOL_TRAIN, ATOL_TRAIN = 1e-11, 1e-12
# convolutions sum their products in another order than XLA's (whose order depends on the CPU),
# and batch norm divides by small deviations: outputs and gradients of the convolutional
# networks agree to this (1.8e-10 seen against live JAX on an AVX2 machine)
RTOL_CONV = 1e-9
CONV = {"convnet", "conv_layouts"}


def assert_leaves_close(got, want, what, rtol=RTOL, atol=ATOL):
    assert len(got) == len(want), f"{what}: {len(got)} leaves, JAX has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{what}, leaf {i}")


def ours_stax(name, key):
    return stax_record(stax, random, fnp, ft.grad, tree_leaves, name, key)


def assert_stax_equal(got, want, what, conv):
    assert got["out_shape"] == want["out_shape"], what
    assert_leaves_close(got["params"], want["params"], f"{what} params")
    rtol = RTOL_CONV if conv else RTOL
    np.testing.assert_allclose(got["out"], want["out"], rtol=rtol, atol=ATOL,
                               err_msg=f"{what} output")
    assert_leaves_close(got["grad"], want["grad"], f"{what} gradient", rtol, atol=1e-12)


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("name", sorted(STAX))
def test_stax_network_equals_recorded_jax(name, key):
    assert_stax_equal(ours_stax(name, key), RECORDED["stax"][name][str(key)], f"{name} {key}",
                      name in CONV)


@pytest.mark.parametrize("name", sorted(STAX))
def test_stax_network_equals_live_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.example_libraries import stax as jax_stax

    key = 7  # not among the recorded keys
    want = stax_record(jax_stax, jax.random, jnp, jax.grad, jax.tree.leaves, name, key)
    assert_stax_equal(ours_stax(name, key), want, f"{name} {key}", name in CONV)


def _ours_train(name, clip=None):
    return train(stax, optimizers, random, fnp, ft.grad, ft.jit, name, clip)


CASES = sorted(OPTIMIZERS) + [f"{n}_clip_grads" for n in CLIPPED]


def _case(case):
    name, clip = (case[:-len("_clip_grads")], CLIP) if case.endswith("_clip_grads") else \
        (case, None)
    return name, clip


@pytest.mark.parametrize("case", CASES)
def test_optimizer_equals_recorded_jax(case):
    history, _ = _ours_train(*_case(case))
    for k in RECORDED_STEPS:
        assert_leaves_close(flat(history[k - 1], tree_leaves),
                            RECORDED["optimizers"][case][str(k)], f"{case} after step {k}",
                            RTOL_TRAIN, ATOL_TRAIN)


@pytest.mark.parametrize("case", CASES)
def test_optimizer_equals_live_jax_at_every_step(case):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.example_libraries import optimizers as jax_optimizers
    from jax.example_libraries import stax as jax_stax

    name, clip = _case(case)
    want, _ = train(jax_stax, jax_optimizers, jax.random, jnp, jax.grad, jax.jit, name, clip)
    got, _ = _ours_train(name, clip)
    for k, (g, w) in enumerate(zip(got, want), 1):
        assert_leaves_close(flat(g, tree_leaves), flat(w, jax.tree.leaves), f"{case} step {k}",
                            RTOL_TRAIN, ATOL_TRAIN)


def test_fixtures_cover_every_program():
    assert set(RECORDED["stax"]) == set(STAX)
    assert set(RECORDED["optimizers"]) == set(CASES)


# --- semantics beside the recorded values ------------------------------------------------------

def test_schedules_closed_forms_eagerly_and_under_jit():
    cases = {
        "constant": (optimizers.constant(0.3), lambda i: 0.3),
        "exponential_decay": (optimizers.exponential_decay(1.0, 10, 0.5),
                              lambda i: 0.5 ** (i / 10)),
        "inverse_time_decay": (optimizers.inverse_time_decay(1.0, 4, 0.5),
                               lambda i: 1 / (1 + 0.5 * i / 4)),
        "inverse_time_decay_staircase": (optimizers.inverse_time_decay(1.0, 4, 0.5, True),
                                         lambda i: 1 / (1 + 0.5 * (i // 4))),
        "polynomial_decay": (optimizers.polynomial_decay(1.0, 10, 0.1, 2.0),
                             lambda i: (1 - min(i, 10) / 10) ** 2 * 0.9 + 0.1),
        # JAX's example library: a step equal to a boundary still takes the earlier value
        "piecewise_constant": (optimizers.piecewise_constant([3, 6], [1.0, 0.5, 0.1]),
                               lambda i: 1.0 if i <= 3 else 0.5 if i <= 6 else 0.1),
    }
    for name, (schedule, closed) in cases.items():
        jitted = ft.jit(schedule)
        for i in (0, 1, 3, 4, 6, 7, 10, 25):
            np.testing.assert_allclose(schedule(i), closed(i), rtol=1e-14, err_msg=name)
            np.testing.assert_allclose(jitted(i), closed(i), rtol=1e-14, err_msg=name)


def test_make_schedule_and_its_errors():
    assert optimizers.make_schedule(0.5)(100) == 0.5
    f = lambda i: 1.0 / (i + 1)  # noqa: E731
    assert optimizers.make_schedule(f) is f
    with pytest.raises(ArgumentError, match="scalar or a function"):
        optimizers.make_schedule(np.ones(2))
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [1.0, 2.0])


def test_l2_norm_and_clip_grads_closed_forms():
    tree = {"a": np.array([3.0]), "b": [np.array([[4.0]])]}
    assert float(optimizers.l2_norm(tree)) == 5.0
    clipped = optimizers.clip_grads(tree, 1.0)
    np.testing.assert_allclose(clipped["a"], [0.6], rtol=1e-15)
    np.testing.assert_allclose(clipped["b"][0], [[0.8]], rtol=1e-15)
    kept = optimizers.clip_grads(tree, 10.0)
    np.testing.assert_array_equal(kept["a"], tree["a"])


def test_optimizer_state_is_a_pytree_that_packs_and_pickles():
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    params = {"w": np.ones((2, 2)), "b": [np.zeros(2)]}
    state = opt_init(params)
    assert isinstance(state, optimizers.OptimizerState)
    assert len(tree_leaves(state)) == 4  # (x, velocity) for each of the two leaves
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    restored = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert restored.tree_def == state.tree_def
    for a, b in zip(tree_leaves(restored), tree_leaves(state)):
        np.testing.assert_array_equal(a, b)
    grads = {"w": np.ones((2, 2)), "b": [np.ones(2)]}
    stepped = ft.jit(opt_update)(0, grads, restored)
    np.testing.assert_allclose(get_params(stepped)["w"], 0.9 * np.ones((2, 2)), rtol=1e-15)
    with pytest.raises(ArgumentError, match="every leaf is a JoinPoint"):
        optimizers.pack_optimizer_state({"w": 1.0})


def test_update_with_a_gradient_tree_of_another_structure_is_an_error():
    opt_init, opt_update, _ = optimizers.adam(0.1)
    state = opt_init({"w": np.ones(2)})
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        opt_update(0, {"v": np.ones(2)}, state)


def test_optimizer_decorator_lifts_a_one_array_optimizer():
    @optimizers.optimizer
    def halve():
        return (lambda x0: (x0, 0), lambda i, g, s: (s[0] / 2, s[1] + 1), lambda s: s[0])

    opt_init, opt_update, get_params = halve()
    state = opt_update(0, [np.ones(1), np.ones(2)], opt_init([np.ones(1), 4 * np.ones(2)]))
    assert [p.tolist() for p in get_params(state)] == [[0.5], [2.0, 2.0]]


def test_dropout_keeps_with_probability_rate_and_needs_a_key():
    init_fun, apply_fun = stax.Dropout(0.75)
    x = np.ones((200, 50))
    out = apply_fun((), x, rng=random.PRNGKey(3))
    kept = out != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(out[kept], 1 / 0.75, rtol=1e-15)
    with pytest.raises(ValueError, match="PRNG key"):
        apply_fun((), x)
    _, test_apply = stax.Dropout(0.75, mode="test")
    np.testing.assert_array_equal(test_apply((), x, rng=random.PRNGKey(3)), x)


def test_dropout_equals_live_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax.example_libraries import stax as jax_stax

    x = np.arange(1.0, 25.0).reshape(4, 6)
    for s, r in ((stax, random), (jax_stax, jax.random)):
        init_fun, apply_fun = s.serial(s.Dense(6), s.Dropout(0.6), s.Tanh, s.Dropout(0.5))
        _, params = init_fun(r.PRNGKey(0), (-1, 6))
        out = np.asarray(apply_fun(params, x, rng=r.PRNGKey(11)))
        if s is stax:
            ours = out
    np.testing.assert_allclose(ours, out, rtol=1e-14)
    assert (ours == 0).any()


def test_stax_training_step_runs_under_jit_grad_and_vmap():
    init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Tanh, stax.Dense(1))
    _, params = init_fun(random.PRNGKey(0), (-1, 2))
    x = np.linspace(-1, 1, 10).reshape(5, 2)
    per_example = ft.vmap(lambda xi: apply_fun(params, xi[None])[0, 0])(x)
    np.testing.assert_allclose(per_example, apply_fun(params, x)[:, 0], rtol=1e-14)
    loss = lambda p: fnp.sum(apply_fun(p, x) ** 2)  # noqa: E731
    g_eager, g_jit = ft.grad(loss)(params), ft.jit(ft.grad(loss))(params)
    for a, b in zip(tree_leaves(g_eager), tree_leaves(g_jit)):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_states_params_and_layer_outputs_are_the_callers_own():
    from functrans.test_util import check_owned
    params = {"w": np.ones((2, 2)), "b": np.ones(2)}
    grads = {"w": np.ones((2, 2)), "b": np.ones(2)}
    for opt_init, opt_update, get_params in (optimizers.sgd(0.1), optimizers.adam(0.1),
                                             optimizers.sm3(0.1)):
        # (check_owned writes 7 into what it checks: each check gets a fresh state)
        check_owned(opt_init(params), [params])
        state = opt_init(params)
        check_owned(get_params(state), [state, params])
        check_owned(opt_update(0, grads, opt_init(params)), [grads, params])
        new = opt_update(0, grads, state)
        check_owned(get_params(new), [new])
    _, apply_fun = stax.serial(stax.FanOut(2), stax.parallel(stax.Identity, stax.Dropout(
        0.5, mode="test")))
    x = np.ones(3)
    check_owned(apply_fun([(), ((), ())], x, rng=random.PRNGKey(0)), [x])
