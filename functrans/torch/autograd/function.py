"""`torch.autograd.Function`: a user's forward and backward, recorded as one node that is also
the `ctx` (`<Name>Backward`); backward runs in grad mode `create_graph` (double backward)."""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from functrans.primitives.broadcasting import unbroadcast
from functrans.torch._grad_mode import MODE, no_grad
from functrans.torch._graph import ERR_BACKWARD_TWICE, Node, new_seq, unpack_input, unpack_output
from functrans.torch._inplace import rebase_view
from functrans.torch._saved_hooks import hooks_now, pack, unpack
from functrans.torch._tensor import Tensor, _shared_vc, check_saveable, edge, wrap

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "NestedIOFunction",
           "once_differentiable"]

class FunctionCtx:
    """What `forward`/`setup_context` may call on `ctx`, and what `backward` reads from it."""

    __slots__ = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool):
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        out = []
        for entry in saved:  # (tensor, version) of an input, or an output's (see _save)
            if entry is not None and len(entry) == 3:  # kept by saved-tensor hooks
                entry = unpack(entry, True)
            elif entry is not None and len(entry) == 2:
                unpack_input(*entry)
                entry = entry[0]
            elif entry is not None:
                arr, vc, version, nr = entry
                unpack_output((arr, vc, version), self, nr)
                entry = wrap(arr, True, self, nr, vc)
            out.append(entry)
        return tuple(out)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors


class BackwardCFunction(FunctionCtx, Node):
    """The node of one `Function.apply`: also the `ctx` its forward and backward receive."""

    _to_save = _saved = _dirty = _non_differentiable = needs_input_grad = ()
    _materialize = True

    def __init__(self):
        self._next, self._seq, self._n_out = (), new_seq(), 0
        self._pre_hooks = self._retains = None

    def _release(self):
        if self._saved:
            self._saved = None

    def _backward(self, buf, create_graph):
        grads = []
        for g, meta in zip(buf, self._out_meta):  # meta is None for a non-tensor output
            if g is None and meta is not None and self._materialize:
                g = wrap(np.zeros(*meta))
            elif g is not None and not isinstance(g, Tensor):
                g = wrap(np.asarray(g))
            grads.append(None if meta is None else g)
        res = _user_backward(self._forward_cls)(self, *grads)
        res = res if isinstance(res, tuple) else (res,)
        n, name = len(self._arg_edges), self.name()
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]  # extra Nones are allowed
        if len(res) != n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(res)})")
        out = [None] * len(self._next)
        for i, (r, slot) in enumerate(zip(res, self._arg_edges)):
            if slot is None:
                if r is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at position "
                        f"{i + 1}, but the corresponding forward input was not a Variable")
                continue
            if r is None or self._next[slot] is None:
                continue
            if not isinstance(r, Tensor):
                raise TypeError(f"function {name} returned a gradient of type "
                                f"{type(r).__name__} at position {i + 1}; expected a Tensor or "
                                "None")
            shape, dtype = self._in_meta[slot]
            if r._value.shape != shape:
                r = _sum_to(r, shape, name, i)
            if r._value.dtype != dtype:
                if r._value.dtype.kind == "c" and dtype.kind != "c":  # PyTorch's check, verbatim
                    raise RuntimeError(
                        "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == "
                        "grad_is_complex) to be true, but got false.  (Could this error message "
                        "be improved?  If so, please report an enhancement request to PyTorch.)")
                r = r.to(dtype) if create_graph else wrap(r._value.astype(dtype))
            out[slot] = r if create_graph else r._value
        return out


def _sum_to(r, shape, name, index):
    """A gradient of a broadcast shape summed down to the input's shape (PyTorch's sum_to)."""
    got = r._value.shape  # PyTorch's is_expandable_to(shape, got)
    if len(got) < len(shape) or any(s not in (1, g) for s, g in zip(shape[::-1], got[::-1])):
        raise RuntimeError(f"Function {name} returned an invalid gradient at index {index} - got "
                           f"[{', '.join(map(str, got))}] but expected shape compatible with "
                           f"[{', '.join(map(str, shape))}]")
    return unbroadcast(r, shape)


def _user_backward(cls):
    """The class's backward, or its vjp (PyTorch's other name for it), not both."""
    base = _SingleLevelFunction.backward
    if cls.vjp is base:
        return cls.backward
    if cls.backward is not base:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not "
                           "allowed. You should only implement one of them.")
    return cls.vjp


class _SingleLevelFunction:
    def __init_subclass__(cls, **kwargs):
        """Each Function class gets its node class `<Name>Backward`, as PyTorch's FunctionMeta."""
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": "torch.autograd.function"})

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")


class Function(_SingleLevelFunction):
    """Base class of user-defined differentiable operations; call them with `.apply`.

    >>> import functrans.torch as torch
    >>> class Double(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> Double.apply(x).sum().backward()
    >>> x.grad
    tensor([2., 2.])
    """

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        separate = cls.setup_context is not _SingleLevelFunction.setup_context
        if separate:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = tuple(bound.args), dict(bound.kwargs)
        ctx = cls._backward_cls()
        tensors = [a for a in args if isinstance(a, Tensor)]
        slots = iter(range(len(tensors)))
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        executable = MODE.enabled and any(ctx.needs_input_grad)
        with no_grad():
            if separate:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        ctx._arg_edges = [next(slots) if isinstance(a, Tensor) else None for a in args]
        ctx._in_meta = [(t._value.shape, t._value.dtype) for t in tensors]
        ctx._next = tuple(edge(t) if executable else None for t in tensors)
        return _wrap_outputs(ctx, args, outputs, executable)


def _wrap_outputs(ctx, args, outputs, executable):
    is_tuple = isinstance(outputs, tuple)
    outs = outputs if is_tuple else (outputs,)
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    # every output has a gradient slot, as in PyTorch: a non-tensor output's is None
    meta = [(o._value.shape, o._value.dtype) if isinstance(o, Tensor) else None for o in outs]
    result = []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            result.append(o)
            continue
        differentiable = executable and id(o) not in non_diff and o._value.dtype.kind in "fc"
        if id(o) in dirty:
            if executable and o._requires_grad and o._grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            _shared_vc(o)[0] += 1
        elif id(o) in input_ids:
            o = wrap(o._value, vc=_shared_vc(o))  # a view of the input, as PyTorch returns
        if differentiable:
            o._requires_grad, o._grad_fn, o._output_nr = True, ctx, nr
        elif executable and id(o) in dirty:
            o._grad_fn, o._requires_grad = None, False
        result.append(o)
    ctx._n_out, ctx._out_meta = len(meta), meta
    ctx._saved = _save(ctx, outs, result, executable)
    for o in result:
        # a view modified in place (mark_dirty): its base's history records the change too
        if isinstance(o, Tensor) and o._grad_fn is ctx and id(o) in dirty and \
                o._meta is not None and o._meta.base is not None:
            rebase_view(o, o._meta.base, o)
    return tuple(result) if is_tuple else result[0]


def _save(ctx, outs, result, executable):
    """ctx's saved tensors: (tensor, version), or for its own outputs (no cycle) (array, version
    counter, version, output_nr)."""
    out_index = {id(o): k for k, o in enumerate(outs) if isinstance(o, Tensor)}
    saved, tensors = [], []
    for t in ctx._to_save:
        k = None if t is None else out_index.get(id(t))
        tensors.append(t if k is None else result[k])
        if t is None:
            saved.append(None)
        elif k is not None and result[k]._grad_fn is ctx:
            vc = _shared_vc(result[k])
            saved.append((result[k]._value, vc, vc[0], k))
        else:
            if executable:
                check_saveable(t)
            saved.append((t, 0 if t._vc is None else t._vc[0]))
    ctx._to_save = ()
    hooks = hooks_now()
    if hooks is not None:
        saved = [e if e is None else pack(t, hooks) for t, e in zip(tensors, saved)]
    return saved


class Error(Node):
    """PyTorch's DelayedError: behind a once_differentiable backward's outputs, it raises."""

    __slots__ = ("_msg",)
    _cpp_prefix = "torch::autograd::"

    def __init__(self, msg, n_out, edges):
        self._msg, self._next, self._n_out, self._seq = msg, tuple(edges), n_out, new_seq()
        self._pre_hooks = self._retains = None

    def _backward(self, buf, create_graph):
        raise RuntimeError(self._msg)


def once_differentiable(fn):
    """Mark a `backward` as not differentiable: differentiating its result raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not (MODE.enabled and any(isinstance(a, Tensor) and a._requires_grad for a in args)):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        fakes = [edge(wrap(o._value, True)) if isinstance(o, Tensor) else None for o in outs]
        err = Error("trying to differentiate twice a function that was marked with "
                    "@once_differentiable", len(outs), fakes)
        wrapped = tuple(wrap(o._value, True, err, k) if isinstance(o, Tensor) else o
                        for k, o in enumerate(outs))
        return wrapped if isinstance(outputs, tuple) else wrapped[0]
    return wrapper


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
