"""functrans/backends/cupy.py without a GPU: the CuPy case table and scripts/gpu_check.py run
in a fresh process against a stand-in for CuPy written below (numpy underneath, with CuPy's
refusals: a numpy array is no operand of its functions or operators, and converting one of its
arrays to numpy implicitly raises). It checks the adapter's routing, conversions and jit path;
tests/primitives/test_rules_cupy.py runs the same table on a real GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = '''\
# A stand-in for CuPy on the CPU: numpy underneath, CuPy's protocol and refusals on top. Like
# cupy.ndarray, its array is no numpy.ndarray subclass: numpy reaches it only through
# __array_ufunc__ / __array_function__ (answered with this module's functions) and __array__,
# which refuses, so np.asarray(x) and every numpy function this module lacks raise TypeError.
import functools, operator, types
import numpy as _np

__version__ = "fake"
_REFUSE = ("Implicit conversion to a NumPy array is not allowed. "
           "Please use `.get()` to construct a NumPy array explicitly.")


class ndarray:
    __slots__ = ("_a",)
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None, copy=None):
        raise TypeError(_REFUSE)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        fn = globals().get(ufunc.__name__)
        if fn is None or method != "__call__":
            return NotImplemented
        return fn(*inputs, **kwargs)

    def __array_function__(self, func, types_, args, kwargs):
        fn = globals().get(func.__name__)
        if fn is None:
            return NotImplemented
        return fn(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):  # numpy's __array_interface__ and the like: CuPy has none
            raise AttributeError(name)
        v = getattr(self._a, name)
        return _device_fn(v) if callable(v) else _wrap(v)

    def get(self):
        return _np.array(self._a)

    def __getitem__(self, k):
        _check(k)
        return _wrap(self._a[_plain(k)])

    def __setitem__(self, k, v):
        _check(k)
        _check(v)
        self._a[_plain(k)] = _plain(v)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __repr__(self):
        return "fakecupy." + repr(self._a)

    __str__ = __repr__

    def __format__(self, spec):
        return format(self._a, spec)

    def __copy__(self):
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy())

    def __reduce__(self):
        return (ndarray, (self._a,))


def _binary(ufunc, reflected=False):
    def op(self, other):
        if not reflected:
            return globals()[ufunc](self, other)
        return globals()[ufunc](other, self)
    return op


def _inplace(name):
    def op(self, other):
        _check(other)
        getattr(operator, name)(self._a, _plain(other))
        return self
    return op


for _name, _ufunc in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                      ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                      ("mod", "remainder"), ("pow", "power"), ("matmul", "matmul"),
                      ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                      ("lshift", "left_shift"), ("rshift", "right_shift")]:
    setattr(ndarray, f"__{_name}__", _binary(_ufunc))
    setattr(ndarray, f"__r{_name}__", _binary(_ufunc, reflected=True))
    setattr(ndarray, f"__i{_name}__", _inplace(f"i{_name}"))
for _name, _ufunc in [("eq", "equal"), ("ne", "not_equal"), ("lt", "less"),
                      ("le", "less_equal"), ("gt", "greater"), ("ge", "greater_equal")]:
    setattr(ndarray, f"__{_name}__", _binary(_ufunc))
for _name, _ufunc in [("neg", "negative"), ("pos", "positive"), ("abs", "absolute"),
                      ("invert", "invert")]:
    setattr(ndarray, f"__{_name}__", (lambda u: lambda self: globals()[u](self))(_ufunc))


def _check(x):
    if isinstance(x, _np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    if isinstance(x, (list, tuple)):
        for y in x:
            _check(y)


def _plain(x):
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, tuple):
        return tuple(_plain(y) for y in x)
    if isinstance(x, list):
        return [_plain(y) for y in x]
    return x


def _wrap(x):
    if isinstance(x, _np.ndarray):
        return ndarray(x)
    if isinstance(x, _np.generic):
        return ndarray(_np.asarray(x))
    if isinstance(x, tuple):
        return tuple(_wrap(y) for y in x)
    if isinstance(x, list):
        return [_wrap(y) for y in x]
    return x


def _device_fn(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        for a in (*args, *kwargs.values()):
            _check(a)
        return _wrap(fn(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()}))
    return call


_SKIP = {"ndarray", "asarray", "array", "asnumpy", "linalg", "fft", "cuda", "random", "testing"}
for _k in dir(_np):
    _v = getattr(_np, _k)
    if _k.startswith("_") or _k in _SKIP or isinstance(_v, type) or not callable(_v):
        continue
    globals()[_k] = _device_fn(_v)
for _k in ("float64", "float32", "int64", "int32", "bool_", "uint32", "complex128", "dtype"):
    globals()[_k] = getattr(_np, _k)


def asarray(a, dtype=None, order=None):
    if isinstance(a, ndarray):
        return a if dtype is None else a.astype(dtype, copy=False)
    return ndarray(_np.array(_plain(a), dtype=dtype))


def array(a, dtype=None, copy=True, **kw):
    return ndarray(_np.array(_plain(a), dtype=dtype, copy=copy))


def asnumpy(a):
    return _np.array(_plain(a))


def _module(src):
    return types.SimpleNamespace(**{k: _device_fn(v) for k, v in vars(src).items()
                                    if callable(v) and not k.startswith("_")})


linalg = _module(_np.linalg)
fft = _module(_np.fft)


class _Device:
    def synchronize(self):
        pass


cuda = types.SimpleNamespace(
    runtime=types.SimpleNamespace(getDeviceCount=lambda: 1,
                                  getDeviceProperties=lambda i: {"name": b"fake CPU device"}),
    Device=_Device)
'''


def _run(tmp_path, *argv, timeout=600):
    package = tmp_path / "stand_in" / "cupy"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(STAND_IN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "stand_in"), str(ROOT)]))
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_case_table_and_gpu_check_on_the_stand_in(tmp_path):
    out = tmp_path / "gpu.md"
    run = _run(tmp_path, "scripts/gpu_check.py", "--out", str(out), "--quick", "--budget", "300")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    text = out.read_text()
    # two cases apply CuPy's own operator to a numpy array the case made: skipped, eager only
    assert "failed 0, skipped 2 (of which 0 for the time budget)" in text, text
    passed = int(text.split("passed ", 1)[1].split(",", 1)[0])
    assert passed > 500, text
    assert "| 256 | 2 |" in text
