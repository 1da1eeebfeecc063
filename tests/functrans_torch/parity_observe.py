"""Observing a program under PyTorch or functrans.torch, and comparing two observations.

A parity program takes the torch module and a recorder `rec(name, value)`; `observe` runs it and
returns a JSON-able record of everything recorded (tensor values, dtypes, shapes, flags,
grad_fn names), the warnings raised and the error the program ended with, if any.
`differences` lists what differs between two such records. `@program` registers a program in
PROGRAMS (the parity_*_programs.py modules hold them, by topic).
"""

from __future__ import annotations

import json
import math
import re
import warnings

PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


# --- observing -------------------------------------------------------------------------------

def _is_tensor(torch, x):
    return isinstance(x, torch.Tensor)


def describe(torch, x):
    """A JSON-able description of a recorded value."""
    if _is_tensor(torch, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = x.grad_fn
        return {"tensor": _pairs(x.detach().tolist()), "dtype": str(x.dtype),
                "shape": list(x.shape),
                "requires_grad": x.requires_grad, "is_leaf": x.is_leaf,
                "grad_fn": None if fn is None else type(fn).__name__}
    if isinstance(x, tuple | list):
        return [describe(torch, y) for y in x]
    if x is None or isinstance(x, bool | int | str):
        return x
    if isinstance(x, float):
        return {"float": x}
    if isinstance(x, complex):
        return {"complex": [x.real, x.imag]}
    if hasattr(x, "name") and callable(getattr(x, "name")):  # a grad_fn node
        return {"node": type(x).__name__}
    return {"repr": repr(x)}


def _pairs(values):
    """Complex numbers as [real, imag] pairs (JSON has no complex numbers)."""
    if isinstance(values, list):
        return [_pairs(v) for v in values]
    return [values.real, values.imag] if isinstance(values, complex) else values


_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?\s*$", re.S)


def _message(text):
    return _TRIGGERED.sub("", str(text)).strip()


def observe(torch, fn) -> dict:
    record = {}

    def rec(name, value):
        record[name] = describe(torch, value)

    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(torch, rec)
        except Exception as e:  # the program's final error is part of what it does
            error = [type(e).__name__, _message(e)]
    warns = [[w.category.__name__, _message(w.message)] for w in caught
             if w.category in (UserWarning, RuntimeWarning)]
    return {"values": record, "warnings": warns, "error": error}


def _close(a, b, path, problems, rtol):
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            problems.append(f"{path}: keys {sorted(a)} != {sorted(b)}")
            return
        for k in a:
            _close(a[k], b[k], f"{path}.{k}", problems, rtol)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            problems.append(f"{path}: length {len(a)} != {len(b)}: {a} vs {b}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]", problems, rtol)
        return
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
            problems.append(f"{path}: {a!r} != {b!r}")
            return
        if math.isnan(a) and math.isnan(b):
            return
        if not math.isclose(a, b, rel_tol=rtol, abs_tol=rtol * 1e-3):
            problems.append(f"{path}: {a!r} != {b!r}")
        return
    if a != b:
        problems.append(f"{path}: {a!r} != {b!r}")


# PyTorch gives these once per process (TORCH_WARN_ONCE): whether a live run shows them depends
# on what ran before in the process
ONCE_WARNINGS = ("Using backward() with create_graph=True",
                 "Converting a tensor with requires_grad=True to a scalar",
                 "The use of `x.T` on tensors of dimension other than 2",
                 "Tensor.T is deprecated on 0-D tensors",
                 "Tensor.mT is deprecated on 0-D tensors",
                 "Tensor.mH is deprecated on 0-D tensors",
                 "Tensor.H is deprecated on 0-D tensors",
                 "adjoint() is deprecated on 0-D tensors",
                 "torch.meshgrid: in an upcoming release",
                 "Using torch.cross without specifying the dim arg is deprecated",
                 "Using padding='same' with even kernel lengths and odd dilation")


def _without_once(obs):
    return {**obs, "warnings": [w for w in obs["warnings"]
                                if not w[1].startswith(ONCE_WARNINGS)]}


def differences(got: dict, want: dict, rtol=2e-6, once_warnings=True) -> list[str]:
    """What differs between two observations (floats compared to `rtol`); with
    `once_warnings=False`, PyTorch's once-per-process warnings are left out."""
    if not once_warnings:
        got, want = _without_once(got), _without_once(want)
    problems = []
    _close(got, want, "", problems, rtol)
    return problems


def record_fixtures(path: str, programs: dict, names=()) -> None:
    """Record every program's observation under live PyTorch into the JSON file `path`, or with
    `names` only those (the other records are kept; they must come from the same torch)."""
    import torch
    torch.set_num_threads(1)
    if names:
        unknown = sorted(set(names) - set(programs))
        if unknown:
            raise SystemExit(f"no such programs: {unknown}")
        with open(path) as f:
            fixtures = json.load(f)
        if fixtures["torch_version"] != torch.__version__:
            raise SystemExit(f"fixtures come from torch {fixtures['torch_version']}, this is "
                             f"{torch.__version__}: re-record them all")
        for name in names:
            fixtures["programs"][name] = observe(torch, programs[name])
    else:
        fixtures = {"torch_version": torch.__version__,
                    "programs": {name: observe(torch, fn) for name, fn in programs.items()}}
    with open(path, "w") as f:
        json.dump(fixtures, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(names or programs)} program records to {path}")
