"""functrans.torch.optim against PyTorch 2.13: every optimiser and option combination of
optim_programs.OPTIMIZERS, step by step (losses, parameters, final state), against PyTorch's
records in optim_fixtures.json (always) and a live PyTorch run (when torch is installed);
state-dict layout and round trips; PyTorch's messages for bad input; hooks and zero_grad."""

import numpy as np
import pytest
from optim_programs import OPTIMIZERS, load_fixtures, model, run_optimizer

import functrans.torch as ft_torch

RECORDED = load_fixtures()
CASES = [f"{n}-{dt}" for n in OPTIMIZERS for dt in ("float32", "float64")]


def _live_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "optim"):  # a stray directory named torch, not PyTorch
        pytest.skip("PyTorch is not installed")
    return torch


def _tolerance(case):
    name, dt = case.rsplit("-", 1)
    # float32: the forward and backward passes round differently from PyTorch's kernels in the
    # last bit (reduction order); L-BFGS's curvature pairs amplify that over its iterations
    if dt == "float32":
        return (2e-3, 2e-4) if name.startswith("lbfgs") else (1e-5, 1e-6)
    return (1e-10, 1e-12) if name.startswith("lbfgs") else (1e-12, 1e-13)


def _assert_runs_match(got, want, case):
    rtol, atol = _tolerance(case)
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=rtol, atol=atol)
    for step, (gs, ws) in enumerate(zip(got["params"], want["params"], strict=True)):
        for k, (g, w) in enumerate(zip(gs, ws, strict=True)):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                       err_msg=f"{case}: parameter {k} after step {step + 1}")
    assert set(got["state"]) == set(want["state"])
    if case.startswith("lbfgs"):  # y.s and 1 / y.s cancel: a few digits fewer than the steps
        rtol, atol = 1e-7, 1e-10
    for pid, st in want["state"].items():
        assert set(got["state"][pid]) == set(st), f"{case}: state keys of parameter {pid}"
        for key, w in st.items():
            g = got["state"][pid][key]
            if isinstance(w, int) and not isinstance(w, bool):  # counters: func_evals, n_iter
                assert g == w, f"{case}: state {key!r} is {g}, PyTorch's is {w}"
                continue
            if case.startswith("lbfgs") and case.endswith("float32"):
                # curvature pairs (1 / y.s of nearly equal gradients) carry float32's
                # cancellation; the losses and parameters above are the check
                continue
            if isinstance(w, list):
                assert len(g) == len(w)
                for gi, wi in zip(g, w):
                    if wi is None:
                        assert gi is None
                    else:
                        np.testing.assert_allclose(gi, wi, rtol=rtol, atol=atol)
            elif isinstance(w, (int, float, np.ndarray)):
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                           err_msg=f"{case}: state {key!r} of parameter {pid}")
    assert got["param_groups"] == want["param_groups"]


@pytest.mark.parametrize("case", CASES)
def test_matches_recorded_pytorch(case):
    name, dt = case.rsplit("-", 1)
    _assert_runs_match(run_optimizer(ft_torch, name, dt), RECORDED["optimizers"][case], case)


@pytest.mark.parametrize("case", CASES)
def test_matches_live_pytorch(case):
    torch = _live_torch()
    name, dt = case.rsplit("-", 1)
    _assert_runs_match(run_optimizer(ft_torch, name, dt), run_optimizer(torch, name, dt), case)


def test_fixtures_cover_every_case():
    assert set(RECORDED["optimizers"]) == set(CASES), \
        "fixtures are stale: run `python tests/functrans_torch/optim_programs.py` with torch"


def test_first_order_float64_updates_are_pytorchs_to_rounding():
    # the single-tensor formulas in PyTorch's order: a few units in the last place at most
    for case in CASES:
        name, dt = case.rsplit("-", 1)
        if dt == "float64" and not name.startswith("lbfgs"):
            got = run_optimizer(ft_torch, name, dt)
            want = RECORDED["optimizers"][case]
            err = max(np.max(np.abs(g - w)) for gs, ws in zip(got["params"], want["params"])
                      for g, w in zip(gs, ws))
            assert err < 1e-14, (case, err)


# --- state dicts --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["sgd_momentum", "adam_wd_amsgrad", "adamw",
                                  "rmsprop_centered_momentum", "adagrad_options", "adam_groups",
                                  "lbfgs_strong_wolfe"])
def test_state_dict_round_trip_resumes_pytorchs_run(name):
    # 3 steps, save, load into a fresh optimiser on fresh parameters holding the same values,
    # 3 more steps: PyTorch's uninterrupted 6 steps
    case = f"{name}-float64"
    cls_name, kwargs = OPTIMIZERS[name]
    first = run_optimizer(ft_torch, name, "float64", steps=3)
    params, loss_fn = model(ft_torch, "float64")
    with ft_torch.no_grad():
        for p, v in zip(params, first["params"][-1]):
            p.copy_(ft_torch.tensor(v))
    saved = _optimizer_after(name, 3).state_dict()
    kwargs = dict(kwargs)
    groups = kwargs.pop("groups", None)
    spec = params if groups is None else [{"params": params[:2], **groups[0]},
                                          {"params": params[2:], **groups[1]}]
    opt = getattr(ft_torch.optim, cls_name)(spec, **kwargs)
    opt.load_state_dict(saved)
    want = RECORDED["optimizers"][case]
    rtol, atol = _tolerance(case)
    for step in range(3, 6):
        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        if cls_name == "LBFGS":
            loss = opt.step(closure)
        else:
            loss = closure()
            opt.step()
        np.testing.assert_allclose(float(loss), want["losses"][step], rtol=rtol, atol=atol)
        for p, w in zip(params, want["params"][step]):
            np.testing.assert_allclose(p.detach().numpy(), w, rtol=rtol, atol=atol)


def _optimizer_after(name, steps):
    cls_name, kwargs = OPTIMIZERS[name]
    params, loss_fn = model(ft_torch, "float64")
    kwargs = dict(kwargs)
    groups = kwargs.pop("groups", None)
    spec = params if groups is None else [{"params": params[:2], **groups[0]},
                                          {"params": params[2:], **groups[1]}]
    opt = getattr(ft_torch.optim, cls_name)(spec, **kwargs)
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        opt.step(closure)
    return opt


def test_state_dict_layout_is_pytorchs():
    opt = _optimizer_after("adam_groups", 2)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3]]
    assert sorted(sd["state"]) == [0, 1, 2, 3]
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"]
    assert sorted(sd["state"][2]) == ["exp_avg", "exp_avg_sq", "step"]
    step = sd["state"][0]["step"]
    assert isinstance(step, ft_torch.Tensor) and step.dtype == ft_torch.float32
    assert step.item() == 2.0


def test_load_state_dict_rejects_a_different_layout():
    opt = _optimizer_after("adam_groups", 1)
    params, _ = model(ft_torch, "float64")
    other = ft_torch.optim.Adam(params)
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        other.load_state_dict(opt.state_dict())
    other = ft_torch.optim.Adam([{"params": params[:1]}, {"params": params[1:]}])
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        other.load_state_dict(opt.state_dict())


def test_load_state_dict_casts_state_to_the_parameters_dtype():
    opt = _optimizer_after("adam", 1)
    sd = opt.state_dict()
    params32, _ = model(ft_torch, "float32")
    opt32 = ft_torch.optim.Adam(params32, lr=0.01)
    opt32.load_state_dict(sd)
    st = opt32.state[params32[0]]
    assert st["exp_avg"].dtype == ft_torch.float32
    assert st["step"].dtype == ft_torch.float32 and st["step"].item() == 1.0


# --- behaviour around the update ------------------------------------------------------------

def test_parameters_without_grad_are_skipped_and_get_no_state():
    a = ft_torch.tensor([1.0, 2.0], requires_grad=True)
    b = ft_torch.tensor([3.0], requires_grad=True)
    opt = ft_torch.optim.Adam([a, b], lr=0.1)
    (a * a).sum().backward()
    opt.step()
    assert b.tolist() == [3.0] and len(opt.state[b]) == 0
    # Adam's first step moves every coordinate by lr (m_hat / sqrt(v_hat) = sign(g))
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 1.9], rtol=1e-6)


def test_zero_grad_sets_to_none_or_zeros_in_place():
    a = ft_torch.tensor([1.0, 2.0], requires_grad=True)
    opt = ft_torch.optim.SGD([a], lr=0.1)
    (a * a).sum().backward()
    g = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is g and a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None


def test_step_updates_leaves_in_place_and_bumps_their_version():
    a = ft_torch.tensor([1.0, 2.0], requires_grad=True)
    opt = ft_torch.optim.SGD([a], lr=0.5)
    (a * a).sum().backward()
    v0 = a._version
    opt.step()
    assert a.is_leaf and a.requires_grad and a.grad_fn is None
    assert a._version > v0 and a.tolist() == [0.0, 0.0]


def test_step_returns_the_closure_loss_and_runs_it_with_grad_enabled():
    a = ft_torch.tensor([3.0], requires_grad=True)
    opt = ft_torch.optim.SGD([a], lr=0.1)
    seen = []

    def closure():
        seen.append(ft_torch.is_grad_enabled())
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    with ft_torch.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 9.0
    np.testing.assert_allclose(a.tolist(), [2.4])


def test_step_hooks_run_before_and_after_and_can_be_removed():
    a = ft_torch.tensor([1.0], requires_grad=True)
    opt = ft_torch.optim.SGD([a], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kw: calls.append(("pre", a.item())))
    h2 = opt.register_step_post_hook(lambda o, args, kw: calls.append(("post", a.item())))
    (2 * a).sum().backward()
    opt.step()
    h1.remove()
    h2.remove()
    opt.step()
    assert calls == [("pre", 1.0), ("post", pytest.approx(0.8))]


def test_param_groups_take_defaults_and_add_param_group_checks_overlap():
    a = ft_torch.tensor([1.0], requires_grad=True)
    b = ft_torch.tensor([1.0], requires_grad=True)
    opt = ft_torch.optim.SGD([{"params": [a], "lr": 0.5}], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b})
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.defaults["lr"] == 0.1
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [a]})


def test_named_parameters_are_kept_as_param_names():
    a = ft_torch.tensor([1.0], requires_grad=True)
    opt = ft_torch.optim.Adam([("w", a)])
    assert opt.param_groups[0]["param_names"] == ["w"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w"]


# --- PyTorch's messages for bad input -------------------------------------------------------

def _leaf():
    return ft_torch.tensor([1.0], requires_grad=True)


BAD_INPUT = [
    ("empty", lambda T: T.optim.SGD([], lr=0.1), ValueError,
     "optimizer got an empty parameter list"),
    ("tensor", lambda T: T.optim.Adam(T.ones(2, requires_grad=True)), TypeError,
     "params argument given to the optimizer should be an iterable of Tensors or dicts, but "
     "got torch.FloatTensor"),
    ("not_tensor", lambda T: T.optim.Adam([1.0]), TypeError,
     "optimizer can only optimize Tensors, but one of the params is float"),
    ("non_leaf", lambda T: T.optim.Adam([T.ones(2, requires_grad=True) * 2]), ValueError,
     "can't optimize a non-leaf Tensor"),
    ("set", lambda T: T.optim.Adam([{"params": {T.ones(2, requires_grad=True)}}]), TypeError,
     "optimizer parameters need to be organized in ordered collections"),
    ("lr", lambda T: T.optim.SGD([T.ones(1, requires_grad=True)], lr=-0.1), ValueError,
     "Invalid learning rate: -0.1"),
    ("adam_lr", lambda T: T.optim.Adam([T.ones(1, requires_grad=True)], lr=-1.0), ValueError,
     "Invalid learning rate: -1.0"),
    ("momentum", lambda T: T.optim.SGD([T.ones(1, requires_grad=True)], momentum=-1),
     ValueError, "Invalid momentum value: -1"),
    ("nesterov", lambda T: T.optim.SGD([T.ones(1, requires_grad=True)], nesterov=True),
     ValueError, "Nesterov momentum requires a momentum and zero dampening"),
    ("beta", lambda T: T.optim.Adam([T.ones(1, requires_grad=True)], betas=(1.0, 0.999)),
     ValueError, "Invalid beta parameter at index 0: 1.0"),
    ("beta2", lambda T: T.optim.AdamW([T.ones(1, requires_grad=True)], betas=(0.9, -0.1)),
     ValueError, "Invalid beta parameter at index 1: -0.1"),
    ("eps", lambda T: T.optim.Adam([T.ones(1, requires_grad=True)], eps=-1e-8), ValueError,
     "Invalid epsilon value: -1e-08"),
    ("weight_decay", lambda T: T.optim.RMSprop([T.ones(1, requires_grad=True)],
                                               weight_decay=-1.0),
     ValueError, "Invalid weight_decay value: -1.0"),
    ("alpha", lambda T: T.optim.RMSprop([T.ones(1, requires_grad=True)], alpha=-0.5),
     ValueError, "Invalid alpha value: -0.5"),
    ("lr_decay", lambda T: T.optim.Adagrad([T.ones(1, requires_grad=True)], lr_decay=-1.0),
     ValueError, "Invalid lr_decay value: -1.0"),
    ("accumulator", lambda T: T.optim.Adagrad([T.ones(1, requires_grad=True)],
                                              initial_accumulator_value=-1.0),
     ValueError, "Invalid initial_accumulator_value value: -1.0"),
    ("lbfgs_groups", lambda T: T.optim.LBFGS([{"params": [T.ones(1, requires_grad=True)]},
                                              {"params": [T.ones(1, requires_grad=True)]}]),
     ValueError, "LBFGS doesn't support per-parameter options (parameter groups)"),
    ("line_search", lambda T: _lbfgs_step(T, line_search_fn="backtracking"), RuntimeError,
     "only 'strong_wolfe' is supported"),
    ("group_not_dict", lambda T: T.optim.SGD([T.ones(1, requires_grad=True)])
     .add_param_group([T.ones(1, requires_grad=True)]), TypeError,
     "param_group must be a dict, but got <class 'list'>"),
]


def _lbfgs_step(T, **kwargs):
    a = T.ones(2, requires_grad=True)
    opt = T.optim.LBFGS([a], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((a - 2) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)


@pytest.mark.parametrize("name,make,exc,message", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_gets_pytorchs_message(name, make, exc, message):
    with pytest.raises(exc) as info:
        make(ft_torch)
    assert message in str(info.value)


@pytest.mark.parametrize("name,make,exc,message", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_messages_are_live_pytorchs(name, make, exc, message):
    torch = _live_torch()
    with pytest.raises(exc) as info:
        make(torch)
    assert message in str(info.value)


def test_kernels_other_than_single_tensor_are_refused_with_the_fix():
    from functrans.errors import ArgumentError
    with pytest.raises(ArgumentError, match="fused=True.*Leave fused at its default"):
        ft_torch.optim.Adam([_leaf()], fused=True)
    with pytest.raises(ArgumentError, match="differentiable=True"):
        ft_torch.optim.SGD([_leaf()], differentiable=True)


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_step_counter_takes_pytorchs_scalar_dtype(default):
    # float64 under set_default_dtype(torch.float64), float32 otherwise (as PyTorch's state)
    old = ft_torch.get_default_dtype()
    ft_torch.set_default_dtype(getattr(ft_torch, default))
    try:
        a = ft_torch.tensor([1.0], requires_grad=True)
        opt = ft_torch.optim.Adam([a])
        a.sum().backward()
        opt.step()
        assert opt.state[a]["step"].dtype == getattr(ft_torch, default)
    finally:
        ft_torch.set_default_dtype(old)
