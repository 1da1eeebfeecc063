"""functrans.torch.optim.lr_scheduler against PyTorch 2.13: the learning-rate sequence of every
scheduler in optim_programs (both groups, every epoch), equal to PyTorch's to the last bit,
against optim_fixtures.json (always) and live PyTorch (when installed); state dicts, warnings
and PyTorch's messages for bad input."""

import warnings

import pytest
from optim_programs import PLATEAU, SCHEDULERS, load_fixtures, run_scheduler, scheduler_optimizer

import functrans.torch as ft_torch

RECORDED = load_fixtures()
NAMES = [*SCHEDULERS, *PLATEAU]
sched = ft_torch.optim.lr_scheduler


def _live_torch():
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "optim"):
        pytest.skip("PyTorch is not installed")
    return torch


@pytest.mark.parametrize("name", NAMES)
def test_lr_sequence_is_recorded_pytorchs(name):
    # the same Python float arithmetic in the same order: equal, not close
    assert run_scheduler(ft_torch, name) == RECORDED["schedulers"][name]


@pytest.mark.parametrize("name", NAMES)
def test_lr_sequence_is_live_pytorchs(name):
    torch = _live_torch()
    assert run_scheduler(ft_torch, name) == run_scheduler(torch, name)


def test_fixtures_cover_every_scheduler():
    assert set(RECORDED["schedulers"]) == set(NAMES)


def test_closed_forms_by_hand():
    opt = scheduler_optimizer(ft_torch)
    s = sched.StepLR(opt, step_size=2, gamma=0.5)
    seen = []
    for _ in range(5):
        opt.step()
        s.step()
        seen.append(s.get_last_lr()[0])
    assert seen == [0.1, 0.05, 0.05, 0.025, 0.025]
    assert s.last_epoch == 5 and opt.param_groups[0]["lr"] == 0.025
    assert opt.param_groups[0]["initial_lr"] == 0.1


def test_state_dict_round_trip_resumes_the_sequence():
    want = RECORDED["schedulers"]["cosine"]
    opt = scheduler_optimizer(ft_torch)
    s = sched.CosineAnnealingLR(opt, T_max=5, eta_min=0.001)
    for _ in range(7):
        opt.step()
        s.step()
    saved = s.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 7 and saved["T_max"] == 5
    opt2 = scheduler_optimizer(ft_torch)
    for g, lr in zip(opt2.param_groups, s.get_last_lr()):
        g["lr"] = lr
    s2 = sched.CosineAnnealingLR(opt2, T_max=5, eta_min=0.001)
    s2.load_state_dict(saved)
    got = []
    for _ in range(5):
        opt2.step()
        s2.step()
        got.append(s2.get_last_lr())
    assert got == want[8:13]


def test_state_dict_keys_are_pytorchs():
    torch = _live_torch()
    ours = sched.StepLR(scheduler_optimizer(ft_torch), step_size=3).state_dict()
    theirs = torch.optim.lr_scheduler.StepLR(scheduler_optimizer(torch), step_size=3)
    assert sorted(ours) == sorted(theirs.state_dict())


def test_plateau_state_dict_round_trip():
    opt = scheduler_optimizer(ft_torch)
    s = sched.ReduceLROnPlateau(opt, patience=1)
    for m in (1.0, 1.0, 1.0):
        s.step(m)
    s2 = sched.ReduceLROnPlateau(scheduler_optimizer(ft_torch), patience=1)
    s2.load_state_dict(s.state_dict())
    assert (s2.best, s2.num_bad_epochs, s2.last_epoch) == (1.0, 0, 3)
    assert s.get_last_lr() == [pytest.approx(0.01), pytest.approx(0.002)]


def test_stepping_the_scheduler_first_warns_as_pytorch_does():
    opt = scheduler_optimizer(ft_torch)
    s = sched.StepLR(opt, step_size=3)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before "
                                         r"`optimizer.step\(\)`"):
        s.step()
    opt = scheduler_optimizer(ft_torch)
    s = sched.StepLR(opt, step_size=3)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()


def test_get_lr_outside_step_warns():
    s = sched.ExponentialLR(scheduler_optimizer(ft_torch), gamma=0.5)
    with pytest.warns(UserWarning, match=r"please use `get_last_lr\(\)`"):
        s.get_lr()


BAD_INPUT = [
    ("not_optimizer", lambda T: T.optim.lr_scheduler.StepLR(object(), 3), TypeError,
     "object is not an Optimizer"),
    ("resume", lambda T: T.optim.lr_scheduler.StepLR(scheduler_optimizer(T), 3, last_epoch=4),
     KeyError, "param 'initial_lr' is not specified in param_groups[0] when resuming"),
    ("factor", lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(scheduler_optimizer(T),
                                                                factor=1.5),
     ValueError, "Factor should be < 1.0."),
    ("mode", lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(scheduler_optimizer(T),
                                                              mode="up"),
     ValueError, "mode up is unknown!"),
    ("min_lrs", lambda T: T.optim.lr_scheduler.ReduceLROnPlateau(scheduler_optimizer(T),
                                                                 min_lr=[0.1]),
     ValueError, "expected 2 min_lrs, got 1"),
    ("lambdas", lambda T: T.optim.lr_scheduler.LambdaLR(scheduler_optimizer(T),
                                                        [lambda e: 1.0]),
     ValueError, "Expected 2 lr_lambdas, but got 1"),
    ("linear", lambda T: T.optim.lr_scheduler.LinearLR(scheduler_optimizer(T),
                                                       start_factor=0),
     ValueError, "Starting multiplicative factor expected to be greater than 0"),
    ("sequential", lambda T: T.optim.lr_scheduler.SequentialLR(
        scheduler_optimizer(T),
        [T.optim.lr_scheduler.StepLR(scheduler_optimizer(T), 2)], milestones=[1]),
     ValueError, "expects all schedulers to belong to the same optimizer"),
]


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


def test_pytorch_training_loop_runs_unchanged(snippet):
    ns = snippet("""
        import torch
        from torch.optim.lr_scheduler import ReduceLROnPlateau, StepLR

        w = torch.tensor([2.0, -1.0], requires_grad=True)
        optimizer = torch.optim.Adam([w], lr=0.1)
        scheduler = StepLR(optimizer, step_size=2, gamma=0.5)
        plateau = ReduceLROnPlateau(optimizer, patience=0)
        lrs = []
        for epoch in range(4):
            optimizer.zero_grad()
            loss = (w ** 2).sum()
            loss.backward()
            optimizer.step()
            scheduler.step()
            lrs.append(scheduler.get_last_lr()[0])
    """)
    assert ns["lrs"] == [0.1, 0.05, 0.05, 0.025]
    assert ns["w"].abs().max().item() < 2.0
