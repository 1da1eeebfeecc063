"""torch.optim.Optimizer: parameter groups, per-parameter state, hooks and state dicts.

The bookkeeping follows PyTorch's `Optimizer` (the same group keys, the same state-dict layout
with integer parameter ids, the same messages for bad input); each subclass's `step` runs
PyTorch's single-tensor update formulas as in-place ops on the shim's tensors under `no_grad`.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from functrans.errors import ArgumentError
from functrans.torch._graph import RemovableHandle
from functrans.torch._grad_mode import enable_grad, set_grad_enabled
from functrans.torch._tensor import Tensor

__all__ = ["Optimizer", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook", "required"]


class _RequiredParameter:
    """Marks a default that every parameter group must give (as `SGD`'s lr once was)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_GLOBAL_PRE_HOOKS: list = []
_GLOBAL_POST_HOOKS: list = []


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """Run `hook(optimizer, args, kwargs)` before every optimizer's step."""
    _GLOBAL_PRE_HOOKS.append(hook)
    return RemovableHandle(_GLOBAL_PRE_HOOKS, hook)


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """Run `hook(optimizer, args, kwargs)` after every optimizer's step."""
    _GLOBAL_POST_HOOKS.append(hook)
    return RemovableHandle(_GLOBAL_POST_HOOKS, hook)


def typename(obj) -> str:
    """torch.typename: 'torch.FloatTensor' for a tensor, the qualified type name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__", "") else f"{module}.{name}"


def _hooked_step(step):
    """Wrap a subclass's `step` with the step hooks and PyTorch's grad mode for updates."""

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for pre_hook in chain(list(_GLOBAL_PRE_HOOKS), list(self._step_pre_hooks)):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
        # the update itself is not recorded (PyTorch's _use_grad_for_differentiable)
        with set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            out = step(self, *args, **kwargs)
        for post_hook in chain(list(self._step_post_hooks), list(_GLOBAL_POST_HOOKS)):
            post_hook(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class of the optimisers: holds `param_groups`, `state` and `defaults`.

    `params` is an iterable of tensors, of (name, tensor) pairs, or of dicts (parameter
    groups) with a "params" entry and per-group options; options a group leaves out come
    from `defaults`.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._step_pre_hooks: list = []
        self._step_post_hooks: list = []
        self._state_dict_pre_hooks: list = []
        self._state_dict_post_hooks: list = []
        self._load_state_dict_pre_hooks: list = []
        self._load_state_dict_post_hooks: list = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_step_pre_hooks", "_step_post_hooks", "_state_dict_pre_hooks",
                     "_state_dict_post_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, [])
        self.defaults.setdefault("differentiable", False)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict with "params" and optional options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list "
                "instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen: set = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients: to None (the default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None):
        """Perform one optimisation step (each subclass defines it)."""
        raise NotImplementedError

    # ----- hooks -----
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Run `hook(optimizer, args, kwargs)` before this optimizer's step; it may return
        new (args, kwargs)."""
        self._step_pre_hooks.append(hook)
        return RemovableHandle(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """Run `hook(optimizer, args, kwargs)` after this optimizer's step."""
        self._step_post_hooks.append(hook)
        return RemovableHandle(self._step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """Run `hook(optimizer)` before `state_dict()`."""
        return _register(self._state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """Run `hook(optimizer, state_dict)` after `state_dict()`; it may return a new dict."""
        return _register(self._state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False):
        """Run `hook(optimizer, state_dict)` before `load_state_dict`; it may return a new
        dict."""
        return _register(self._load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False):
        """Run `hook(optimizer)` after `load_state_dict`."""
        return _register(self._load_state_dict_post_hooks, hook, prepend)

    # ----- state dicts -----
    def state_dict(self) -> dict[str, Any]:
        """The optimiser's state as PyTorch lays it out: {"state": {param id: {...}},
        "param_groups": [{options..., "params": [param ids]}]}, ids numbering the parameters
        in group order. The state's tensors are the optimiser's own (as in PyTorch)."""
        for pre_hook in list(self._state_dict_pre_hooks):
            pre_hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in list(self._state_dict_post_hooks):
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict made by `state_dict()` (here or by PyTorch, same layout)."""
        state_dict = state_dict.copy()
        for pre_hook in list(self._load_state_dict_pre_hooks):
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in list(self._load_state_dict_post_hooks):
            post_hook(self)

    # ----- helpers shared by the subclasses -----
    def _closure_loss(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()


def _register(hooks: list, hook, prepend: bool) -> RemovableHandle:
    if prepend:
        hooks.insert(0, hook)
    else:
        hooks.append(hook)
    return RemovableHandle(hooks, hook)


def _cast(param, value, key=None):
    """A loaded state value made to fit `param`: float tensors take param's dtype (the "step"
    counter keeps its own), containers are rebuilt around their cast entries."""
    if isinstance(value, Tensor):
        if key != "step" and param.is_floating_point() and value.dtype != param.dtype:
            return value.to(dtype=param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _cast(param, v, key=k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return type(value)(_cast(param, v) for v in value)
    return value


def check_unsupported(name: str, **flags) -> None:
    """Refuse the PyTorch options that select another kernel (fused, capturable,
    differentiable): functrans.torch runs the single-tensor CPU update only."""
    for flag, value in flags.items():
        if value:
            raise ArgumentError(
                f"{name}({flag}=True) is not supported: functrans.torch.optim runs PyTorch's "
                f"single-tensor CPU update. Leave {flag} at its default "
                f"({'None' if flag == 'fused' else 'False'}).")


def check_scalar(kind: str, value, ok: bool) -> None:
    """PyTorch's `Invalid <kind>: <value>` error when `ok` is false."""
    if not ok:
        raise ValueError(f"Invalid {kind}: {value}")


def to_scalar(x):
    """A 1-element tensor option (lr as a Tensor) as a Python number; others unchanged."""
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        return x.item()
    return x


def get_value(x):
    """The step counter as a Python float (PyTorch's _get_value)."""
    return x.item() if isinstance(x, Tensor) else x


def lerp_(start: Tensor, end: Tensor, weight: float) -> Tensor:
    """start <- lerp(start, end, weight) in place, with PyTorch's CPU formula: start + w * (end
    - start) for w < 0.5, else end - (end - start) * (1 - w), w in start's dtype."""
    w = start._value.dtype.type(weight)
    if abs(w) < 0.5:
        return start.add_(end.sub(start), alpha=w)
    return start.copy_(end.sub(end.sub(start).mul(start._value.dtype.type(1) - w)))


def step_counter(value: float = 0.0) -> Tensor:
    """A fresh "step" state entry: a 0-d tensor of PyTorch's scalar dtype for optimiser state
    (float64 when the default dtype is float64, float32 otherwise)."""
    from functrans.torch._creation import tensor
    from functrans.torch._dtype import float32, float64, get_default_dtype
    dtype = float64 if get_default_dtype() == float64 else float32
    return tensor(float(value), dtype=dtype)
