"""Optimiser and scheduler runs made under both PyTorch and functrans.torch.

Each run builds the same small model (a 3-4-1 tanh network on fixed data; weights from a seeded
numpy generator, so both libraries start from the same values), trains it a few steps with one
optimiser configuration, and returns the loss and every parameter after every step. The tests
compare functrans.torch's runs with PyTorch's: live when torch is installed, and always with
the records in optim_fixtures.json (written by running this file under torch==2.13.0:
`python tests/functrans_torch/optim_programs.py`).
"""

from __future__ import annotations

import json
import os

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optim_fixtures.json")
STEPS = 6

# name -> (optimiser, keyword arguments); every one runs in float32 and float64
OPTIMIZERS = {
    "sgd": ("SGD", {"lr": 0.1}),
    "sgd_momentum": ("SGD", {"lr": 0.1, "momentum": 0.9}),
    "sgd_dampening": ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    "sgd_nesterov_wd": ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True,
                                "weight_decay": 0.01}),
    "sgd_maximize": ("SGD", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
    "adam": ("Adam", {"lr": 0.01}),
    "adam_betas_eps": ("Adam", {"lr": 0.02, "betas": (0.3, 0.9), "eps": 1e-3}),
    "adam_wd_amsgrad": ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    "adam_maximize": ("Adam", {"lr": 0.01, "maximize": True}),
    "adamw": ("AdamW", {"lr": 0.01}),
    "adamw_amsgrad": ("AdamW", {"lr": 0.01, "weight_decay": 0.5, "amsgrad": True}),
    "rmsprop": ("RMSprop", {"lr": 0.01}),
    "rmsprop_centered_momentum": ("RMSprop", {"lr": 0.01, "alpha": 0.9, "momentum": 0.5,
                                              "centered": True, "weight_decay": 0.1}),
    "rmsprop_maximize": ("RMSprop", {"lr": 0.001, "eps": 1e-4, "maximize": True}),
    "adagrad": ("Adagrad", {"lr": 0.1}),
    "adagrad_options": ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.05,
                                    "initial_accumulator_value": 0.2, "eps": 1e-6}),
    "adam_groups": ("Adam", {"lr": 0.01, "groups": [{"lr": 0.05, "amsgrad": True}, {}]}),
    "sgd_groups": ("SGD", {"lr": 0.1, "groups": [{"momentum": 0.9}, {"weight_decay": 0.1}]}),
    "lbfgs": ("LBFGS", {"lr": 0.5, "max_iter": 4}),
    "lbfgs_strong_wolfe": ("LBFGS", {"max_iter": 5, "history_size": 3,
                                     "line_search_fn": "strong_wolfe"}),
    "lbfgs_max_eval": ("LBFGS", {"max_iter": 10, "max_eval": 6,
                                 "line_search_fn": "strong_wolfe"}),
}

# name -> (scheduler, keyword arguments, epochs); run on SGD with two groups (lr 0.1 and 0.02)
SCHEDULERS = {
    "step": ("StepLR", {"step_size": 3, "gamma": 0.5}, 12),
    "multistep": ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.3}, 12),
    "exponential": ("ExponentialLR", {"gamma": 0.9}, 12),
    "cosine": ("CosineAnnealingLR", {"T_max": 5, "eta_min": 0.001}, 23),
    "cosine_zero_min": ("CosineAnnealingLR", {"T_max": 7}, 16),
    "lambda": ("LambdaLR", {"lr_lambda": "lambda e: 0.95 ** e / (1 + e)"}, 10),
    "multiplicative": ("MultiplicativeLR", {"lr_lambda": "lambda e: 0.9 if e % 2 else 0.99"},
                       10),
    "linear": ("LinearLR", {"start_factor": 0.25, "end_factor": 0.9, "total_iters": 4}, 8),
    "constant": ("ConstantLR", {"factor": 0.5, "total_iters": 3}, 6),
    "sequential": ("SequentialLR", {"milestones": [3]}, 10),
}

# ReduceLROnPlateau: name -> (keyword arguments); the metric sequence is METRICS
PLATEAU = {
    "plateau_min": {"patience": 2, "factor": 0.5},
    "plateau_max_abs": {"mode": "max", "threshold_mode": "abs", "threshold": 0.05,
                        "patience": 1, "cooldown": 2, "factor": 0.2},
    "plateau_min_lr": {"patience": 0, "factor": 0.1, "min_lr": [0.005, 0.001], "eps": 1e-4},
}
METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.89, 0.9, 0.91, 0.92, 0.93, 0.8, 0.81, 0.82, 0.83,
           0.84, 0.85]


def data(dtype_name: str):
    """The model's starting weights and its data, as numpy arrays (the same for both)."""
    rng = np.random.default_rng(1234)
    dt = np.dtype(dtype_name)
    shapes = {"W1": (4, 3), "b1": (4,), "W2": (1, 4), "b2": (1,)}
    weights = {k: (rng.standard_normal(s) * 0.7).astype(dt) for k, s in shapes.items()}
    x = rng.uniform(-1, 1, (8, 3)).astype(dt)
    y = np.sin(x.sum(1, keepdims=True)).astype(dt)
    return weights, x, y


def model(torch, dtype_name: str):
    """(params, loss function) for the 3-4-1 tanh network on the fixed data."""
    weights, x, y = data(dtype_name)
    dtype = getattr(torch, dtype_name)
    params = [torch.tensor(w, dtype=dtype, requires_grad=True) for w in weights.values()]
    X, Y = torch.tensor(x, dtype=dtype), torch.tensor(y, dtype=dtype)

    def loss_fn():
        W1, b1, W2, b2 = params
        out = torch.tanh(X @ W1.T + b1) @ W2.T + b2
        return ((out - Y) ** 2).mean()

    return params, loss_fn


def values(params) -> list:
    return [p.detach().numpy().copy() for p in params]


def run_optimizer(torch, name: str, dtype_name: str, steps: int = STEPS) -> dict:
    """Train the model `steps` steps with OPTIMIZERS[name]; the losses, the parameters after
    every step, and the last state_dict's state (per parameter id, its tensors as arrays)."""
    cls_name, kwargs = OPTIMIZERS[name]
    params, loss_fn = model(torch, dtype_name)
    kwargs = dict(kwargs)
    groups = kwargs.pop("groups", None)
    if groups is None:
        opt = getattr(torch.optim, cls_name)(params, **kwargs)
    else:  # the first two parameters in one group, the others in the second
        opt = getattr(torch.optim, cls_name)([{"params": params[:2], **groups[0]},
                                              {"params": params[2:], **groups[1]}], **kwargs)
    losses, history = [], []
    for _ in range(steps):
        if cls_name == "LBFGS":
            def closure():
                opt.zero_grad()
                loss = loss_fn()
                loss.backward()
                return loss
            loss = opt.step(closure)
        else:
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            opt.step()
        losses.append(float(loss))
        history.append(values(params))
    return {"losses": losses, "params": history, "state": summarise_state(torch, opt),
            "param_groups": [{k: list(v) if isinstance(v, tuple) else v for k, v in g.items()}
                             for g in opt.state_dict()["param_groups"]]}


def summarise_state(torch, opt) -> dict:
    """state_dict()["state"] as {param id: {key: array or number}}; LBFGS's lists of tensors
    become lists of arrays."""
    out = {}
    for pid, st in opt.state_dict()["state"].items():
        entry = {}
        for k, v in st.items():
            if isinstance(v, torch.Tensor):
                entry[k] = v.detach().numpy().copy()
            elif isinstance(v, list):
                entry[k] = [x.detach().numpy().copy() if isinstance(x, torch.Tensor) else x
                            for x in v]
            else:
                entry[k] = v
        out[pid] = entry
    return out


def scheduler_optimizer(torch):
    params, _ = model(torch, "float64")
    return torch.optim.SGD([{"params": params[:2]}, {"params": params[2:], "lr": 0.02}],
                           lr=0.1)


def run_scheduler(torch, name: str) -> list:
    """The lr of both groups after construction and after every epoch's step."""
    sched = torch.optim.lr_scheduler
    opt = scheduler_optimizer(torch)
    if name in PLATEAU:
        s = sched.ReduceLROnPlateau(opt, **PLATEAU[name])
        lrs = [s.get_last_lr()]
        for m in METRICS:
            opt.step()
            s.step(m)
            lrs.append(s.get_last_lr())
        return lrs
    cls_name, kwargs, epochs = SCHEDULERS[name]
    kwargs = {k: eval(v) if k == "lr_lambda" else v for k, v in kwargs.items()}  # noqa: S307
    if cls_name == "SequentialLR":
        first = sched.LinearLR(opt, start_factor=0.5, total_iters=3)
        second = sched.ExponentialLR(opt, gamma=0.8)
        s = sched.SequentialLR(opt, [first, second], **kwargs)
    else:
        s = getattr(sched, cls_name)(opt, **kwargs)
    lrs = [s.get_last_lr()]
    for _ in range(epochs):
        opt.step()
        s.step()
        lrs.append(s.get_last_lr())
    return lrs


# --- fixtures -------------------------------------------------------------------------------

def to_json(x):
    if isinstance(x, np.ndarray):
        return {"dtype": x.dtype.name, "shape": list(x.shape), "data": x.ravel().tolist()}
    if isinstance(x, dict):
        return {str(k): to_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_json(v) for v in x]
    return x


def from_json(x):
    if isinstance(x, dict) and set(x) == {"dtype", "shape", "data"}:
        return np.array(x["data"], dtype=x["dtype"]).reshape(x["shape"])
    if isinstance(x, dict):
        return {(int(k) if k.isdigit() else k): from_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [from_json(v) for v in x]
    return x


def load_fixtures() -> dict:
    with open(FIXTURES) as f:
        return from_json(json.load(f))


def main() -> None:
    import torch
    fixtures = {"torch_version": torch.__version__,
                "optimizers": {f"{n}-{dt}": run_optimizer(torch, n, dt)
                               for n in OPTIMIZERS for dt in ("float32", "float64")},
                "schedulers": {n: run_scheduler(torch, n) for n in (*SCHEDULERS, *PLATEAU)}}
    with open(FIXTURES, "w") as f:
        json.dump(to_json(fixtures), f, indent=None, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(fixtures['optimizers'])} optimiser runs and "
          f"{len(fixtures['schedulers'])} scheduler runs to {FIXTURES}")


if __name__ == "__main__":
    main()
