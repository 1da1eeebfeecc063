"""Complex tensors with PyTorch's conventions: `torch.complex`, `torch.polar`, `view_as_real` /
`view_as_complex` and `.real` / `.imag` (views of the same storage, as in PyTorch), `conj`,
`conj_physical`, the conjugate transposes (`adjoint`, `.mH`, `.H`), `angle`, `sgn`, `vdot`, and
in-place writes through views that change the dtype.

Gradients follow PyTorch: for a real loss L of a complex leaf z = x + iy, `z.grad` is
dL/dx + i dL/dy, the conjugate of JAX's `grad` (the backward programs apply it, see
`_programs`). Every derivative here comes from the primitive table: these are compositions.

Where it differs from PyTorch: `conj()` (and so `adjoint()`, `.mH` and `.H` of a complex tensor)
is a copy recorded as ConjBackward0 (PyTorch's is a lazy view with a conjugate bit; `is_conj()`
reports that bit, but writes into the result do not reach the source).
"""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np

from functrans.primitives import elementwise as E
from functrans.primitives import reductions as R
from functrans.primitives import shape_ops as S
from functrans.torch import _dtype
from functrans.torch._grad_mode import set_grad_enabled
from functrans.torch._indexing import copy_slices, select, set_at_positions
from functrans.torch._ops import as_tensor, unary
from functrans.torch._record import Op, composite, prim_op, run
from functrans.torch._shape import matrix_transpose
from functrans.torch._tensor import Tensor, wrap
from functrans.torch._views import as_view

# --- views that change the dtype -------------------------------------------------------------


def _as_real_impl(v):
    """The float (re, im) pairs of a complex array, as a view of its storage."""
    re = v.real
    return np.lib.stride_tricks.as_strided(re, v.shape + (2,), re.strides + (re.itemsize,))


def _as_real_traced(x):
    shape = tuple(x.shape) + (1,)
    return S.concatenate([S.reshape(E.real(x), shape), S.reshape(E.imag(x), shape)], x.ndim)


def _as_complex_impl(v):
    """Pairs along the last axis of a float array as complex numbers, a view of its storage."""
    return v.view(np.result_type(v.dtype, np.complex64)).reshape(v.shape[:-1])


def _as_complex_traced(x):
    n = x.ndim - 1
    part = [S.reshape(S.slice_(x, (0,) * n + (k,), tuple(x.shape[:-1]) + (k + 1,)),
                      tuple(x.shape[:-1])) for k in (0, 1)]
    return E.complex(*part)


_VIEW_AS_REAL = Op("ViewAsRealBackward0", _as_real_impl, _as_real_traced)
_VIEW_AS_COMPLEX = Op("ViewAsComplexBackward0", _as_complex_impl, _as_complex_traced)


def _dtype_view(op, x, again):
    """`op` of x, marked a view of x; its replay says it changes the dtype (an in-place change
    through it is written on the float parts of the base, see copy_parts)."""
    again.changes_dtype = True
    return as_view(x, run(op, (x,), (x._value,)), again)


def view_as_real(input) -> Tensor:
    """torch.view_as_real: a complex tensor's (real, imag) pairs as a float view, last dim 2."""
    x = as_tensor(input)
    if x._value.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(x):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
            "warned that the resulting tensor will NOT alias the original.")
    return _as_real_view(x)


def _as_real_view(x):
    """view_as_real without the conjugate-bit check (PyTorch's view_as_real_physical)."""
    return _dtype_view(_VIEW_AS_REAL, x, lambda t: _as_real_view(t))


def view_as_complex(input) -> Tensor:
    """torch.view_as_complex: a float tensor of shape (..., 2) as a complex view."""
    x = as_tensor(input)
    v = x._value
    if v.dtype not in (np.float32, np.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {_dtype.kind(v.dtype)}")
    if v.ndim == 0 or v.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if v.strides[-1] != v.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * v.itemsize) for s in v.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    base = v.base if v.base is not None else v
    offset = v.__array_interface__["data"][0] - base.__array_interface__["data"][0] \
        if isinstance(base, np.ndarray) else 0
    if offset % (2 * v.itemsize):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _dtype_view(_VIEW_AS_COMPLEX, x, lambda t: view_as_complex(t))


def real(input) -> Tensor:
    """torch.real (and Tensor.real): the real part of a complex tensor as a view (PyTorch's
    view_as_real(x).select(-1, 0)); a real tensor itself."""
    x = as_tensor(input)
    return select(_as_real_view(x), -1, 0) if x._value.dtype.kind == "c" else x


def imag(input) -> Tensor:
    """torch.imag (and Tensor.imag): the imaginary part of a complex tensor, as a view."""
    x = as_tensor(input)
    if x._value.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(_as_real_view(x), -1, 1)


def _set_real(self, value):
    real(self).copy_(value)


def _set_imag(self, value):
    imag(self).copy_(value)


# --- in place through a view that changes the dtype ------------------------------------------

def _parts(x):
    """x's float parts: (..., 2) for a complex x, x itself for a real one."""
    return _as_real_traced(x) if np.dtype(x.dtype).kind == "c" else x


def _set_parts(x, v, pos, keep, *, shape):
    """x with the float parts at flat positions `pos` of its (re, im) expansion replaced by
    those of v: an in-place write through a view such as `x.imag` or view_as_real(x)."""
    out = set_at_positions(_parts(x), _parts(v), pos, keep, shape=shape)
    return _as_complex_traced(out) if np.dtype(x.dtype).kind == "c" else out


_COPY_PARTS = Op("CopySlices", _set_parts, _set_parts)


def part_positions(view) -> np.ndarray:
    """The flat positions of a view's float parts in its base's (re, im) expansion: the view's
    ops replayed on a grid whose values are those positions."""
    m = view._meta
    b = m.base._value
    k = np.arange(b.size, dtype=np.float64).reshape(b.shape)
    grid = wrap(2 * k + 1j * (2 * k + 1) if b.dtype.kind == "c" else k)
    with set_grad_enabled(False):
        for again in m.replay:
            grid = again(grid)
    g = grid._value
    if g.dtype.kind == "c":
        g = _as_real_impl(g)
    return g.astype(np.int64)


def copy_parts(base, res, view):
    """CopySlices(base, res) for a view that changes the dtype: base rewritten with the
    view's new values `res` (the out-of-place form of the in-place change)."""
    return copy_slices(base, res, part_positions(view), op=_COPY_PARTS)


# --- complex arithmetic ----------------------------------------------------------------------

_COMPLEX = prim_op(E.complex_p, "ComplexBackward0")


def _same_float_pair(name, a, b):
    a, b = as_tensor(a), as_tensor(b)
    da, db = a._value.dtype, b._value.dtype
    if da.kind != "f" or db.kind != "f":
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_dtype.kind(da)} and {_dtype.kind(db)}")
    if da != db:
        raise RuntimeError(f"Expected object of scalar type {_dtype.kind(da)} but got scalar "
                           f"type {_dtype.kind(db)} for second argument")
    return a, b


def complex(real, imag) -> Tensor:
    """torch.complex: real + i imag, from two float tensors of one dtype."""
    a, b = _same_float_pair("complex", real, imag)
    return run(_COMPLEX, (a, b), (a._value, b._value))


@composite("PolarBackward0")
def _polar(r, theta):
    return E.complex(E.mul(r, E.cos(theta)), E.mul(r, E.sin(theta)))


def polar(abs, angle) -> Tensor:
    """torch.polar: abs * (cos(angle) + i sin(angle))."""
    a, b = _same_float_pair("polar", abs, angle)
    return run(_polar, (a, b), (a._value, b._value))


_CONJ = prim_op(E.conj_p, "ConjBackward0")
_CONJ_PHYSICAL = prim_op(E.conj_p, "ConjPhysicalBackward0")


def conj(input) -> Tensor:
    """torch.conj (and Tensor.conj): the complex conjugate (a real tensor itself)."""
    x = as_tensor(input)
    if x._value.dtype.kind != "c":
        return x
    out = unary(_CONJ, x)
    out._get_meta().conj_bit = not is_conj(x)
    return out


def conj_physical(input) -> Tensor:
    """torch.conj_physical: the complex conjugate, computed (a real tensor itself)."""
    x = as_tensor(input)
    return unary(_CONJ_PHYSICAL, x) if x._value.dtype.kind == "c" else x


def is_conj(input) -> bool:
    """torch.is_conj: whether the tensor came from conj() (PyTorch's conjugate bit)."""
    m = input._meta
    return bool(m is not None and getattr(m, "conj_bit", False))


def resolve_conj(input) -> Tensor:
    """torch.resolve_conj: a tensor with the conjugate bit cleared (a clone when it was set)."""
    return input.clone() if is_conj(input) else input


_USE_CONJ = "Consider using x.conj()."  # PyTorch's hint for mH, H and adjoint() of a 0-d tensor


def adjoint(input) -> Tensor:
    """torch.adjoint (and Tensor.adjoint): the last two dimensions exchanged and conjugated."""
    return conj(matrix_transpose(input, "adjoint()", _USE_CONJ, 3))


def _mH(self) -> Tensor:
    return conj(matrix_transpose(self, "Tensor.mH", _USE_CONJ, 3))


def _H(self) -> Tensor:
    nd = self._value.ndim
    if nd not in (0, 2):
        batches = ". For batches of matrices, consider using tensor.mH" if nd > 2 else "."
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D "
                           f"tensor{batches}")
    return conj(matrix_transpose(self, "Tensor.H", _USE_CONJ, 3))


def is_neg(input) -> bool:
    """torch.is_neg: PyTorch's negative bit; functrans.torch never sets it."""
    return False


def resolve_neg(input) -> Tensor:
    """torch.resolve_neg: the tensor itself (the negative bit is never set)."""
    return input


def _zero(x):
    return np.zeros((), np.dtype(x.dtype))


@composite("AngleBackward0")
def _angle(x):
    if np.dtype(x.dtype).kind != "c":
        # 0 or pi by sign, nan at nan; a zero derivative, as PyTorch's
        at_nan = E.mul(x, _zero(x))
        pi = np.asarray(math.pi, np.dtype(x.dtype))
        return E.select(E.ne(x, x), at_nan, E.select(E.lt(x, _zero(x)), pi, _zero(x)))
    re, im = E.real(x), E.imag(x)
    # atan2 at 0 + 0i has no derivative: PyTorch's is 0 there (the safe-select keeps nan out)
    zero = E.and_(E.eq(re, _zero(re)), E.eq(im, _zero(im)))
    one = np.ones((), np.dtype(re.dtype))
    return E.select(zero, _zero(re), E.atan2(E.select(zero, _zero(im), im),
                                             E.select(zero, one, re)))


def angle(input) -> Tensor:
    """torch.angle: the argument of a complex tensor (0 or pi for a real one)."""
    x = as_tensor(input)
    v = x._value
    if v.dtype.kind not in "fc":
        v = v.astype(_dtype.get_default_dtype().dtype)
    return run(_angle, (x,), (v,))


@composite("SgnBackward0")
def _sgn_complex(z):
    a = E.abs(z)
    nz = E.ne(a, _zero(a))
    safe = E.select(nz, a, np.ones((), np.dtype(a.dtype)))
    unit = E.div(z, E.complex(safe, _zero(safe)))
    return E.select(nz, unit, _zero(z))


_SGN = prim_op(E.sgn_p, "SgnBackward0")


def sgn(input) -> Tensor:
    """torch.sgn: z / |z| (0 at 0) for complex tensors; torch.sign for real ones."""
    x = as_tensor(input)
    if x._value.dtype.kind == "c":
        return unary(_sgn_complex, x)
    if x._value.dtype.kind == "f":
        return unary(_SGN, x)
    return x.sign()


@composite("VdotBackward0")
def _vdot(a, b):
    if np.dtype(a.dtype).kind == "c":
        a = E.conj(a)
    return R.reduce_sum(E.mul(a, b), (0,))


def vdot(input, other) -> Tensor:
    """torch.vdot: sum(conj(input) * other) of two 1-d tensors of one dtype."""
    a, b = as_tensor(input), as_tensor(other)
    if a._value.ndim != 1 or b._value.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._value.ndim}D and "
                           f"{b._value.ndim}D tensors")
    if a._value.dtype != b._value.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dtype.kind(a._value.dtype)} and {_dtype.kind(b._value.dtype)}")
    if a._value.shape != b._value.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._value.shape[0]}] "
                           f"and src [{b._value.shape[0]}] to have the same number of "
                           "elements, but got {} and {} elements respectively".format(
                               a._value.shape[0], b._value.shape[0]))
    return run(_vdot, (a, b), (a._value, b._value))


def part_of_outputs(func, part: str):
    """func with each complex output replaced by its "real" or "imaginary" part (gradcheck
    checks the two apart, as PyTorch's does)."""
    take = real if part == "real" else imag

    def fn(*args):
        outs = func(*args)
        pick = [take(o) if isinstance(o, Tensor) and o.is_complex() else o
                for o in (outs if isinstance(outs, tuple | list) else (outs,))]
        return tuple(pick) if isinstance(outs, tuple | list) else pick[0]
    return fn


def isreal(input) -> Tensor:
    """torch.isreal: where the imaginary part is zero (everywhere, for a real tensor)."""
    v = as_tensor(input)._value
    return wrap(v.imag == 0 if v.dtype.kind == "c" else np.ones(v.shape, np.bool_))


def _fill_parts(name):
    """Tensor.normal_ / uniform_ on a complex tensor: the (re, im) pairs filled as PyTorch
    fills them (normal_'s parts with std / sqrt(2) each)."""
    def wrapper(fn):
        @functools.wraps(fn)
        def method(self, *args, **kwargs):
            if self._value.dtype.kind != "c":
                return fn(self, *args, **kwargs)
            if name == "normal_":
                bound = inspect.signature(fn).bind(self, *args, **kwargs)
                bound.apply_defaults()
                std = bound.arguments["std"]
                if std >= 0:  # a negative std reaches normal_'s message as given
                    bound.arguments["std"] = std / math.sqrt(2)
                args, kwargs = bound.args[1:], bound.kwargs
            fn(view_as_real(self.detach()), *args, **kwargs)
            return self
        return method
    return wrapper


# --- what PyTorch refuses on complex tensors ---------------------------------------------------

def _kernel(name):
    return NotImplementedError, f'"{name}" not implemented for \'{{kind}}\''


_NO_ORDER = (RuntimeError, "{name}(): does not support complex input")
_CLAMP = (NotImplementedError, "clamp is not supported for complex types")
_SORT = (RuntimeError, " Sort does not support complex dtypes on CPU")
# name: (exception, message) as PyTorch 2.x words them; {kind}: ComplexFloat / ComplexDouble
REFUSED = {
    "amax": _kernel("max_values_cpu"), "amin": _kernel("min_values_cpu"),
    "argmax": _NO_ORDER, "argmin": _NO_ORDER, "sort": _SORT, "argsort": _SORT,
    "topk": (RuntimeError, " topk does not support complex dtypes on CPU"),
    "median": _kernel("median_cpu"), "nanmedian": _kernel("median_cpu"),
    "clamp": _CLAMP, "clamp_min": _CLAMP, "clamp_max": _CLAMP, "clip": _CLAMP, "relu": _CLAMP,
    "clamp_": _CLAMP, "clamp_min_": _CLAMP, "clamp_max_": _CLAMP, "clip_": _CLAMP,
    "relu_": _CLAMP,
    "floor": (NotImplementedError, "floor is not supported for complex inputs"),
    "ceil": (NotImplementedError, "ceil is not supported for complex inputs"),
    "trunc": (NotImplementedError, "trunc is not supported for complex inputs"),
    "round": _kernel("round_vml_cpu"), "erf": _kernel("erf_vml_cpu"),
    "fmod": _kernel("fmod_cpu"), "remainder": _kernel("remainder_cpu"),
    "__mod__": _kernel("remainder_cpu"), "floor_divide": _kernel("div_floor_cpu"),
    "__floordiv__": _kernel("div_floor_cpu"),
    "signbit": (NotImplementedError, "signbit is not implemented for complex tensors."),
    "lt": _kernel("lt_cpu"), "le": _kernel("le_cpu"), "gt": _kernel("gt_cpu"),
    "ge": _kernel("ge_cpu"), "less": _kernel("lt_cpu"), "greater": _kernel("gt_cpu"),
    "less_equal": _kernel("le_cpu"), "greater_equal": _kernel("ge_cpu"),
    "__lt__": _kernel("lt_cpu"), "__le__": _kernel("le_cpu"), "__gt__": _kernel("gt_cpu"),
    "__ge__": _kernel("ge_cpu"),
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "atan2": _kernel("atan2_cpu"), "arctan2": _kernel("atan2_cpu"),
    "abs_": (RuntimeError, "In-place abs is not supported for complex tensors."),
    "cdist": (RuntimeError, "cdist only supports floating-point dtypes, X1 got: {kind}"),
}


def _max_min(name, fn):
    """max / min: refused on complex tensors (PyTorch's two messages: all, or along dim)."""
    @functools.wraps(fn)
    def method(input, *args, **kwargs):
        if type(input) is Tensor and input._value.dtype.kind == "c":
            if args or kwargs:
                raise RuntimeError(f"{name}(): does not support complex input")
            raise NotImplementedError(f'"{name}_all" not implemented for '
                                      f"'{_dtype.kind(input._value.dtype)}'")
        return fn(input, *args, **kwargs)
    return method


def _softmax(name, fn):
    """softmax / log_softmax: refused on complex tensors, naming PyTorch's kernel (one for the
    last dim, one for the others)."""
    @functools.wraps(fn)
    def method(input, dim=None, *args, **kwargs):
        v = input._value if type(input) is Tensor else None
        if v is not None and v.dtype.kind == "c":
            last = dim is None or v.ndim <= 1 or dim in (-1, v.ndim - 1)
            raise NotImplementedError(f'"{name}_{"lastdim_" if last else ""}kernel_impl" not '
                                      f"implemented for '{_dtype.kind(v.dtype)}'")
        return fn(input, dim, *args, **kwargs)
    return method


def _refusing(name, fn):
    """fn, refusing complex tensors among its first two arguments as PyTorch does."""
    if name in ("max", "min"):
        return _max_min(name, fn)
    if name in ("softmax", "log_softmax"):
        return _softmax(name, fn)
    exc, text = REFUSED[name]

    @functools.wraps(fn)
    def method(*args, **kwargs):
        if type(args[0]) is Tensor and args[0]._value.dtype.kind == "c" or len(args) > 1 and \
                type(args[1]) is Tensor and args[1]._value.dtype.kind == "c":
            a = next(a for a in args[:2] if type(a) is Tensor and a._value.dtype.kind == "c")
            raise exc(text.format(kind=_dtype.kind(a._value.dtype), name=name))
        return fn(*args, **kwargs)
    return method


def complex_overrides(namespace: dict) -> dict:
    """The functions of `namespace` (functrans.torch's, or Tensor's methods) with their complex
    behaviour: refusals as PyTorch's (torch.max, torch.clamp, ...) and the complex forms of
    normal_ / uniform_. A mapping to update the namespace with."""
    names = (*REFUSED, "max", "min", "softmax", "log_softmax")
    out = {name: _refusing(name, namespace[name]) for name in names
           if callable(namespace.get(name))}
    out.update({name: _fill_parts(name)(namespace[name]) for name in ("normal_", "uniform_")
                if callable(namespace.get(name))})
    return out


# --- Tensor methods --------------------------------------------------------------------------

_METHODS = {
    "real": property(real, _set_real), "imag": property(imag, _set_imag),
    "conj": conj, "conj_physical": conj_physical, "is_conj": is_conj,
    "resolve_conj": resolve_conj, "adjoint": adjoint, "mH": property(_mH), "H": property(_H),
    "is_neg": is_neg, "resolve_neg": resolve_neg,
    "angle": angle, "sgn": sgn, "vdot": vdot, "isreal": isreal,
    "cfloat": lambda self, memory_format=None: self.to(_dtype.complex64),
    "cdouble": lambda self, memory_format=None: self.to(_dtype.complex128),
}
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)
