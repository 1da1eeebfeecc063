"""Grad mode (thread-local): whether ops on tensors that require grad record. Its switches are
context managers and decorators, as in PyTorch; `set_grad_enabled(False)` alone switches at once."""

from __future__ import annotations

import functools
import inspect
import threading
import warnings


class _Mode(threading.local):
    def __init__(self):
        self.enabled, self.inference, self.view_replay = True, False, False


MODE = _Mode()

# inference_mode blocks open, in all threads: while none is, a new tensor skips the (thread-local)
# inference-mode test
INFERENCE_BLOCKS = [0]
_BLOCKS_LOCK = threading.Lock()


def is_grad_enabled() -> bool:
    """torch.is_grad_enabled: whether operations record for autograd now."""
    return MODE.enabled


def is_inference_mode_enabled() -> bool:
    """Whether an `inference_mode()` block is active in this thread."""
    return MODE.inference


class _GradModeContext:
    """Sets MODE's `_fields()` on entry, restores them on exit; also decorates functions, each
    call under a `clone()` (the switch made again from the constructor's `_args`)."""

    _target = True
    _args = ()

    def __new__(cls, *args, **kwargs):
        given = [*args, *kwargs.values()]
        if given and callable(given[0]):  # a bare decorator: @no_grad, inference_mode(mode=fn)
            return cls()(given[0])
        return super().__new__(cls)

    def _fields(self) -> dict:
        return {"enabled": self._target}

    def __enter__(self):
        fields = self._fields()
        self._prev = {k: getattr(MODE, k) for k in fields}
        MODE.__dict__.update(fields)

    def __exit__(self, *exc):
        MODE.__dict__.update(self._prev)
        return False

    def clone(self):
        return type(self)(*self._args)

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
    """`fn`'s generator, run under a fresh `make_context()` at each resumption, as PyTorch's."""
    @functools.wraps(fn)
    def generator_context(*args, **kwargs):
        gen, resume, arg = fn(*args, **kwargs), "send", None
        while True:
            try:
                with make_context():
                    response = getattr(gen, resume)(arg)
            except StopIteration as e:
                return e.value
            try:
                resume, arg = "send", (yield response)
            except GeneratorExit:
                with make_context():
                    gen.close()
                raise
            except BaseException as e:
                resume, arg = "throw", e
    return generator_context


class no_grad(_GradModeContext):
    """Disable recording: results of operations do not require grad.

    >>> import functrans.torch as torch
    >>> x = torch.tensor([1.0], requires_grad=True)
    >>> with torch.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    _target = False


class enable_grad(_GradModeContext):
    """Enable recording inside a no_grad region."""


class set_grad_enabled(_GradModeContext):
    """Switch grad mode on or off now; as a context manager, restore it on exit."""

    def __init__(self, mode: bool):
        self._target = bool(mode)
        self._args = (self._target,)
        super().__enter__()

    def __enter__(self):
        return None

    def __call__(self, fn):
        self.__exit__()  # used as a decorator: switch only while `fn` runs
        return super().__call__(fn)


class inference_mode(_GradModeContext):
    """no_grad whose tensors are inference tensors: never saved for backward, and outside the
    mode refusing in-place updates and requires_grad. `inference_mode(False)` turns it off."""

    def __init__(self, mode: bool = True):
        self._mode = bool(mode)
        self._args = (self._mode,)

    def _fields(self) -> dict:
        return {"enabled": not self._mode, "inference": self._mode}

    def _count(self, step):
        if self._mode:
            with _BLOCKS_LOCK:
                INFERENCE_BLOCKS[0] += step

    def __enter__(self):
        super().__enter__()
        self._count(1)

    def __exit__(self, *exc):
        super().__exit__()
        self._count(-1)
        return False


class _force_original_view_tracking(set_grad_enabled):
    """A flag kept for code that sets it: views here always replay the op that made them."""

    __call__ = _GradModeContext.__call__

    def _fields(self) -> dict:
        return {"view_replay": self._target}
