"""In-place ops with PyTorch's rules: `x.op_(...)` writes `op(x, ...)` into x's storage, bumps the
version counter and, when recording, rebases x's history onto the new node. On a view, the base
becomes CopySlices(old base, new values) and the view is taken again."""

from __future__ import annotations

import numbers

import numpy as np

from functrans.primitives import elementwise as E
from functrans.primitives import shape_ops as S
from functrans.primitives.registry import REGISTRY
from functrans.torch import _shape as SH
from functrans.torch._dtype import _category, kind, type_name
from functrans.torch._grad_mode import MODE
from functrans.torch._graph import OpNode
from functrans.torch._indexing import (check_broadcasts, copy_slices, drop_leading_units,
                                       numpy_index, setitem_out_of_place)
from functrans.torch._ops import _operand, as_tensor, to_dtype
from functrans.torch._record import Op, check_broadcast, prim_op, run
from functrans.torch._saved_hooks import Packed
from functrans.torch._tensor import Tensor, _dim, _shared_vc, is_inference, wrap
from functrans.torch._complex import copy_parts
from functrans.torch._views import changes_dtype, mode_view_error, take_history, view_positions

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_ERROR = ("a view of a leaf Variable that requires grad is being used in an "
                      "in-place operation.")
INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")
MULTI_VIEW_ERROR = (
    "Output {k} of {name} is a view and is being modified inplace. This view is the output of "
    "a function that returns multiple views. Such functions do not allow the output views to "
    "be modified inplace. You should replace the inplace operation by an out-of-place one.")


def check_inplace(self, recording):
    """PyTorch's refusals of in-place changes: to an inference tensor outside inference mode,
    and when recording to a leaf, a view of one, a no_grad view or one of several views."""
    if is_inference(self) and not MODE.inference:
        raise RuntimeError(INFERENCE_INPLACE_ERROR)
    if not recording:
        return
    m = self._meta
    if m is not None and m.base is not None and self._requires_grad:
        if m.no_grad_view:
            raise RuntimeError(mode_view_error(m.no_grad_view, rebased=False))
        if m.multi_view is not None:
            name, k = m.multi_view
            raise RuntimeError(MULTI_VIEW_ERROR.format(k=k, name=name))
    if self._requires_grad and self._grad_fn is None:
        raise RuntimeError(LEAF_ERROR)
    base = self._base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError(VIEW_OF_LEAF_ERROR)


def check_fits(dst: tuple, *srcs: tuple):
    """PyTorch's error unless values of shapes `srcs` broadcast to a tensor of shape `dst`."""
    shape = check_broadcast(dst, *srcs)
    if shape != dst:
        raise RuntimeError(f"output with shape {list(dst)} doesn't match the broadcast shape "
                           f"{list(shape)}")


def write(self, value):
    """Copy `value` into self's storage (PyTorch's shape and dtype rules); bump the version."""
    check_inplace(self, recording=False)  # an inference tensor outside inference mode
    dst = self._value
    src = value._value if isinstance(value, Tensor) else np.asarray(value)
    check_fits(dst.shape, src.shape)
    if _category(src.dtype) > _category(dst.dtype):
        raise RuntimeError(f"result type {kind(src.dtype)} can't be cast to the desired "
                           f"output type {kind(dst.dtype)}")
    if not dst.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the "
            "operation.")
    np.copyto(dst, src, casting="unsafe")
    _shared_vc(self)[0] += 1


def inplace(self, fn, *args, broadcasts=False, **kwargs):
    """self <- fn(self, *args): the in-place form of an out-of-place op (`broadcasts`: an
    elementwise one, whose tensor operands must broadcast to self's shape)."""
    recording = MODE.enabled
    check_inplace(self, recording)
    if broadcasts:
        check_fits(self._value.shape, *[a._value.shape for a in (*args, *kwargs.values())
                                        if isinstance(a, Tensor)])
    base = self._base
    needs = recording and (self._requires_grad or base is not None and base._requires_grad or
                           any(isinstance(a, Tensor) and a._requires_grad for a in args))
    if not needs:
        write(self, fn(self, *args, **kwargs))
        return self
    if base is not None:
        if self._meta.no_grad_view:
            raise RuntimeError(mode_view_error(self._meta.no_grad_view, rebased=False))
        self.grad_fn  # noqa: B018  (regenerates the view's history if its base changed)
    src = wrap(self._value, self._requires_grad, self._grad_fn, self._output_nr)
    res = as_tensor(fn(src, *args, **kwargs))
    if not res._requires_grad:
        write(self, res)
        return self
    if res._value.dtype != self._value.dtype:
        if _category(res._value.dtype) > _category(self._value.dtype):
            write(self, res)  # raises PyTorch's cast error
        res = to_dtype(res, self._value.dtype)
    node = res._grad_fn
    if isinstance(node, OpNode) and (type(node._saved_out) is Packed or node._saved and any(
            t is src for t, _ in node._saved)):
        src._value = src._value.copy()  # the old value, needed by backward
    if base is not None:
        return rebase_view(self, base, res, written=False)
    write(self, res)
    vc = self._vc
    vc[1] += 1  # the history changed: views taken before must be taken again
    _rebase(self, res, vc)
    return self


def rebase_view(view, base, res, written=True):
    """`view` of `base` overwritten with `res` (`written` or here): CopySlices(base, res)."""
    if changes_dtype(view):  # view_as_real, .imag, ...: written on the base's float parts
        new_base = copy_parts(base, res, view)
    else:
        new_base = copy_slices(base, res, view_positions(view))
    if not written:
        write(view, res)  # the storage is shared: this writes the base too
    vc = base._vc
    vc[1] += 1
    _rebase(base, new_base, vc)
    view.grad_fn  # noqa: B018  (the view taken again from the new base)
    return view


def _rebase(self, res, vc):
    node = res._grad_fn
    if isinstance(node, OpNode) and type(node._saved_out) is list:
        node._saved_out = [(self._value, vc, vc[0]) if k == res._output_nr else so
                           for so, k in zip(node._saved_out, node._prog.used_outputs)]
    take_history(self, res)  # res requires grad: it records the change


# --- the in-place-only ops -------------------------------------------------------------------

def _overwrite(x, v):
    """x's values replaced by v (broadcast): the gradient flows to v, none to x."""
    return E.select(np.ones((), np.bool_), S.convert_element_type(v, x.dtype), x)


_OVERWRITE = {name: Op(name, _overwrite, _overwrite) for name in
              ("FillBackward2", "FillBackward3", "ZeroBackward0", "CopyBackwards",
               *[f"{c}Backward{k}" for c in ("Eq", "Ne", "Lt", "Le", "Gt", "Ge") for k in (0, 1)])}


def _overwrite_(self, name, value, inputs):
    """self <- value (broadcast, cast) through node `name` (`inputs`: its inputs after self)."""
    v = value._value if isinstance(value, Tensor) else value

    def overwrite(x, _):
        check_fits(x._value.shape, np.shape(v))
        return run(_OVERWRITE[name], (x,) + inputs, (x._value, v))
    return inplace(self, overwrite, value)


def compare_(compare, node):
    """x.eq_(other) from torch.eq (`compare`), and the like: x <- 1 or 0 in x's dtype, as the
    node `node`Backward0 (other a number) or 1 (a tensor), whose gradient is zero."""
    def method(self, other):
        name = f"{node}Backward{int(isinstance(other, Tensor))}"
        return _overwrite_(self, name, compare(self, other), (None,))
    method.__name__ = compare.__name__ + "_"
    return method


def fill_(self, value):
    if isinstance(value, Tensor):
        if value._value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._value.ndim} dimensions.")
        return _overwrite_(self, "FillBackward3", value, (value,))
    return _overwrite_(self, "FillBackward2", _operand(value, self._value.dtype), (None,))


def zero_(self):
    return _overwrite_(self, "ZeroBackward0", np.zeros((), self._value.dtype), (None,))


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor | numbers.Number):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type_name(src)}")
    src = as_tensor(src)
    return _overwrite_(self, "CopyBackwards", src, (src,))


def setitem(self, idx, value):
    """self[idx] = value: a number, or a tensor whose shape PyTorch checks first."""
    is_tensor = isinstance(value, Tensor)
    if not is_tensor and not isinstance(value, numbers.Number | np.generic):
        raise TypeError(f"can't assign a {type_name(value)} to a "
                        f"torch.{kind(self._value.dtype)}Tensor")
    np_idx = numpy_index(idx)
    if is_tensor and value._value.ndim:
        _check_value_shape(self, np_idx, value._value)
    if not (MODE.enabled and (self._requires_grad or is_tensor and value._requires_grad)):
        check_inplace(self, MODE.enabled)
        if not self._value.flags.writeable:
            write(self, self._value)  # raises PyTorch's error
        self._value[np_idx] = value._value if is_tensor else value
        _shared_vc(self)[0] += 1
        return
    if self._requires_grad and self._grad_fn is None and _takes_view(self, idx):
        raise RuntimeError(VIEW_OF_LEAF_ERROR)
    inplace(self, setitem_out_of_place, idx, value)


def _check_value_shape(self, np_idx, v):
    """PyTorch's error unless `v` fits self[np_idx]: index_put_'s for an advanced index, else
    expand's (v, less its leading unit axes, expanded to self[np_idx])."""
    target = self._value[np_idx].shape
    if v.shape == target:
        return
    try:
        check_broadcasts(v.shape, target)
    except RuntimeError:
        if any(isinstance(i, bool | np.ndarray) for i in np_idx):
            raise
        SH.expand(wrap(v.reshape(drop_leading_units(v.shape))), target)


def _takes_view(x, idx) -> bool:
    """Whether PyTorch writes x[idx] = v through a view of x (an int, None or a partial slice,
    no advanced index) rather than into x itself."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    view, dim = False, 0
    for i in parts:
        if i is None or isinstance(i, bool | np.bool_):
            view = True
        elif i is Ellipsis:
            dim += x._value.ndim - sum(j is not None and j is not Ellipsis and
                                       not isinstance(j, bool | np.bool_) for j in parts)
        elif isinstance(i, slice):
            n = x._value.shape[dim] if dim < x._value.ndim else 1
            view |= range(n)[i] != range(n)
            dim += 1
        elif isinstance(i, int | np.integer) or isinstance(i, Tensor) and \
                i._value.ndim == 0 and i._value.dtype.kind in "iu":
            view, dim = True, dim + 1
        else:
            return False
    return view


# --- in-place view ops: squeeze_, unsqueeze_, t_, transpose_ --------------------------------

def _view_inplace(self, prim, node, params, again):
    """self <- its view `again(self)`, recorded as node `node` of row `prim`."""
    recording = MODE.enabled
    check_inplace(self, recording)
    op, m = prim_op(REGISTRY[prim], node), self._meta
    if recording and self._requires_grad:
        self.grad_fn  # noqa: B018  (a view's history taken again if its base changed)
        src = wrap(self._value, True, self._grad_fn, self._output_nr)
        out = run(op, (src,), (self._value,), params)
        self._grad_fn, self._output_nr = out._grad_fn, 0
        self._value = out._value  # retain_grad stays on the old node, as in PyTorch
    else:
        self._value = op.impl(self._value, **params)
    if m is not None and m.base is not None:
        m.replay = m.replay + (again,)
    _shared_vc(self)[0] += 1
    return self


def squeeze_(self, dim=None):
    node = "SqueezeBackward" + ("3" if dim is None else "4" if isinstance(dim, int) else "5")
    return _view_inplace(self, "squeeze", node,
                         {"dimensions": SH.squeeze_dims(self._value.shape, dim)},
                         lambda t: SH.squeeze(t, dim))


def unsqueeze_(self, dim):
    return _view_inplace(self, "expand_dims", "UnsqueezeBackward1",
                         {"dimensions": (_dim(dim, self._value.ndim + 1),)},
                         lambda t: SH.unsqueeze(t, dim))


def transpose_(self, dim0, dim1):
    return _view_inplace(self, "transpose", "TransposeBackward1",
                         {"permutation": SH.swapped(self._value.ndim, dim0, dim1)},
                         lambda t: SH.transpose(t, dim0, dim1))


def t_(self):
    nd = self._value.ndim
    if nd > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _view_inplace(self, "transpose", "TBackward1", {"permutation": tuple(range(nd))[::-1]},
                         SH.t)
