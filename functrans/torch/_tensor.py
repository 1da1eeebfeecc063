"""`Tensor`: an eager array with PyTorch's autograd state, and a `Tracer` of the tape trace (so
`bind` on it records): `_value` (shared by views), `requires_grad`, `grad_fn`, `output_nr`, a
version counter shared with views (`_vc`: [version, rebases], None for version 0) and rare
metadata (`_meta`). `_views` and `_tensor_methods` install the methods needing layers above."""

from __future__ import annotations

import math
import operator
import warnings
import weakref

import numpy as np

from functrans.core.avals import ShapedArray
from functrans.core.trace import MainTrace, Trace, Tracer
from functrans.tree_util import tree_map
from functrans.torch import _dtype
from functrans.torch._devices import CPU, device  # noqa: F401  (torch.device lives here too)
from functrans.torch._grad_mode import INFERENCE_BLOCKS, MODE
from functrans.torch._graph import AccumulateGrad, append_hook
from functrans.torch._printing import tensor_repr

NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


SCALAR_WARNING = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                  "behavior.\nConsider using tensor.detach() first.")

_NON_LEAF_FLAG = ("you can only change requires_grad flags of leaf variables. If you want to "
                  "use a computed variable in a subgraph that doesn't require differentiation "
                  "use var_no_grad = var.detach().")

# warnings PyTorch gives once per process (TORCH_WARN_ONCE); tests may clear this
WARNED_ONCE: set = set()


def warn_once(key, message, stacklevel):
    if key not in WARNED_ONCE:
        WARNED_ONCE.add(key)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def _to_scalar(kind):
    """float(t), int(t), complex(t): one element, with PyTorch's warning when t requires grad."""
    def convert(self):
        v = self._value
        if v.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self._requires_grad:
            warn_once("scalar", SCALAR_WARNING, stacklevel=2)
        if v.dtype.kind == "c" and kind is not complex:
            raise RuntimeError(f"value cannot be converted to type "
                               f"{'double' if kind is float else 'int64_t'} without overflow")
        return kind(v.reshape(()).item())
    convert.__name__ = f"__{kind.__name__}__"
    return convert


class Size(tuple):
    """torch.Size: a tuple of ints that prints as `torch.Size([2, 3])`."""

    __slots__ = ()

    def __repr__(self):
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def numel(self) -> int:
        return math.prod(self)


class _Meta:
    """Rarely used per-tensor autograd state; the class attributes are the defaults."""

    grad = acc = base = hooks = post_hooks = name = multi_view = None
    retains_grad = inference = False  # inference: made in inference mode (or a view of such)
    no_grad_view = False  # or the mode the view was made in: "no_grad", "inference"
    view_rebases = 0
    replay = ()


class TapeTrace(Trace):
    """The trace every Tensor belongs to (_tensor_methods installs its process_primitive)."""

    __slots__ = ()

    def pure(self, val):
        return val if isinstance(val, Tensor) else wrap(np.asarray(val))

    lift = pure


TAPE_MAIN = MainTrace(level=0.5, trace_type=TapeTrace, global_data=None, name="functrans.torch")
TAPE = TAPE_MAIN.trace


class Tensor(Tracer):
    """A multi-dimensional array with PyTorch's autograd semantics.

    >>> import functrans.torch as torch
    >>> a = torch.tensor([3.], requires_grad=True)
    >>> b = a * a
    >>> b.backward()
    >>> a.grad
    tensor([6.])
    """

    __slots__ = ("_value", "_requires_grad", "_grad_fn", "_output_nr", "_vc", "_meta",
                 "__weakref__")
    _trace = TAPE  # every Tensor belongs to the tape (a class attribute: nothing to set)
    _retake_view = None  # installed by _views: a view's grad_fn taken again from its base
    _construct = None  # installed by _tensor_methods: _legacy.construct

    def __init__(self, *args, device=None):
        """The legacy constructor: Tensor(*sizes), Tensor(data) (default dtype), Tensor(tensor)."""
        made = self._construct(None, args, device)
        for slot in Tensor.__slots__[:-1]:  # the state of `made`, taken over by this object
            setattr(self, slot, getattr(made, slot))

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self._value.shape, self._value.dtype)

    def concrete_value(self):
        return self._value

    @property
    def shape(self) -> Size:
        return Size(self._value.shape)

    def size(self, dim=None):
        return self.shape if dim is None else self._value.shape[_dim(dim, self._value.ndim)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_numpy(self._value.dtype)

    def dim(self) -> int:
        return self._value.ndim

    def numel(self) -> int:
        return int(self._value.size)

    def element_size(self) -> int:
        return self._value.itemsize

    ndim = property(dim)
    ndimension = dim
    nelement = numel
    device = property(lambda self: CPU)
    is_cuda = is_sparse = is_quantized = is_meta = is_nested = False
    layout = "torch.strided"

    def is_floating_point(self) -> bool:
        return self._value.dtype.kind == "f"

    def is_complex(self) -> bool:
        return self._value.dtype.kind == "c"

    def get_device(self) -> int:
        return -1

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        if self._grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables."
                               if flag else _NON_LEAF_FLAG)
        self._set_requires_grad(flag, "floating point and complex dtype")

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if requires_grad:  # a computed tensor already requires grad: nothing to change
                return self
            raise RuntimeError(_NON_LEAF_FLAG)
        self._set_requires_grad(requires_grad, "floating point dtype")
        return self

    def _set_requires_grad(self, flag, kinds):
        if flag and self._value.dtype.kind not in "fc":
            raise RuntimeError(f"only Tensors of {kinds} can require gradients")
        if flag and is_inference(self) and not MODE.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                               "InferenceMode is not allowed.")
        self._requires_grad = bool(flag)

    # the tensor this one is a view of (None when it is not a view), as in PyTorch
    _base = property(lambda self: None if self._meta is None else self._meta.base)

    @property
    def volatile(self) -> bool:
        """Removed in PyTorch (always False); reading it warns, as PyTorch does."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    def _is_view(self) -> bool:
        return self._base is not None

    is_leaf = property(lambda self: self._grad_fn is None)
    output_nr = property(lambda self: self._output_nr)

    @property
    def grad_fn(self):
        m = self._meta
        if m is not None and m.base is not None and self._vc[1] != m.view_rebases:
            self._retake_view()
        return self._grad_fn

    @property
    def _version(self) -> int:
        if is_inference(self):
            raise RuntimeError("Inference tensors do not track version counter.")
        vc = self._vc
        return 0 if vc is None else vc[0]

    def _get_meta(self) -> _Meta:
        m = self._meta
        if m is None:
            m = self._meta = _Meta()
        return m

    @property
    def grad(self):
        m = self._meta
        if self._grad_fn is not None and (m is None or not m.retains_grad and m.grad is None):
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return None if m is None else m.grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._value.shape != self._value.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a "
                    f"tensor of size '{list(self.shape)}'. Please ensure that the gradient and "
                    "the tensor are the same size")
            if value._value.dtype != self._value.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype "
                    f"'{_dtype.cpp_name(value._value.dtype)}' to a tensor with grad_dtype "
                    f"'{_dtype.kind(self._value.dtype)}'. The gradient must match the "
                    "tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                    "tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                    "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
                    "its gradient may break downstream systems that assume they match.")
        self._get_meta().grad = value

    @grad.deleter
    def grad(self):
        self._get_meta().grad = None

    @property
    def retains_grad(self) -> bool:
        m = self._meta
        return bool(m is not None and m.retains_grad and self._grad_fn is not None)

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self.retains_grad:
            return None
        self._get_meta().retains_grad = True
        node = self._grad_fn
        if node._retains is None:
            node._retains = {}
        node._retains[self._output_nr] = weakref.ref(self)
        return None

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed (a tensor returned wins)."""
        _check_hookable(self)
        if self._grad_fn is None:  # a leaf: kept on the tensor, run by its AccumulateGrad
            return append_hook(self._get_meta(), "hooks", hook)
        return append_hook(self._grad_fn, "_pre_hooks", (self._output_nr, hook))

    def register_post_accumulate_grad_hook(self, hook):
        """Call `hook(self)` after a backward pass accumulated into this leaf's `.grad`."""
        _check_hookable(self)
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        return append_hook(self._get_meta(), "post_hooks", hook)

    def detach(self) -> "Tensor":
        """The same storage and version counter, cut from the graph."""
        inference = is_inference(self)  # an inference tensor has no version counter
        t = wrap(self._value, vc=None if inference else _shared_vc(self))
        mark_inference(t, inference)
        return t

    def detach_(self) -> "Tensor":
        if self._grad_fn is not None and self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn, self._output_nr, self._requires_grad = None, 0, False
        return self

    @property
    def data(self) -> "Tensor":
        """The same storage, its own version counter: in-place changes here escape autograd."""
        return wrap(self._value)

    @data.setter
    def data(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(other).__name__}")
        if self._requires_grad and other._value.dtype.kind not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        self._value = other._value

    @data.deleter
    def data(self):
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def item(self):
        v = self._value
        if v.size != 1:
            raise RuntimeError(f"a Tensor with {v.size} elements cannot be converted to Scalar")
        return v.reshape(()).item()

    def tolist(self):
        return self._value.tolist()

    def numpy(self, *, force=False) -> np.ndarray:
        # PyTorch refuses only while grad mode is on (under no_grad nothing could record)
        if self._requires_grad and not force and MODE.enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._value

    def __array__(self, dtype=None, copy=None):
        v = self.numpy()
        return v if dtype is None else v.astype(dtype)

    # numpy sees a Tensor as PyTorch's does: as an array (refused while it requires grad), with
    # ufunc results wrapped back into tensors; not as a traced value to stage
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        op = _OPERATOR_UFUNCS.get(ufunc.__name__)
        if op is not None and method == "__call__" and not kwargs:
            # `ndarray + tensor` lands here: run the tensor operator, so autograd records it
            return op(*[x if isinstance(x, Tensor) else wrap(np.asarray(x)) for x in inputs])
        arrays = [x.__array__() if isinstance(x, Tensor) else x for x in inputs]
        out = getattr(ufunc, method)(*arrays, **kwargs)
        return wrap(np.asarray(out)) if isinstance(out, np.ndarray | np.generic) else out

    def __array_function__(self, func, types, args, kwargs):
        query = _SHAPE_QUERIES.get(func.__name__)
        if query is not None and isinstance(args[0], Tensor) and len(args) == 1 and not kwargs:
            return query(args[0].aval)  # np.ndim/np.shape inside the primitive wrappers
        args, kwargs = tree_map(lambda a: a.__array__() if isinstance(a, Tensor) else a,
                                (args, kwargs))
        return func(*args, **kwargs)

    __float__, __int__, __complex__ = (_to_scalar(kind) for kind in (float, int, complex))

    def __index__(self):
        if self._value.dtype.kind not in "iub" or self._value.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self._value.reshape(()).item())

    def __bool__(self):
        v = self._value
        if v.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(v.reshape(()).item())

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as PyTorch's: views of one UnbindBackward0 node

    __hash__ = object.__hash__

    def __repr__(self, *, tensor_contents=None):
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self._value.ndim == 0:
            return self._value.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, proto):
        return (wrap, (self._value.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        t = wrap(self._value.copy(), self._requires_grad)
        memo[id(self)] = t
        return t


_SHAPE_QUERIES = {"ndim": lambda a: a.ndim, "shape": lambda a: a.shape, "size": lambda a: a.size}
_OPERATOR_UFUNCS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
                    "true_divide": operator.truediv, "divide": operator.truediv,
                    "floor_divide": operator.floordiv, "remainder": operator.mod,
                    "power": operator.pow, "matmul": operator.matmul}


def _check_hookable(t):
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")


def _dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


INFERENCE_SAVE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")


def mark_inference(t, inference=True):
    """Make `t` an inference tensor (or, with `inference=False`, a normal one)."""
    if inference or t._meta is not None:
        t._get_meta().inference = inference


def is_inference(t) -> bool:
    m = t._meta
    return m is not None and m.inference


def check_saveable(t):
    """Refuse to save an inference tensor for backward, with PyTorch's message."""
    if is_inference(t):
        raise RuntimeError(INFERENCE_SAVE_ERROR)


def _init(t, value, requires_grad, grad_fn, output_nr, vc=None):
    t._value, t._requires_grad, t._grad_fn, t._output_nr = value, requires_grad, grad_fn, output_nr
    t._vc, t._meta = vc, None
    if INFERENCE_BLOCKS[0] and MODE.inference:
        mark_inference(t)
    return t


def wrap(value, requires_grad=False, grad_fn=None, output_nr=0, vc=None) -> Tensor:
    """A Tensor around the numpy array `value` (no copy)."""
    return _init(object.__new__(Tensor), value, requires_grad, grad_fn, output_nr, vc)


def _shared_vc(t):
    """t's version counter, shared with its views (made on first use): [version, rebases]."""
    vc = t._vc
    if vc is None:
        vc = t._vc = [0, 0]
    return vc


def accumulator(t) -> AccumulateGrad:
    """The leaf's AccumulateGrad node (held weakly by the leaf, strongly by the graph)."""
    m = t._get_meta()
    acc = m.acc() if m.acc is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        m.acc = weakref.ref(acc)
    return acc


def edge(t):
    """The graph edge a gradient for `t` flows along: (node, output_nr), or None."""
    if not t._requires_grad:
        return None
    fn, m = t.grad_fn, t._meta  # grad_fn: a view's taken again if its base changed since
    if fn is not None:
        return (fn, t._output_nr)
    if m is not None and m.base is not None and m.no_grad_view and m.base._requires_grad:
        return None  # a view taken in no_grad mode: PyTorch gives it no grad accumulator
    return (accumulator(t), 0)
