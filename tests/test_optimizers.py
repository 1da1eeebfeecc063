"""Optimisers against closed forms, PyTorch's Adam/SGD (when installed), and scipy's L-BFGS."""

import math

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import optimizers as optim
from functrans.errors import ArgumentError
from functrans.tree_util import tree_leaves


def _run(opt, params, grad_fn, steps):
    state = opt.init(params)
    for _ in range(steps):
        updates, state = opt.update(grad_fn(params), state, params)
        params = optim.apply_updates(params, updates)
    return params


def test_sgd_closed_form_on_a_quadratic():
    # f(w) = 0.5 a w^2: w_k = (1 - lr a)^k w_0
    a, lr, w0 = 3.0, 0.1, np.array([2.0, -1.0])
    w = _run(optim.sgd(lr), {"w": w0}, lambda p: {"w": a * p["w"]}, 5)["w"]
    np.testing.assert_allclose(w, (1 - lr * a) ** 5 * w0, rtol=1e-14)


def test_adam_first_step_is_the_sign_times_the_rate():
    g = np.array([3.0, -0.2, 1e-3])
    opt = optim.adam(0.01, eps=0.0)
    updates, state = opt.update([g], opt.init([np.zeros(3)]), None)
    np.testing.assert_allclose(updates[0], -0.01 * np.sign(g), rtol=1e-12)
    assert int(state[0].count) == 1  # optax's layout: (ScaleByAdamState, EmptyState)


def _torch_compare(make_ours, make_torch, steps=6):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w0 = [rng.standard_normal((3, 2)), rng.standard_normal(2)]
    target = [rng.standard_normal((3, 2)), rng.standard_normal(2)]
    grad = lambda p: [np.asarray(x) - t for x, t in zip(p, target)]  # noqa: E731
    ours = _run(make_ours(), w0, grad, steps)
    tw = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in w0]
    topt = make_torch(tw)
    for _ in range(steps):
        topt.zero_grad()
        loss = sum(0.5 * ((x - torch.tensor(t)) ** 2).sum() for x, t in zip(tw, target))
        loss.backward()
        topt.step()
    for a, b in zip(tree_leaves(ours), tw):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-12, atol=1e-14)


def test_adam_matches_pytorch():
    torch = pytest.importorskip("torch")
    _torch_compare(lambda: optim.adam(0.05, b1=0.8, b2=0.95, eps=1e-6),
                   lambda ps: torch.optim.Adam(ps, lr=0.05, betas=(0.8, 0.95), eps=1e-6))


def test_sgd_momentum_matches_pytorch():
    torch = pytest.importorskip("torch")
    _torch_compare(lambda: optim.sgd(0.1, momentum=0.9),
                   lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9))
    _torch_compare(lambda: optim.sgd(0.1, momentum=0.9, nesterov=True),
                   lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True))


def test_schedules():
    s = optim.exponential_decay(1e-3, 1000, 0.1)
    assert s(0) == pytest.approx(1e-3) and s(1000) == pytest.approx(1e-4)
    assert s(500) == pytest.approx(1e-3 * 10 ** -0.5)
    st = optim.exponential_decay(1.0, 10, 0.5, staircase=True)
    assert [st(k) for k in (0, 9, 10, 25)] == [1.0, 1.0, 0.5, 0.25]
    assert optim.exponential_decay(1.0, 1, 0.1, end_value=0.05)(5) == 0.05
    pc = optim.piecewise_constant([3, 6], [1.0, 0.5, 0.1])
    assert [pc(k) for k in (0, 2, 3, 5, 6, 100)] == [1.0, 1.0, 0.5, 0.5, 0.1, 0.1]
    cd = optim.cosine_decay(2.0, 10, alpha=0.1)
    assert cd(0) == pytest.approx(2.0) and cd(10) == pytest.approx(0.2)
    assert cd(5) == pytest.approx(2.0 * (0.9 * 0.5 + 0.1))
    # traced step counts go through functrans.numpy
    np.testing.assert_allclose(s(np.array(500.0)), 1e-3 * 10 ** -0.5, rtol=1e-12)
    np.testing.assert_allclose(pc(np.array(4)), 0.5)
    with pytest.raises(ValueError, match="one more value"):
        optim.piecewise_constant([1, 2], [1.0])


def _closed_forms():
    """(schedule, its value at step k from the formula) for every schedule in the module."""
    return {
        "constant": (optim.constant_schedule(0.3), lambda k: 0.3),
        "exponential": (optim.exponential_decay(1e-2, 7, 0.3), lambda k: 1e-2 * 0.3 ** (k / 7)),
        "staircase": (optim.exponential_decay(1e-2, 7, 0.3, staircase=True),
                      lambda k: 1e-2 * 0.3 ** (k // 7)),
        "end_value": (optim.exponential_decay(1.0, 2, 0.5, end_value=0.1),
                      lambda k: max(0.5 ** (k / 2), 0.1)),
        "piecewise": (optim.piecewise_constant([3, 6], [1.0, 0.5, 0.1]),
                      lambda k: 1.0 if k < 3 else 0.5 if k < 6 else 0.1),
        "cosine": (optim.cosine_decay(2.0, 10, alpha=0.1),
                   lambda k: 2.0 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(k, 10) / 10)) + 0.1)),
    }


@pytest.mark.parametrize("name", list(_closed_forms()))
def test_every_schedule_gives_its_closed_form_eagerly_and_inside_jit(name):
    # cosine_decay once failed inside a jitted step (Python min() on the traced count), and a
    # staircase exponential_decay silently ignored the staircase there
    schedule, closed = _closed_forms()[name]
    jitted = ft.jit(schedule)
    for k in (0, 1, 3, 5, 6, 7, 10, 13, 14, 40):
        np.testing.assert_allclose(schedule(k), closed(k), rtol=1e-13, err_msg=f"step {k}")
        np.testing.assert_allclose(jitted(k), closed(k), rtol=1e-13, err_msg=f"jit, step {k}")
        # an int32 count (optimisers' counter) divided by an int is float32, as in JAX
        np.testing.assert_allclose(jitted(np.int32(k)), closed(k), rtol=3e-7)


def test_adam_with_cosine_decay_inside_a_jitted_step_matches_eager_steps():
    opt = optim.adam(optim.cosine_decay(0.1, 4))
    grad = ft.grad(lambda p: fnp.sum(p["w"] * p["w"] * p["w"]))

    def step(params, state):
        updates, state = opt.update(grad(params), state, params)
        return optim.apply_updates(params, updates), state

    jitted = ft.jit(step)
    eager = staged = {"w": np.array([1.0, -2.0])}
    e_state = j_state = opt.init(eager)
    for _ in range(6):  # past decay_steps: the rate stays at its floor
        eager, e_state = step(eager, e_state)
        staged, j_state = jitted(staged, j_state)
    np.testing.assert_allclose(staged["w"], eager["w"], rtol=1e-13)
    assert int(j_state[0].count) == int(e_state[0].count) == 6
    assert int(j_state[1].count) == 6  # the schedule's own count


def test_schedule_arguments_are_checked():
    with pytest.raises(ArgumentError, match="decay_steps must be positive"):
        optim.cosine_decay(1.0, 0)
    with pytest.raises(ArgumentError, match="decay_rate must be positive"):
        optim.exponential_decay(1.0, 10, 0.0)
    assert issubclass(ArgumentError, ValueError)


def test_adam_with_a_schedule_uses_the_step_count():
    lrs = []
    sched = lambda k: (lrs.append(k), 0.1 / (1 + k))[1]  # noqa: E731
    _run(optim.adam(sched), [np.ones(2)], lambda p: [np.ones(2)], 3)
    assert lrs == [0, 1, 2]


def test_adam_update_traces_under_jit_and_grad():
    opt = optim.adam(0.1)
    params = {"w": np.array([1.0, 2.0])}
    state = opt.init(params)

    def step(params, state):
        g = ft.grad(lambda p: fnp.sum(p["w"] * p["w"]))(params)
        updates, state = opt.update(g, state, params)
        return optim.apply_updates(params, updates)

    eager = step(params, state)
    staged = ft.make_jaxpr(step)(params, state)
    out = ft.eval_jaxpr(staged.jaxpr, staged.consts, *tree_leaves((params, state)))
    np.testing.assert_allclose(out[0], eager["w"], rtol=1e-14)


def test_lbfgs_rosenbrock_and_least_squares():
    pytest.importorskip("scipy")

    def rosen(p):
        x, y = p["x"], p["y"]
        return (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x)

    calls = []
    res = optim.minimize_lbfgs(ft.value_and_grad(rosen), {"x": np.array(-1.2),
                                                          "y": np.array(1.0)},
                               maxiter=500, callback=lambda p, loss: calls.append(loss))
    np.testing.assert_allclose([res.params["x"], res.params["y"]], [1.0, 1.0], atol=1e-6)
    assert res.loss < 1e-12 and len(calls) == res.nit and res.nfev >= res.nit
    # least squares over a pytree: the normal equations' solution
    rng = np.random.default_rng(0)
    A, b = rng.standard_normal((20, 3)), rng.standard_normal(20)

    def lsq(p):
        r = A @ p[0] + p[1] - b
        return fnp.sum(r * r)

    res = optim.minimize_lbfgs(ft.value_and_grad(lsq), [np.zeros(3), np.array(0.0)])
    sol = np.linalg.lstsq(np.c_[A, np.ones(20)], b, rcond=None)[0]
    np.testing.assert_allclose(np.append(res.params[0], res.params[1]), sol, atol=1e-7)
    assert np.shape(res.params[1]) == ()


def test_lbfgs_stops_when_the_callback_asks():
    pytest.importorskip("scipy")

    def stop(p, loss):
        raise StopIteration

    res = optim.minimize_lbfgs(ft.value_and_grad(lambda p: fnp.sum(fnp.exp(p))),
                               np.zeros(2), callback=stop)
    assert res.nit <= 1 and math.isfinite(res.loss)


def test_optax_shaped_errors_name_the_fix():
    with pytest.raises(ArgumentError, match="2 transformations but a state of 1"):
        optim.chain(optim.scale(1.0), optim.scale(2.0)).update([1.0], (optim.EmptyState(),))
    adamw = optim.adamw(0.1)
    with pytest.raises(ArgumentError, match=r"update\(updates, state, params\)"):
        adamw.update(np.ones(2), adamw.init(np.ones(2)))
    with pytest.raises(ArgumentError, match="non-negative"):
        optim.piecewise_constant_schedule(1.0, {5: -0.5})
    with pytest.raises(ArgumentError, match="one more schedule than boundaries"):
        optim.join_schedules([optim.constant_schedule(1.0)], [3])
    with pytest.raises(ArgumentError, match="transition_steps must be positive"):
        optim.exponential_decay(1.0, 0, 0.5)
    with pytest.raises(ArgumentError, match="decay_steps must be positive"):
        optim.cosine_decay_schedule(1.0, 0)


def test_masked_weight_decay_by_a_function_of_the_params():
    # decay only the matrices: (g + wd * p) on "w", g alone on "b"
    opt = optim.add_decayed_weights(0.5, mask=lambda p: {k: np.ndim(v) == 2 for k, v in p.items()})
    params = {"w": np.ones((2, 2)), "b": np.ones(2)}
    grads = {"w": np.zeros((2, 2)), "b": np.zeros(2)}
    updates, state = opt.update(grads, opt.init(params), params)
    np.testing.assert_array_equal(updates["w"], 0.5 * np.ones((2, 2)))
    np.testing.assert_array_equal(updates["b"], np.zeros(2))
    assert isinstance(state, optim.MaskedState)


def test_float32_parameters_stay_float32_and_the_count_is_int32():
    opt = optim.adam(optim.linear_schedule(1e-2, 1e-3, 10))
    params = {"w": np.ones(3, np.float32)}
    state = opt.init(params)
    assert state[0].count.dtype == np.int32 and state[0].mu["w"].dtype == np.float32
    updates, state = ft.jit(opt.update)({"w": np.ones(3, np.float32)}, state, params)
    new = optim.apply_updates(params, updates)
    assert new["w"].dtype == np.float32 and updates["w"].dtype == np.float32
    assert state[1].count.dtype == np.int32 and int(state[1].count) == 1


def test_clip_by_global_norm_of_zero_updates_is_zero_without_a_warning():
    # the norm 0 is below max_norm: the updates pass unchanged, no 0/0 computed on the way
    updates, _ = optim.clip_by_global_norm(1.0).update([np.zeros(2)], optim.EmptyState())
    np.testing.assert_array_equal(updates[0], np.zeros(2))


def test_lbfgs_without_optax_zoom_line_search_says_so():
    with pytest.raises(ArgumentError, match="linesearch=None"):
        optim.lbfgs(0.1)
    with pytest.raises(ArgumentError, match="needs the parameters"):
        t = optim.scale_by_lbfgs()
        t.update(np.ones(2), t.init(np.ones(2)))


def test_scale_by_lbfgs_on_a_quadratic_is_newtons_step_once_the_memory_holds_it():
    # f(w) = 0.5 w.A w with A diagonal: after one step the pair (dw, dg) = (dw, A dw) spans a
    # 1-D space; in 1-D, L-BFGS's estimate is exactly 1/a, so the second step lands on 0
    a = 4.0
    opt = optim.lbfgs(1.0, linesearch=None)
    w = np.array([1.5])
    state = opt.init(w)
    for _ in range(2):
        updates, state = opt.update(a * w, state, w)
        w = optim.apply_updates(w, updates)
    np.testing.assert_allclose(w, [0.0], atol=1e-15)


def test_every_optax_shaped_optimizer_returns_arrays_the_caller_owns():
    from functrans.test_util import check_owned
    params = {"w": np.ones((2, 2)), "b": np.ones(2)}
    grads = {"w": np.full((2, 2), 0.5), "b": np.full(2, -0.5)}
    for opt in (optim.identity(), optim.chain(optim.identity()),
                optim.masked(optim.scale(2.0), {"w": True, "b": False}),
                optim.add_decayed_weights(0.0), optim.lbfgs(0.1, linesearch=None),
                optim.adamw(0.1, mask={"w": True, "b": False}), optim.rmsprop(0.1, centered=True),
                optim.adagrad(0.1), optim.chain(optim.clip_by_global_norm(1.0), optim.clip(1.0))):
        check_owned(opt.init(params), [params, grads])  # (writes 7 into what it checks)
        state = opt.init(params)
        updates, new_state = opt.update(grads, state, params)
        check_owned((updates, new_state), [params, grads, state])
