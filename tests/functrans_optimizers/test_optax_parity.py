"""functrans.optimizers against optax: every optimiser trained 50 steps on a small network,
eagerly and inside a jitted step, and every schedule at counts 0..60 (Python ints, int32
arrays, traced int32 counts), compared with the values recorded from optax in float64
(optax_fixtures.json) and with live optax when it is installed."""

import json

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import optimizers as optim
from functrans.tree_util import tree_leaves

from optax_programs import (COUNTS, FIXTURES, OPTIMIZERS, PARAMS0, RECORDED_STEPS, SCHEDULES,
                            flat, train)

with open(FIXTURES) as _f:
    RECORDED = json.load(_f)

# the gradients come from two engines (ulps apart); 50 steps of Adam-like rescaling keep the
# parameters within this
RTOL, ATOL = 1e-11, 1e-12
# float32 schedule values (on an int32 count): XLA fuses a*b+c into one rounding and computes
# a batched float32 pow its own way, so a value may sit some float32 ulps from numpy's (XLA's
# batched and unbatched pow differ by as much)
RTOL_INT32 = 2e-6
# the optimisers whose learning rate (or weight decay) optax computes in float32 on its int32
# counter: a rate a few float32 ulps off moves each step by as much, relatively
FLOAT32_SCHEDULED = {"sgd_exponential_decay", "adam_warmup_cosine", "adamw_scheduled_decay",
                     "chain_scale_by_adam_schedule"}
RTOL_FLOAT32_SCHEDULED = 1e-5
# L-BFGS's curvature pairs are differences of nearby gradients: a rounding difference grows
# step by step (to about 1e-10 after 50 steps of the memory-3 chain)
LBFGS = {"lbfgs_without_linesearch", "chain_scale_by_lbfgs_memory_3"}
RTOL_LBFGS, ATOL_LBFGS = 1e-9, 1e-10


def ours(name, jit):
    return train(optim, fnp, ft.grad, ft.jit if jit else (lambda f: f), OPTIMIZERS[name](optim),
                 PARAMS0)


def assert_leaves_close(got, want, what, rtol=RTOL):
    assert len(got) == len(want), f"{what}: {len(got)} leaves, optax has {len(want)}"
    atol = ATOL_LBFGS if rtol == RTOL_LBFGS else ATOL
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{what}, leaf {i}")


def rtol_of(name):
    return RTOL_FLOAT32_SCHEDULED if name in FLOAT32_SCHEDULED else \
        RTOL_LBFGS if name in LBFGS else RTOL


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_equals_recorded_optax(name, jit):
    history, state = ours(name, jit)
    rec = RECORDED["optimizers"][name]
    for k in RECORDED_STEPS:
        assert_leaves_close(flat(history[k - 1], tree_leaves), rec["params"][str(k)],
                            f"{name} params after step {k}", rtol_of(name))
    assert_leaves_close(flat(state, tree_leaves), rec["state"], f"{name} final state",
                        rtol_of(name))


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_equals_live_optax_at_every_step(name):
    pytest.importorskip("optax")
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import optax

    want, want_state = train(optax, jnp, jax.grad, jax.jit, OPTIMIZERS[name](optax), PARAMS0)
    got, state = ours(name, jit=True)
    for k, (g, w) in enumerate(zip(got, want), 1):
        assert_leaves_close(flat(g, tree_leaves), flat(w, jax.tree.leaves), f"{name} step {k}",
                            rtol_of(name))
    assert_leaves_close(flat(state, tree_leaves), flat(want_state, jax.tree.leaves), name,
                        rtol_of(name))
    # the same state layout: the same tuple/NamedTuple nesting and type names
    assert _layout(state) == _layout(want_state)


def _layout(state):
    if isinstance(state, tuple):
        return (type(state).__name__, tuple(_layout(s) for s in state))
    return "leaves" if not isinstance(state, dict) else {k: _layout(v) for k, v in state.items()}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_equals_recorded_optax(name):
    schedule = SCHEDULES[name](optim)
    rec = RECORDED["schedules"][name]
    jitted = ft.jit(schedule)
    for k, w, w32 in zip(COUNTS, rec["python"], rec["int32"]):
        v = schedule(k)
        assert isinstance(v, float), f"{name}({k}) is a {type(v).__name__}, not a float"
        np.testing.assert_allclose(v, w, rtol=1e-14, err_msg=f"{name} at {k}")
        # optax's int32 step counter: float32 arithmetic where JAX's promotion gives it
        for how, got in (("eager", schedule(np.int32(k))), ("jit", jitted(np.int32(k)))):
            np.testing.assert_allclose(got, w32, rtol=RTOL_INT32, err_msg=f"{name} {how} int32 {k}")
            assert str(fnp.result_type(got)) == rec["int32_dtype"], (name, how)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_equals_live_optax(name):
    pytest.importorskip("optax")
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import optax

    want = jax.vmap(SCHEDULES[name](optax))(jnp.arange(61, dtype=jnp.int32))
    got = ft.vmap(SCHEDULES[name](optim))(np.arange(61, dtype=np.int32))
    np.testing.assert_allclose(got, np.asarray(want), rtol=RTOL_INT32)
    assert fnp.result_type(got) == want.dtype


def test_fixtures_cover_every_program():
    assert set(RECORDED["optimizers"]) == set(OPTIMIZERS)
    assert set(RECORDED["schedules"]) == set(SCHEDULES)
    # the record is of a real run: the network's loss went down
    from optax_programs import loss
    first = loss(np, {k: np.array(v) for k, v in zip(("b1", "w1", "w2"), [
        np.reshape(x, s) for x, s in zip(RECORDED["optimizers"]["adam"]["params"]["50"],
                                         [(3,), (2, 3), (3,)])])})
    assert first < loss(np, PARAMS0)
