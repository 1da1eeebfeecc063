"""`functrans.config`: JAX's common configuration flags, and the `disable_jit` context manager.

>>> import functrans as ft
>>> ft.config.update("jax_enable_x64", True)   # a no-op: functrans computes in float64 already
>>> ft.config.jax_enable_x64
True

The flags and what each does here (docs/config.md says more):

- `jax_enable_x64`: arrays keep numpy's dtypes (float64 by default) whatever its value, so
  `True` is what functrans does already; `False` is accepted too (a JAX program that sets it
  runs unchanged) with a warning that nothing is narrowed to 32 bits.
- `jax_platform_name`, `jax_platforms`: functrans runs on the CPU only; "cpu" is accepted,
  any other platform raises `ArgumentError`.
- `jax_debug_nans`: while on, a primitive that produces a NaN from inputs without one raises
  `FloatingPointError` naming the primitive, eagerly and under `jit` (a jitted call whose
  outputs hold a NaN is re-run op by op, unjitted, to find the primitive, as JAX does).
- `jax_disable_jit`: while on, `jit(f)` calls `f` itself (op by op, eagerly).
- `jax_compilation_cache_dir`: a directory where jit's numba kernels (the extra "fast") persist,
  so a later process loads them instead of compiling them again; None (the default) keeps
  them in memory only.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Any, Iterator

import numpy as np

from functrans.core import nan_check as _nan_check
from functrans.errors import ArgumentError, ArgumentTypeError
from functrans.transforms.jit import api as _jit_api
from functrans.transforms.toolkit import kernels as _kernels

_BOOL_FLAGS = ("jax_enable_x64", "jax_debug_nans", "jax_disable_jit")
_PLATFORM_FLAGS = ("jax_platform_name", "jax_platforms")
_PATH_FLAGS = ("jax_compilation_cache_dir",)
FLAGS = _BOOL_FLAGS + _PLATFORM_FLAGS + _PATH_FLAGS


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ArgumentTypeError(
        f"config.update({name!r}, {value!r}): the flag takes True or False, got "
        f"{type(value).__name__}.")


def _check_platform(name: str, value: Any) -> str | None:
    if value is None or value == "":  # JAX's "the default platform"
        return value
    if not isinstance(value, str):
        raise ArgumentTypeError(
            f"config.update({name!r}, {value!r}): the flag takes a platform name (a string "
            f"such as 'cpu'), got {type(value).__name__}.")
    names = [p.strip().lower() for p in value.split(",")] if name == "jax_platforms" \
        else [value.strip().lower()]
    if "cpu" not in names:
        raise ArgumentError(
            f"config.update({name!r}, {value!r}): functrans runs on the CPU only (numpy); "
            f"use 'cpu', or leave the flag unset.")
    return value


class Config:
    """JAX's `jax.config`: `update(name, value)` sets a flag, `config.<name>` reads it.

    Accepted flags: jax_enable_x64, jax_debug_nans, jax_disable_jit, jax_platform_name,
    jax_platforms, jax_compilation_cache_dir; any other name raises `ArgumentError` listing
    them.
    """

    def __init__(self):
        object.__setattr__(self, "_values", {
            "jax_enable_x64": True, "jax_debug_nans": False, "jax_disable_jit": False,
            "jax_platform_name": "cpu", "jax_platforms": "cpu",
            "jax_compilation_cache_dir": None})

    def update(self, name: str, value: Any) -> None:
        """Set the flag `name` to `value` (see the module docstring for what each does)."""
        if name in _BOOL_FLAGS:
            value = _as_bool(name, value)
        elif name in _PLATFORM_FLAGS:
            value = _check_platform(name, value)
        elif name in _PATH_FLAGS:
            if value is not None and not isinstance(value, str | os.PathLike):
                raise ArgumentTypeError(f"config.update({name!r}, ...): expected a directory "
                                        f"path or None, got {type(value).__name__}.")
        else:
            raise ArgumentError(
                f"config.update: unknown flag {name!r}; functrans accepts "
                f"{', '.join(FLAGS)}.")
        if name == "jax_enable_x64" and not value:
            warnings.warn(
                "config.update('jax_enable_x64', False) is a no-op in functrans: arrays keep "
                "numpy's dtypes (float64 by default); pass float32 arrays to compute in "
                "32 bits.", UserWarning, stacklevel=2)
        elif name == "jax_debug_nans":
            _nan_check.set_enabled(value)
            _jit_api.set_flags(debug_nans=value)
        elif name == "jax_disable_jit":
            _jit_api.set_flags(disable_jit=value)
        elif name == "jax_compilation_cache_dir":
            _kernels.set_cache_dir(value)
        self._values[name] = value

    def read(self, name: str) -> Any:
        """The value of the flag `name`."""
        try:
            return self._values[name]
        except KeyError:
            raise ArgumentError(
                f"config: unknown flag {name!r}; functrans accepts {', '.join(FLAGS)}.") \
                from None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(
                f"config has no flag {name!r}; functrans accepts {', '.join(FLAGS)}.") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"set flags with config.update({name!r}, value).")

    def __repr__(self):
        return f"Config({self._values})"


config = Config()


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Within the block, `jit(f)` calls `f` itself, op by op (JAX's `jax.disable_jit`); the
    flag's previous value comes back on exit.

    >>> import functrans as ft
    >>> f = ft.jit(lambda x: print("running f") or x + 1)
    >>> with ft.disable_jit():
    ...     _ = f(1.0), f(2.0)
    running f
    running f
    """
    before = config.jax_disable_jit
    config.update("jax_disable_jit", disable)
    try:
        yield
    finally:
        config.update("jax_disable_jit", before)
