"""Run PyTorch's own autograd tests against functrans.torch and count what passes.

    python scripts/run_pytorch_autograd_tests.py PYTORCH_TEST_DIR [--json OUT] [-k SUBSTRING]

PYTORCH_TEST_DIR is a PyTorch checkout's `test/` folder (any file layout holding
`test_autograd.py` and/or `autograd/test_functional.py`; a missing file is reported and
skipped). PyTorch itself must be installed: its `torch.testing._internal` helpers
(`parametrize`, `subtest`, skip decorators) are used as they are.

How `torch` becomes functrans.torch without touching `sys.modules`: each test file is compiled
and executed in a fresh namespace whose `__builtins__.__import__` answers `import torch...`
with functrans.torch's modules. `torch.testing._internal.*` resolves to PyTorch's real helper
modules, except the names that must work on functrans tensors: `TestCase` (its
`assertEqual` compares values as PyTorch's does, with PyTorch's default tolerances),
`gradcheck`/`gradgradcheck` (functrans.torch's), `instantiate_device_type_tests` (CPU only)
and `run_tests`. A name the shim lacks in a `from torch... import` line becomes a
placeholder that fails the tests using it with "missing in functrans.torch: NAME", so one
absent name costs those tests, not the whole file.

Every collected test falls in one group: out of scope (by the rules in OUT_OF_SCOPE, each
with its reason) or selected; selected tests pass, fail, error or skip, and failures are
grouped by their first line so the gap that costs the most tests is first.
"""

from __future__ import annotations

import argparse
import builtins
import collections
import importlib
import inspect
import json
import re
import signal
import sys
import time
import traceback
import types
import unittest
import warnings
from pathlib import Path

import numpy as np

FILES = ("test_autograd.py", "autograd/test_functional.py")

# (pattern on "Class.test_name", group): the first match decides. These are the tests outside
# "CPU, dense autograd": other devices, layouts, dtypes, and other PyTorch
# subsystems that functrans.torch does not provide.
OUT_OF_SCOPE = [
    (r"cuda|CUDA|_mps|MPS|xpu|XPU|accelerator|multi_device|stream|Stream|pin_memory",
     "devices other than the CPU"),
    (r"sparse|Sparse|mkldnn|nested_tensor|NestedTensor|jagged|_csr|_coo|layout",
     "non-dense layouts (sparse, mkldnn, nested)"),
    (r"chalf|named_tensor", "complex32 (chalf) and named tensors"),
    (r"logging_tensor|LoggingTensor|subclass|Subclass|torch_dispatch|TorchDispatch|"
     r"python_dispatch|dispatch_mode|__torch_function__|_wrapper_tensor|fake|Fake|"
     r"functional_tensor",
     "tensor subclasses and dispatch modes"),
    (r"forward_ad|ForwardMode|fw_|_fwd|fwad|forward_mode|dual|make_dual|ForwardAD",
     "forward-mode AD (torch.autograd.forward_ad)"),
    (r"profil|Profil|record_function|emit_nvtx|emit_itt|kineto|flop", "the profiler"),
    (r"dynamo|Dynamo|compile|Compile|jit|JIT|script|trace|inductor|aot|export",
     "torch.compile, TorchScript and tracing"),
    (r"vmap|functorch|is_grads_batched|batched_grad|BatchedGrad", "torch.func / vmap internals"),
    (r"thread|Thread|multiprocess|fork|deadlock|reentrant_parent|Multithread|"
     r"device_thread|TestAutogradMultipleDispatch|parallel",
     "multithreaded engine, multiprocessing and per-device dispatch"),
    (r"anomaly|Anomaly", "anomaly mode"),
    (r"_meta\b|meta_|TestAutogradDeviceTypeMETA|skipMeta|quantiz|mkl|cpp_|cpp\b|C\+\+|custom_op|"
     r"library|Library|load_inline|torchbind|_ops\.", "C++ extensions, custom ops, meta tensors"),
    (r"float16|half|bfloat16|_bf16|quint|qint", "reduced-precision dtypes"),
    (r"TestSelectiveActivationCheckpoint|selective|CheckpointPolicy|ac_graph|sac",
     "selective activation checkpointing (dispatch-mode based)"),
    (r"gc\b|_gc_|leak|weakref|refcycle|cycle|del_|_del\b|memory|Memory|free|use_count",
     "CPython reference-counting and memory-release details"),
]


class MissingName(Exception):
    """A name test code imported from torch that functrans.torch does not have."""


def _missing_msg(name: str) -> str:
    return f"missing in functrans.torch: {name}"


class _Absent:
    """Stands for a missing name: using it raises MissingName; as a decorator it wraps."""

    def __init__(self, name: str, lenient: bool = False):
        self._name = name
        self._lenient = lenient  # made for a module or class body: calls give placeholders

    def __bool__(self):
        return False  # `if torch.backends.x.is_available()` reads as unavailable

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], _Absent):
            fn = args[0]
            name = self._name
            if isinstance(fn, type):
                return fn

            def missing(*a, **k):
                raise MissingName(_missing_msg(name))

            missing.__name__ = getattr(fn, "__name__", "missing")
            return missing
        if self._lenient:
            return _Absent(f"{self._name}()", lenient=True)
        raise MissingName(_missing_msg(self._name))

    def __getattr__(self, attr):
        if attr.startswith("_") or attr in ("parametrize_fn", "dtypes"):
            raise AttributeError(attr)  # what test frameworks probe with hasattr
        return _Absent(f"{self._name}.{attr}", self._lenient)

    def __enter__(self):
        raise MissingName(_missing_msg(self._name))

    def __exit__(self, *exc):
        return False

    def __mro_entries__(self, bases):
        raise MissingName(_missing_msg(self._name))

    def __repr__(self):
        return f"<missing {self._name}>"


def _to_numpy(x, ftorch):
    if isinstance(x, ftorch.Tensor):
        return x.detach().numpy()
    return np.asarray(x)


_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _make_test_case(real_common_utils, ftorch):
    base = unittest.TestCase

    class TestCase(base):
        """PyTorch's TestCase surface, comparing functrans tensors as PyTorch compares tensors."""

        precision = 1e-5
        rel_tol = 0
        device_type = "cpu"
        _do_cuda_memory_leak_check = False
        _do_cuda_non_default_stream = False

        def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, equal_nan=True,
                        exact_dtype=True, exact_device=False, exact_layout=False,
                        exact_stride=False, exact_is_coalesced=False):
            problem = _compare(x, y, ftorch, atol, rtol, equal_nan, exact_dtype)
            if problem:
                raise self.failureException(problem + (f"\n{msg}" if msg else ""))

        def assertNotEqual(self, x, y, msg=None, *, atol=None, rtol=None, **kwargs):
            if not _compare(x, y, ftorch, atol, rtol, True, False):
                raise self.failureException(msg or f"{x!r} == {y!r}")

        def assertEqualIgnoreType(self, *args, **kwargs):
            return self.assertEqual(*args, exact_dtype=False, **kwargs)

        def assertExpected(self, *args, **kwargs):
            raise unittest.SkipTest("needs PyTorch's expect files")

        def assertExpectedInline(self, *args, **kwargs):
            raise unittest.SkipTest("compares against PyTorch's printed internals")

        def assertWarnsOnceRegex(self, category, regex=""):
            return self.assertWarnsRegex(category, regex)

        def assertNotWarn(self, callable, msg=""):
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                callable()
            self.assertTrue(len(ws) == 0, msg)

        def assertLeaksNoCudaTensors(self, name=None):
            return _NullContext()

        def assertRaisesRegexWithHighlight(self, exc, regex, highlight):
            return self.assertRaisesRegex(exc, regex)

        def assertExpectedRaisesInline(self, exc_type, callable, expect, *args, **kwargs):
            raise unittest.SkipTest("compares against PyTorch's printed internals")

        def run(self, result=None):
            return base.run(self, result)

    return TestCase


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _compare(x, y, ftorch, atol, rtol, equal_nan, exact_dtype):
    """None when x equals y as PyTorch's assertEqual judges, else the reason."""
    t = ftorch.Tensor
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)) and not (
        isinstance(x, t) or isinstance(y, t)
    ):
        if len(x) != len(y):
            return f"lengths differ: {len(x)} vs {len(y)}"
        for i, (a, b) in enumerate(zip(x, y)):
            problem = _compare(a, b, ftorch, atol, rtol, equal_nan, exact_dtype)
            if problem:
                return f"item {i}: {problem}"
        return None
    if isinstance(x, dict) and isinstance(y, dict):
        if set(x) != set(y):
            return f"keys differ: {sorted(map(str, x))} vs {sorted(map(str, y))}"
        for k in x:
            problem = _compare(x[k], y[k], ftorch, atol, rtol, equal_nan, exact_dtype)
            if problem:
                return f"key {k!r}: {problem}"
        return None
    if not (isinstance(x, (t, int, float, bool, complex, np.ndarray, np.generic, list, tuple))
            and isinstance(y, (t, int, float, bool, complex, np.ndarray, np.generic, list, tuple))):
        return None if x == y else f"{x!r} != {y!r}"
    if exact_dtype and isinstance(x, t) and isinstance(y, t) and x.dtype != y.dtype:
        return f"dtypes differ: {x.dtype} vs {y.dtype}"
    a = _to_numpy(x, ftorch)
    b = _to_numpy(y, ftorch)
    if isinstance(x, t) and isinstance(y, t) and a.shape != b.shape:
        return f"shapes differ: {a.shape} vs {b.shape}"
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        return f"shapes differ: {a.shape} vs {b.shape}"
    if a.dtype == bool or b.dtype == bool or (a.dtype.kind in "iu" and b.dtype.kind in "iu"):
        return None if np.array_equal(a, b) else f"values differ:\n{a}\nvs\n{b}"
    dtype_name = str(x.dtype).replace("torch.", "") if isinstance(x, t) else (
        str(y.dtype).replace("torch.", "") if isinstance(y, t) else "float64")
    default_rtol, default_atol = _TOLERANCES.get(dtype_name, (0.0, 0.0))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    a = a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64)
    b = b.astype(a.dtype)
    ok = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if ok.all():
        return None
    worst = np.max(np.abs(a - b)[~ok]) if (~ok).any() else 0
    return f"values differ (max abs diff {worst}, rtol={rtol}, atol={atol}):\n{a}\nvs\n{b}"


class _ModuleView(types.ModuleType):
    """What test code sees as `torch.<path>`: functrans.torch's module, read-through."""

    def __init__(self, path: str, target, resolver):
        super().__init__(path)
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_resolver", resolver)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            return getattr(self._target, name)
        try:
            value = getattr(self._target, name)
        except AttributeError:
            sub = self._resolver.module(f"{self.__name__}.{name}")
            if sub is None and not sys._getframe(1).f_code.co_flags & inspect.CO_NEWLOCALS:
                # read by a module or class body (a decorator's argument): a placeholder, so
                # one missing name costs the tests that use it, not the whole file
                return _Absent(f"{self.__name__}.{name}", lenient=True)
            if sub is None:
                raise AttributeError(
                    f"module '{self.__name__}' has no attribute '{name}' "
                    f"({_missing_msg(self.__name__ + '.' + name)})"
                ) from None
            return sub
        if isinstance(value, types.ModuleType) and value.__name__.startswith("functrans.torch"):
            return self._resolver.module(f"{self.__name__}.{name}") or value
        return value

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


class _Resolver:
    """Maps the module paths test code imports to functrans.torch or PyTorch's test helpers."""

    def __init__(self, overrides: dict):
        import functrans.torch as ftorch

        self.ftorch = ftorch
        self.overrides = overrides
        self.views: dict[str, types.ModuleType | None] = {}

    def module(self, path: str):
        if path in self.views:
            return self.views[path]
        if path == "torch.testing" or path.startswith("torch.testing._internal") or path in (
            "torch.utils._mode_utils", "torch.utils._python_dispatch", "torch.utils.flop_counter",
        ):
            view = self._helpers(path)
        else:
            try:
                target = importlib.import_module("functrans." + path)
            except ImportError:
                target = None
            view = None if target is None else _ModuleView(path, target, self)
        self.views[path] = view
        return view

    def _helpers(self, path):
        try:
            real = importlib.import_module(path)
        except Exception:  # noqa: BLE001  (a helper module PyTorch's build lacks)
            return None
        view = types.ModuleType(path)
        view.__dict__.update({k: v for k, v in vars(real).items() if not k.startswith("__")})
        view.__dict__.update(self.overrides.get(path, {}))
        return view

    def absent_module(self, path):
        mod = types.ModuleType(path)
        mod.__getattr__ = lambda name: _Absent(f"{path}.{name}")
        return mod

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        if not level and name.startswith("autograd.test_"):
            # test_autograd.py imports the classes of the autograd/ test files so that
            # PyTorch's runner finds them; each of those files is run (or left out) on its own
            return self.absent_module(name)
        if level or not (name == "torch" or name.startswith("torch.")):
            return _real_import(name, globals, locals, fromlist, level)
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            path = ".".join(parts[:i])
            if self.module(path) is None:
                self.views[path] = self.absent_module(path)
        if not fromlist:
            top = self.views["torch"]
            return top
        mod = self.views[name]
        for item in fromlist:
            if item == "*":
                continue
            try:
                getattr(mod, item)
            except AttributeError:
                sub = self.module(f"{name}.{item}")
                setattr(mod, item, sub if sub is not None else _Absent(f"{name}.{item}"))
        return mod


_real_import = builtins.__import__


def _overrides(ftorch, TestCase, instantiate_device_type_tests):
    ft_gradcheck = importlib.import_module("functrans.torch.autograd.gradcheck")

    def gradcheck(fn, inputs, **kwargs):
        kwargs.pop("fast_mode", None)
        return ft_gradcheck.gradcheck(fn, inputs, **kwargs)

    def gradgradcheck(fn, inputs, grad_outputs=None, **kwargs):
        kwargs.pop("fast_mode", None)
        return ft_gradcheck.gradgradcheck(fn, inputs, grad_outputs, **kwargs)

    def make_tensor(*shape, dtype, device="cpu", low=None, high=None, requires_grad=False,
                    noncontiguous=False, exclude_zero=False, memory_format=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        low = -9.0 if low is None else low
        high = 9.0 if high is None else high
        values = np.random.default_rng().uniform(low, high, size=shape)
        out = ftorch.tensor(values, dtype=dtype)
        if dtype.is_floating_point and requires_grad:
            out.requires_grad_()
        return out

    def mask_not_all_zeros(shape):
        # PyTorch's helper, making a functrans tensor: a random mask with a True in it
        while True:
            result = ftorch.randn(shape).gt(0)
            if result.sum() > 0:
                return result

    common_utils = {
        "TestCase": TestCase, "gradcheck": gradcheck, "gradgradcheck": gradgradcheck,
        "run_tests": lambda *a, **k: None, "TEST_WITH_TORCHDYNAMO": False,
        "TEST_CUDA": False, "TEST_WITH_ROCM": False,
    }
    return {
        "torch.testing._internal.common_utils": common_utils,
        "torch.testing._internal.common_device_type": {
            "instantiate_device_type_tests": instantiate_device_type_tests,
            **_dtype_decorators(),
        },
        "torch.testing._internal.common_cuda": {"TEST_CUDA": False},
        "torch.testing._internal.common_methods_invocations": {
            "mask_not_all_zeros": mask_not_all_zeros,
        },
        "torch.testing": {"make_tensor": make_tensor},
    }


def _dtype_decorators() -> dict:
    """`@dtypes(...)` and its per-device forms, taking functrans.torch's dtypes.

    PyTorch's own check (`isinstance(arg, torch.dtype)`) refuses them; what the decorator
    records is the same, and `_expand_device_test` reads it by dtype name."""

    class dtypes:
        def __init__(self, *args, device_type="all"):
            self.args = args
            self.device_type = device_type

        def __call__(self, fn):
            fn.dtypes = {**getattr(fn, "dtypes", {}), self.device_type: self.args}
            return fn

    def for_device(device):
        return type(f"dtypesIf{device.upper()}", (dtypes,), {
            "__init__": lambda self, *args: dtypes.__init__(self, *args, device_type=device)})

    return {"dtypes": dtypes, "dtypesIfCPU": for_device("cpu"),
            "dtypesIfCUDA": for_device("cuda"), "dtypesIfMPS": for_device("mps")}


def _device_type_instantiator(ftorch):
    def instantiate_device_type_tests(generic, scope, except_for=None, only_for=None, **kwargs):
        excluded = {except_for} if isinstance(except_for, str) else set(except_for or ())
        only = {only_for} if isinstance(only_for, str) else set(only_for or ("cpu",))
        if "cpu" in excluded or "cpu" not in only:
            scope[generic.__name__ + "CPU"] = _excluded_class(generic, "instantiated for "
                                                              "accelerators only")
            scope.pop(generic.__name__, None)
            return
        cls = type(generic.__name__ + "CPU", (generic,), {"device_type": "cpu"})
        for name in [n for n in dir(generic) if n.startswith("test")]:
            fn = getattr(generic, name)
            delattr_safe(cls, name)
            for test_name, test in _expand_device_test(name, fn, generic, cls, ftorch):
                setattr(cls, test_name, test)
        for name in [n for n in list(vars(generic)) if n.startswith("test")]:
            setattr(generic, name, None)
        scope.pop(generic.__name__, None)
        scope[cls.__name__] = cls

    return instantiate_device_type_tests


def delattr_safe(cls, name):
    if name in vars(cls):
        delattr(cls, name)


def _excluded_class(generic, why):
    return type(generic.__name__ + "CPU", (unittest.TestCase,), {"_excluded": why})


def _expand_device_test(name, fn, generic, cls, ftorch):
    variants = [(name, fn, {})]
    if hasattr(fn, "parametrize_fn"):
        variants = [
            (name + (f"_{suffix}" if suffix else ""), test, kwargs)
            for test, suffix, kwargs, _ in fn.parametrize_fn(fn, generic, cls)
        ]
    for vname, vfn, kwargs in variants:
        dtypes = getattr(fn, "dtypes", None)
        dtype_list = None
        if dtypes:
            dtype_list = dtypes.get("cpu", dtypes.get("all"))
        if dtype_list:
            for real_dtype in dtype_list:
                dname = str(real_dtype).replace("torch.", "")
                dtype = getattr(ftorch, dname, None)
                yield f"{vname}_cpu_{dname}", _bind(vfn, kwargs, dtype, dname)
        else:
            yield f"{vname}_cpu", _bind(vfn, kwargs, None, None)


def _bind(fn, kwargs, dtype, dname):
    def test(self):
        if dname is not None and dtype is None:
            raise MissingName(_missing_msg(f"torch.{dname}"))
        extra = {} if dname is None else {"dtype": dtype}
        # @deviceCountAtLeast tests take the list of devices: here the CPU alone
        device = ["cpu"] if hasattr(fn, "num_required_devices") else "cpu"
        return fn(self, device, **extra, **kwargs)

    test.__name__ = fn.__name__
    return test


def load(path: Path, resolver) -> tuple[dict, str | None]:
    """Execute one PyTorch test file with `torch` resolved by `resolver`."""
    source = path.read_text()
    namespace = {"__name__": f"pytorch_{path.stem}", "__file__": str(path)}
    namespace["__builtins__"] = dict(vars(builtins), __import__=resolver.import_)
    try:
        exec(compile(source, str(path), "exec"), namespace)
    except Exception:  # noqa: BLE001  (report the file as not loadable, with its traceback)
        return namespace, traceback.format_exc(limit=4)
    return namespace, None


def collect(namespace: dict) -> list[tuple[str, unittest.TestCase | None, str | None]]:
    out = []
    for cname, cls in namespace.items():
        if not (isinstance(cls, type) and issubclass(cls, unittest.TestCase)):
            continue
        if cname.startswith("_"):
            continue
        if getattr(cls, "_excluded", None):
            out.append((f"{cname}.*", None, cls._excluded))
            continue
        for name in unittest.TestLoader().getTestCaseNames(cls):
            if getattr(cls, name, None) is None:
                continue
            out.append((f"{cname}.{name}", cls(name), None))
    return out


def out_of_scope(test_id: str) -> str | None:
    for pattern, group in OUT_OF_SCOPE:
        if re.search(pattern, test_id):
            return group
    return None


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout("test ran past its time limit")


def run_one(test: unittest.TestCase, seconds: int) -> tuple[str, str]:
    result = unittest.TestResult()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(seconds)
    try:
        with warnings.catch_warnings():  # the test's own filter changes end with it
            test.run(result)
    except _Timeout:
        return "error", "timeout"
    finally:
        signal.alarm(0)
    if result.skipped:
        return "skipped", result.skipped[0][1].splitlines()[0][:200]
    if result.expectedFailures:
        return "passed", ""
    if result.unexpectedSuccesses:
        return "failed", "unexpected success of an expected failure"
    for kind, items in (("failed", result.failures), ("error", result.errors)):
        if items:
            return kind, _summary(items[0][1])
    return "passed", ""


def _summary(tb: str) -> str:
    lines = [ln for ln in tb.strip().splitlines() if ln.strip()]
    for i in range(len(lines) - 1, -1, -1):
        head = lines[i]
        if not head.startswith(" ") and ":" in head and not head.startswith("Traceback"):
            line = lines[i]
            break
    else:
        line = lines[-1]
    line = re.sub(r"0x[0-9a-f]+", "0x…", line)
    line = re.sub(r"tensor\(.*", "tensor(…)", line)
    line = re.sub(r"\d+\.\d+(e-?\d+)?", "N", line)
    return line[:160]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("test_dir", type=Path, help="a PyTorch checkout's test/ folder")
    parser.add_argument("--json", type=Path, help="write every test's outcome here")
    parser.add_argument("-k", dest="keyword", help="run only tests whose id contains this")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per test")
    parser.add_argument("--show", type=int, default=40, help="failure groups to print")
    args = parser.parse_args(argv)

    import functrans.torch as ftorch
    from torch.testing._internal import common_utils as real_common_utils

    TestCase = _make_test_case(real_common_utils, ftorch)
    overrides = _overrides(ftorch, TestCase, _device_type_instantiator(ftorch))

    outcomes = {}
    for rel in FILES:
        path = args.test_dir / rel
        if not path.exists():
            print(f"{rel}: not found under {args.test_dir}; skipped")
            continue
        default_dtype = ftorch.get_default_dtype()
        namespace, load_error = load(path, _Resolver(overrides))
        if load_error:
            print(f"{rel}: could not be loaded:\n{load_error}")
            continue
        for test_id, test, excluded in collect(namespace):
            key = f"{rel}::{test_id}"
            if args.keyword and args.keyword not in key:
                continue
            group = excluded or out_of_scope(test_id)
            if group:
                outcomes[key] = ("out of scope", group)
                continue
            ftorch.set_default_dtype(default_dtype)
            start = time.perf_counter()
            status, why = run_one(test, args.timeout)
            outcomes[key] = (status, why, round(time.perf_counter() - start, 3))
        ftorch.set_default_dtype(default_dtype)

    if args.json:
        args.json.write_text(json.dumps(outcomes, indent=1, sort_keys=True))
    report(outcomes, args.show)
    return 0


# failures that come from reaching into PyTorch's C++ internals rather than its autograd API
INTERNALS = re.compile(r"torch\._C|_execution_engine|_saved_|_raw_saved|_input_metadata|"
                       r"_backward_hooks|_calculate_shape|_functions\.Resize|"
                       r"set_multithreading_enabled")


def report(outcomes: dict, show: int) -> None:
    by_file = collections.defaultdict(collections.Counter)
    scope = collections.Counter()
    reasons = collections.Counter()
    for key, (status, why, *_) in outcomes.items():
        rel = key.split("::")[0]
        by_file[rel]["collected"] += 1
        if status == "out of scope":
            scope[why] += 1
            continue
        by_file[rel]["selected"] += 1
        by_file[rel][status] += 1
        if status in ("failed", "error"):
            reasons[why] += 1
            by_file[rel]["internal"] += bool(INTERNALS.search(why))
    for rel, c in by_file.items():
        print(f"{rel}: collected {c['collected']}, selected {c['selected']}, passed "
              f"{c['passed']}, failed {c['failed']}, errors {c['error']}, skipped {c['skipped']} "
              f"({c['internal']} of the failures and errors reach into PyTorch internals: "
              "torch._C, SavedVariable accessors, engine callbacks)")
    print("\nout of scope:")
    for group, n in scope.most_common():
        print(f"  {n:5d}  {group}")
    print("\nfailures and errors by first line:")
    for why, n in reasons.most_common(show):
        print(f"  {n:5d}  {why}")


if __name__ == "__main__":
    sys.exit(main())
