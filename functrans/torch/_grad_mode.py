"""Grad mode: whether operations on tensors that require grad are recorded (thread-local).

`no_grad`, `enable_grad` and `set_grad_enabled` work as context managers and as decorators, as
in PyTorch; `set_grad_enabled(False)` called as a plain function switches the mode at once.
"""

from __future__ import annotations

import functools
import inspect
import threading
import warnings


class _Mode(threading.local):
    def __init__(self):
        self.enabled = True
        self.inference = False
        self.view_replay = False


MODE = _Mode()

# How many inference_mode blocks are open, in all threads: while none is, making a tensor skips
# the (thread-local) inference-mode test
INFERENCE_BLOCKS = [0]
_BLOCKS_LOCK = threading.Lock()


def is_grad_enabled() -> bool:
    """torch.is_grad_enabled: whether operations record for autograd now."""
    return MODE.enabled


def is_inference_mode_enabled() -> bool:
    """Whether an `inference_mode()` block is active in this thread."""
    return MODE.inference


class _GradModeContext:
    """Base of the grad-mode context managers; instances also decorate functions."""

    _target = True

    def __enter__(self):
        self._prev = MODE.enabled
        MODE.enabled = self._target
        return None

    def __exit__(self, *exc):
        MODE.enabled = self._prev
        return False

    def clone(self):
        return type(self)()

    def __call__(self, fn):
        if inspect.isclass(fn):
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.", FutureWarning, stacklevel=2)
            cls = fn

            def fn(*args, **kwargs):  # PyTorch's behaviour: constructing runs in the mode
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.clone, fn)

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapped


def _wrap_generator(make_context, fn):
    """A generator function whose body runs under a fresh `make_context()` at every resumption
    (as PyTorch's decorators do): the caller's mode holds between the yields."""
    @functools.wraps(fn)
    def generator_context(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with make_context():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        gen.close()
                    raise
                except BaseException as e:
                    with make_context():
                        response = gen.throw(e)
                else:
                    with make_context():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return generator_context


class _Switch(_GradModeContext):
    """Grad mode switched to `_target`; also usable as a bare decorator (@torch.no_grad)."""

    def __new__(cls, orig_func=None):
        return super().__new__(cls) if orig_func is None else cls()(orig_func)


class no_grad(_Switch):
    """Disable recording: results of operations do not require grad.

    >>> import functrans.torch as torch
    >>> x = torch.tensor([1.0], requires_grad=True)
    >>> with torch.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _target = False


class enable_grad(_Switch):
    """Enable recording inside a no_grad region."""


class set_grad_enabled(_GradModeContext):
    """Switch grad mode on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode: bool):
        self._prev = MODE.enabled
        self._target = bool(mode)
        MODE.enabled = self._target

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        MODE.enabled = self._prev
        return False

    def __call__(self, fn):
        MODE.enabled = self._prev  # used as a decorator: switch only while `fn` runs
        return super().__call__(fn)

    def clone(self):
        return set_grad_enabled(self._target)


class inference_mode(_GradModeContext):
    """no_grad whose tensors are inference tensors, as in PyTorch: autograd refuses to save
    them for backward, and outside inference mode they refuse in-place updates and
    `requires_grad=True`. `inference_mode(False)` turns it off (and grad mode on).
    `@torch.inference_mode` without parentheses decorates too, as in PyTorch."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @torch.inference_mode

    def __init__(self, mode: bool = True):
        self._mode = bool(mode)
        self._target = not mode

    def __enter__(self):
        self._prev = MODE.enabled
        self._prev_inference = MODE.inference
        MODE.enabled = self._target
        MODE.inference = self._mode
        if self._mode:
            with _BLOCKS_LOCK:
                INFERENCE_BLOCKS[0] += 1
        return None

    def __exit__(self, *exc):
        MODE.enabled = self._prev
        MODE.inference = self._prev_inference
        if self._mode:
            with _BLOCKS_LOCK:
                INFERENCE_BLOCKS[0] -= 1
        return False

    def clone(self):
        return inference_mode(self._mode)


class _force_original_view_tracking(_GradModeContext):
    """torch.autograd._force_original_view_tracking: whether views replay their original view
    op (PyTorch's alternative to as_strided). Here every view already rebuilds through the op
    that made it, so the flag changes no value; it is kept, like PyTorch's, for code that sets
    and restores it. Calling it sets the flag at once; as a context manager it restores it."""

    def __init__(self, mode: bool):
        self._prev_replay = MODE.view_replay
        self._mode = bool(mode)
        MODE.view_replay = self._mode

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        MODE.view_replay = self._prev_replay
        return False

    def clone(self):
        return _force_original_view_tracking(self._mode)
