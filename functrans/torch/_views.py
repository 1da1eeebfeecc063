"""Views: tensors sharing their base's storage and version counter, as in PyTorch. A view keeps
its base and the ops that take it again (`replay`); an in-place op on a view rewrites the base's
history (CopySlices, see _inplace), and a view of a rewritten base takes its grad_fn again,
lazily, as one AsStridedBackward0 node."""

from __future__ import annotations

import numpy as np

from functrans.primitives import indexing as P
from functrans.primitives import shape_ops as S
from functrans.torch._grad_mode import MODE, set_grad_enabled
from functrans.torch._graph import op_display_name
from functrans.torch._record import Op, run
from functrans.torch._tensor import Tensor, _shared_vc, is_inference, wrap


def _view_mode():
    """The mode a view is made in: False (grad mode), "inference" or "no_grad"."""
    return False if MODE.enabled else "inference" if MODE.inference else "no_grad"


def as_view(x: Tensor, out: Tensor, replay) -> Tensor:
    """Mark `out` a view of `x` if it shares x's storage; `replay(t)` takes it from a `t` like x."""
    if not np.may_share_memory(out._value, x._value):
        return out
    if is_inference(x):  # an inference tensor that autograd does not track, as in PyTorch
        out._get_meta().inference = True
        out._grad_fn, out._output_nr, out._requires_grad = None, 0, False
        return out
    vc = out._vc = _shared_vc(x)
    m, xm = out._get_meta(), x._meta
    if xm is not None and xm.base is not None:  # a view of a view: a view of the same base
        m.base, m.replay, m.no_grad_view = xm.base, xm.replay + (replay,), xm.no_grad_view
        if xm.multi_view is not None:  # still guarded, PyTorch's message naming this view
            fn = out._grad_fn
            m.multi_view = (op_display_name(fn) if fn else "View", out._output_nr)
    else:
        m.base, m.replay = x, (replay,)
    m.no_grad_view = m.no_grad_view or _view_mode()
    m.view_rebases = vc[1]
    m.inference = xm is not None and xm.inference  # a view is what its source is
    if not MODE.enabled and x._requires_grad:
        out._requires_grad = True  # as PyTorch's: a view with no history that requires grad
    return out


def view_op(op, x, params=None):
    """`op` (a view op) applied to x, its result marked as a view of x."""
    return as_view(x, run(op, (x,), (x._value,), params), lambda t: view_op(op, t, params))


def multi_views(x, outs, again, name):
    """The views of a function returning several (`name`: unbind, split): no in-place on them."""
    views = tuple(as_view(x, o, lambda t, k=k: again(t)[k]) for k, o in enumerate(outs))
    for k, v in enumerate(views):
        if v._meta is not None and v._meta.base is not None:
            v._meta.multi_view = (name, k)
    return views


def gather_flat(x, pos, idx=None):
    """x's elements at flat positions pos (x[0], x[1], ... share one backward program)."""
    return P.gather(S.reshape(x, (int(np.prod(x.shape, dtype=np.int64)),)), pos, axis=0)


# a view taken again from its base after an in-place operation (PyTorch uses as_strided)
AS_STRIDED = Op("AsStridedBackward0", lambda x, pos: np.take(x, pos), gather_flat)


def _replayed(view, t, grad_mode: bool) -> Tensor:
    """The ops that took `view` from its base, replayed on `t` (the base, or one like it)."""
    with set_grad_enabled(grad_mode):
        for again in view._meta.replay:
            t = again(t)
    return t


def view_positions(view) -> np.ndarray:
    """The flat positions of a view's elements in its base: its ops replayed on an index grid."""
    b = view._meta.base._value
    return _replayed(view, wrap(np.arange(b.size, dtype=np.int64).reshape(b.shape)), False)._value


def changes_dtype(view) -> bool:
    """Whether one of the ops a view was taken by changes the dtype (view_as_real, ...)."""
    return any(getattr(again, "changes_dtype", False) for again in view._meta.replay)


def take_history(t, res):
    """`t` takes `res`'s grad_fn (after an in-place op or a view taken again); retain_grad
    follows it there."""
    old_fn, old_nr = t._grad_fn, t._output_nr
    t._grad_fn, t._output_nr, t._requires_grad = res._grad_fn, res._output_nr, res._requires_grad
    m = t._meta
    if m is None or not m.retains_grad:
        return
    kept = getattr(old_fn, "_retains", None)
    if kept is not None:
        ref = kept.get(old_nr)
        if ref is not None and ref() is t:
            del kept[old_nr]
    m.retains_grad = False
    if t._grad_fn is not None:
        t.retain_grad()


def mode_view_error(kind: str, rebased: bool) -> str:
    """PyTorch's message for a `kind` ("no_grad", "inference") view (or its base) changed."""
    no_grad = kind == "no_grad"
    what = ("its base or another view of its base has been modified inplace" if rebased
            else "is being modified inplace")
    return (f"A view was created in {'no_grad mode' if no_grad else 'inference mode'} and "
            f"{what} {'with grad mode enabled' if no_grad else 'in normal mode'}. Given that "
            "this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
            "code by moving both the view and the inplace either both inside the "
            f"{'no_grad' if no_grad else 'inference_mode'} block (if you don't want the inplace "
            "to be tracked) or both outside (if you want the inplace to be tracked).")


def retake_view(t):
    """A new grad_fn (AsStridedBackward0) for a view whose base changed in place since."""
    m = t._meta
    if m.no_grad_view:
        raise RuntimeError(mode_view_error(m.no_grad_view, rebased=True))
    base = m.base
    if changes_dtype(t):
        fresh = _replayed(t, base, True)  # no strided form across dtypes: PyTorch replays these too
    else:
        pos = view_positions(t)
        with set_grad_enabled(True):
            fresh = run(AS_STRIDED, (base, None), (base._value, pos))
    m.view_rebases = t._vc[1]
    take_history(t, fresh)


Tensor._retake_view = retake_view
