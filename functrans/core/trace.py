"""The interpreter stack: traces, tracers and `bind`.

Each active transform owns a `MainTrace` at a level of a thread-local stack. `bind` finds the
highest-level tracer among the arguments (or the dynamic trace of `make_jaxpr`), raises every
argument to that trace and lets it process the primitive. With no tracer and no dynamic trace,
`bind` calls the primitive's numpy implementation directly: that is eager mode.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any

import numpy as np

from functrans.backend import FOREIGN_TYPES, array_library
from functrans.core.avals import PYTHON_SCALARS, ShapedArray, get_aval
from functrans.errors import ConcretizationTypeError, TracerArrayConversionError, \
    TracerBoolConversionError, TracerIntegerConversionError, TracerItemAssignmentError, \
    UnexpectedTracerError, UnsizedTracerError


class MainTrace:
    """One active transform: its level in the stack, its Trace class and its global data."""

    __slots__ = ("level", "trace_type", "global_data", "trace", "alive", "name")

    def __init__(self, level: int, trace_type, global_data, name: str):
        self.level = level
        self.trace_type = trace_type
        self.global_data = global_data
        self.alive = True
        self.name = name
        self.trace = trace_type(self) if trace_type is not None else None

    def __repr__(self):
        return f"MainTrace({self.level}, {self.name})"


class _TraceState(threading.local):
    def __init__(self):
        self.base = MainTrace(0, None, None, "eager")
        self.stack = [self.base]
        self.dynamic = self.base


# The trace stack of this thread. Public for the eager fast paths of the layers above, which
# read it and never write it: `trace_state.dynamic.level == 0` means no trace is active that
# would stage a call made without tracer arguments (so the primitive may run its impl at once).
trace_state = _TraceState()


@contextmanager
def new_main(trace_type, global_data=None, *, dynamic: bool = False, name: str = "transform"):
    """Push a new transform onto this thread's stack for the duration of the block."""
    st = trace_state
    main = MainTrace(len(st.stack), trace_type, global_data, name)
    st.stack.append(main)
    prev_dynamic = st.dynamic
    if dynamic:
        st.dynamic = main
    try:
        yield main
    finally:
        st.dynamic = prev_dynamic
        popped = st.stack.pop()
        assert popped is main, "transforms must be exited in the order they were entered"
        main.alive = False
        # main <-> trace (and main -> data -> tracers -> trace) are reference cycles: broken
        # here, the tracers and residual arrays of a finished transform are freed at once
        # rather than by a later garbage collection. Leaked tracers still see `alive`.
        main.trace = main.global_data = None


def _leaked(main: MainTrace) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"a value traced by `{main.name}` was used after that transform returned: it leaked out "
        "(stored in a global, a closure or an attribute while the function was traced). Return "
        "every value you need from the transformed function instead of stashing it.")


class Trace:
    """How one transform interprets primitives. Subclasses define pure, lift and
    process_primitive."""

    __slots__ = ("main",)

    def __init__(self, main: MainTrace):
        self.main = main

    def pure(self, val):
        raise NotImplementedError

    def lift(self, tracer):
        return self.pure(tracer)

    def pure_scalar(self, val):
        """A Python scalar operand entering this trace (see `scalar_operand`)."""
        dyn = trace_state.dynamic
        if 0 < dyn.level < self.main.level:
            return self.lift(dyn.trace.pure(val))
        return self.pure(np.asarray(val))

    def full_raise(self, val):
        if not isinstance(val, Tracer):
            if isinstance(val, PYTHON_SCALARS) and not isinstance(val, np.generic):
                return self.pure_scalar(val)
            return self.pure(val)
        vmain = val._trace.main
        if vmain is self.main:
            return val
        if not vmain.alive:
            raise _leaked(vmain)
        if vmain.level < self.main.level:
            return self.lift(val)
        raise UnexpectedTracerError(
            f"a value of `{vmain.name}` (level {vmain.level}) reached `{self.main.name}` "
            f"(level {self.main.level}) from above. This happens when a tracer escapes an inner "
            "transform; return it from the transformed function instead.")

    def process_primitive(self, prim, tracers, params):
        raise NotImplementedError


def scalar_operand(val):
    """A Python scalar `val` as the operand primitives and their rules see, which has `.dtype`
    and `.shape` like every other: while a program is staged, its weakly typed literal (a tracer
    whose type still promotes like the Python scalar, as JAX's weak-typed constants do);
    eagerly, a 0-d array of its Python type's dtype. A Python scalar never reaches a rule as
    such: `Trace.full_raise` converts it the same way for the trace it enters. (Eager `bind`
    hands operands to the numpy `impl` as they are: an impl takes what numpy takes.)"""
    dyn = trace_state.dynamic
    if dyn.level:
        return dyn.trace.pure_scalar(val)
    return np.asarray(val)


class Tracer:
    """A stand-in for an array while a transform runs. Array methods and operators are installed
    by `functrans.numpy` (see `install_array_methods`), so the core knows no primitive."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000
    # True for tracers carrying a derivative (jvp/grad): float() of them would drop it
    differentiated = False
    # why a Python value cannot be had, for messages (vmap's tracers hold a batch of values)
    unknown_value_note = "its value is not known until the program runs"

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    __hash__ = object.__hash__

    def concrete_value(self):
        """The concrete value behind this tracer when one is known (eager `grad`), else None."""
        return None

    def _concretize(self, what: str):
        val = self.concrete_value()
        if val is not None:
            return val
        use, fix = _CONVERSION_HELP[what]
        cls = _CONVERSION_ERROR.get(what, ConcretizationTypeError)
        raise cls(
            f"{use} was called on a traced value {self.aval.str_short()} while tracing for "
            f"`{self._trace.main.name}`: {self.unknown_value_note}, so Python cannot branch or "
            f"convert on it. {fix}")

    def __bool__(self):
        return bool(self._concretize("bool"))

    def __int__(self):
        return int(self._concretize("int"))

    def __float__(self):
        self._refuse_dropping_derivative("float")
        return float(self._concretize("float"))

    def __complex__(self):
        self._refuse_dropping_derivative("complex")
        return complex(self._concretize("complex"))

    def item(self, *args):
        """The Python value where the transform knows it and no derivative is lost (an integer
        under eager grad); otherwise an error naming the fix."""
        self._refuse_dropping_derivative("item")
        return np.asarray(self._concretize("item")).item(*args)

    def tolist(self):
        """As nested Python lists, where `item()` would give a value; else the same error."""
        self._refuse_dropping_derivative("tolist")
        return np.asarray(self._concretize("tolist")).tolist()

    def _refuse_dropping_derivative(self, what: str):
        # int() and `if` on a differentiated value are fine (piecewise-constant, as in JAX);
        # a Python float would silently leave the program with a zero derivative
        if self.differentiated and self.aval.dtype.kind in "fc":
            use, _ = _CONVERSION_HELP[what]
            raise ConcretizationTypeError(
                f"{use} was called on a value being differentiated by "
                f"`{self._trace.main.name}` ({self.aval.str_short()}): a Python number would "
                "silently drop its derivative. Keep it an array and compute with "
                "functrans.numpy (fnp.sin(x), not math.sin(x)); to change the dtype use "
                "x.astype(float) or functrans.numpy.asarray(x, float); to print it or read "
                "its value, print the tracer or call .item() on the transform's result, "
                "outside the differentiated function.")

    def __index__(self):
        return int(self._concretize("index"))

    def __format__(self, spec):
        if not spec:
            return str(self)
        val = self.concrete_value()  # eager grad knows it: printing it drops nothing
        if val is not None:
            return format(val, spec)
        raise ConcretizationTypeError(
            f"format spec {spec!r} applied to a traced value {self.aval.str_short()} while "
            f"tracing for `{self._trace.main.name}`: {self.unknown_value_note}, so it has no "
            f"digits to format. Print it without a spec (f\"{{x}}\" shows its shape and dtype), "
            "or return it from the function and format the result.")

    def __setitem__(self, idx, value):
        at = _index_text(idx)
        raise TracerItemAssignmentError(
            f"`x[{at}] = ...` on a traced array {self.aval.str_short()} while tracing for "
            f"`{self._trace.main.name}`: traced arrays are immutable, so an in-place assignment "
            f"cannot be recorded. Write `x = x.at[{at}].set(value)` instead, which returns the "
            f"updated array (`x[{at}] += v` is `x = x.at[{at}].add(v)`; also .multiply, "
            ".min, .max).")

    def __array__(self, dtype=None, copy=None):
        # never hand numpy the concrete value: the result would silently leave the trace
        raise TracerArrayConversionError(
            f"numpy tried to convert a traced value {self.aval.str_short()} (inside "
            f"`{self._trace.main.name}`) into a plain array, which would silently drop it from "
            "the program and its derivatives. Use functrans.numpy (import functrans.numpy as "
            "fnp) on traced values instead of numpy (fnp.asarray(x) keeps it traced), or "
            "convert the transform's result outside the function. To index a numpy array "
            "with a traced value (table[i]), make the table with functrans.numpy "
            "(table = fnp.asarray(table): no copy), whose arrays take traced indices.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy ufuncs on tracers (np.sin(x), ndarray + x) run their functrans.numpy twin."""
        fn = _numpy_dispatch["table"].get(ufunc) if method == "__call__" and not kwargs \
            else None
        if fn is None:
            raise TracerArrayConversionError(
                f"{_numpy_dispatch['explain'](ufunc, method, sorted(kwargs))} (applied to a "
                f"traced value {self.aval.str_short()} inside `{self._trace.main.name}`).")
        return fn(*inputs)

    def __array_function__(self, func, types, args, kwargs):
        """numpy functions on tracers (np.sum(x), np.dot(a, x)) run their functrans.numpy twin,
        found by identity: numpy.linalg.trace is not numpy.trace, though both are "trace"."""
        fn = _numpy_dispatch["table"].get(func)
        if fn is None:
            raise TracerArrayConversionError(
                f"{_numpy_dispatch['explain'](func, '__call__', [])} (called on a traced value "
                f"{self.aval.str_short()} inside `{self._trace.main.name}`).")
        return fn(*args, **kwargs)

    def __len__(self):
        if not self.shape:
            raise UnsizedTracerError(
                f"len() of a 0-d traced array {self.aval.str_short()} (while tracing for "
                f"`{self._trace.main.name}`): a scalar has no leading axis. Check x.ndim or "
                "x.shape first; to treat a scalar as one element, use fnp.atleast_1d(x).")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise UnsizedTracerError(
                f"iteration over a 0-d traced array {self.aval.str_short()} (while tracing for "
                f"`{self._trace.main.name}`): a scalar has no leading axis. Check x.ndim or "
                "x.shape first; to treat a scalar as one element, use fnp.atleast_1d(x).")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"


_STATIC = ("mark the argument static (jit(f, static_argnums=...) or "
           "make_jaxpr(f, static_argnums=...))")
# what the user wrote, and the fix, for each conversion a tracer refuses
_CONVERSION_HELP = {
    "bool": ("`bool()` (an `if`, `while`, `and`/`or`/`not` or `assert` on it)",
             "For an elementwise choice use functrans.numpy.where(cond, a, b); to run one of two "
             "branches, functrans.lax.cond(pred, true_fun, false_fun, *operands); for a `while` "
             "loop whose condition is traced, functrans.lax.while_loop(cond_fun, body_fun, "
             f"init_val); or, if the value is configuration, {_STATIC}."),
    "int": ("`int()`",
            f"If the value is configuration (a count, a size), {_STATIC}; otherwise keep it an "
            "array (x.astype(int)), or loop with functrans.lax.fori_loop."),
    "index": ("`index()` (range(x), indexing a list or tuple with x, or a shape)",
              f"If the value is configuration (a count, a size), {_STATIC}; to index an array "
              "with it, index the array itself (arr[x], functrans.numpy.take); for a loop count, "
              "use functrans.lax.fori_loop."),
    "float": ("`float()` (or a `math` function such as math.sin, which converts to float)",
              "Keep it an array and use functrans.numpy's functions (fnp.sin for math.sin, "
              f"fnp.exp for math.exp, ...), or {_STATIC}."),
    "complex": ("`complex()` (or a `cmath` function, which converts to complex)",
                "Keep it an array and use functrans.numpy's functions (fnp.exp for cmath.exp, "
                f"...), or {_STATIC}."),
    "item": ("`.item()`",
             "Keep it an array and compute with functrans.numpy (fnp) functions; return it from "
             f"the function and call .item() on the result; or {_STATIC}."),
    "tolist": ("`.tolist()`",
               "Keep it an array and compute with functrans.numpy (fnp) functions; return it "
               f"from the function and call .tolist() on the result; or {_STATIC}."),
}
_CONVERSION_ERROR = {"bool": TracerBoolConversionError, "int": TracerIntegerConversionError,
                     "index": TracerIntegerConversionError}



class PrimalTracer(Tracer):
    """A tracer carrying a primal value beside what its transform adds (a tangent, Taylor
    terms, ...): its aval and its concrete value are the primal's."""

    __slots__ = ("primal", "_aval")

    def __init__(self, trace, primal):
        self._trace = trace
        self.primal = primal
        self._aval = None

    @property
    def aval(self) -> ShapedArray:
        if self._aval is None:
            self._aval = get_aval(self.primal)
        return self._aval

    def concrete_value(self):
        p = self.primal
        return p.concrete_value() if isinstance(p, Tracer) else p


def _index_text(idx) -> str:
    """An index as it would be written between brackets, for messages (`0`, `1:3`, `..., 0`)."""
    if isinstance(idx, tuple):
        return ", ".join(_index_text(i) for i in idx) if idx else "()"
    if isinstance(idx, slice):
        parts = ["" if v is None else _index_text(v) for v in (idx.start, idx.stop, idx.step)]
        return ":".join(parts if idx.step is not None else parts[:2])
    if idx is Ellipsis:
        return "..."
    if idx is None or isinstance(idx, bool | int | np.integer):
        return repr(idx) if isinstance(idx, bool) or idx is None else str(int(idx))
    text = repr(idx) if isinstance(idx, list) else ""
    return text if 0 < len(text) <= 24 else "idx"


def _no_numpy_dispatch(func, method, kwargs) -> str:
    return (f"numpy.{getattr(func, '__name__', func)} cannot trace values: import "
            "functrans.numpy and use its functions on traced values")


_numpy_dispatch: dict[str, Any] = {"table": {}, "explain": _no_numpy_dispatch}


def set_numpy_dispatch(table: dict, explain) -> None:
    """Install how numpy functions met on tracers are run (called once by functrans.numpy):
    `table` maps numpy function and ufunc objects to their functrans stand-ins, by identity;
    `explain(func, method, kwarg_names)` says why one cannot be traced and what to call
    instead."""
    _numpy_dispatch["table"] = table
    _numpy_dispatch["explain"] = explain


def numpy_stand_in(func):
    """The function run in place of numpy's `func` (a function or ufunc object) when it meets
    a traced value, or None when it cannot be traced."""
    return _numpy_dispatch["table"].get(func)


def install_array_methods(methods: dict[str, Any]) -> None:
    """Give tracers numpy-style operators and methods (called once by functrans.numpy)."""
    for name, fn in methods.items():
        setattr(Tracer, name, fn)


def find_top_trace(args) -> Trace | None:
    """The trace that must process an operation on `args`, or None for eager evaluation."""
    st = trace_state
    top = st.dynamic
    for x in args:
        if isinstance(x, Tracer):
            m = x._trace.main
            if m.level > top.level:
                top = m
    if top.level == 0:
        return None
    if not top.alive:
        raise _leaked(top)
    return top.trace


def bind(prim, *args, **params):
    """Apply `prim` to `args` under whatever transforms are active."""
    # find_top_trace inlined: bind runs for every operation, eager or traced
    top = trace_state.dynamic
    for x in args:
        if isinstance(x, Tracer):
            m = x._trace.main
            if m.level > top.level:
                top = m
    if top.level == 0:  # eager: no tracer among the arguments, no dynamic trace
        if FOREIGN_TYPES:  # empty until a dask or CuPy array has been met: one truth test
            adapter = _foreign_adapter(args)
            if adapter is not None:
                return adapter.impl_for(prim)(*args, **params)
        try:
            return prim.impl(*args, **params)
        except Exception:
            adapter = array_library(args)  # a dask or CuPy array met here first: its library
            if adapter is not None:
                return adapter.impl_for(prim)(*args, **params)
            _explain_eager_failure(prim, args, params)
            raise
    if not top.alive:
        raise _leaked(top)
    trace = top.trace
    # a tracer of this very trace needs no raising (the common case)
    tracers = [x if isinstance(x, Tracer) and x._trace is trace else trace.full_raise(x)
               for x in args]
    return trace.process_primitive(prim, tracers, params)


def _foreign_adapter(args):
    """The adapter of the dask or CuPy arrays among `args` (functrans.backends), or None."""
    for x in args:
        if type(x) in FOREIGN_TYPES:
            return array_library(args)
    return None


def _explain_eager_failure(prim, args, params):
    """Re-check a failed eager call with the shape rule, whose error names the fix."""
    try:
        avals = [get_aval(a) for a in args]
    except Exception:
        return
    prim.abstract_eval(*avals, **params)  # raises the explanatory error, if the rule sees one


def current_level() -> int:
    """The depth of the trace stack (0: only the eager trace is active)."""
    return len(trace_state.stack) - 1
