"""The forward half of the tape: an `Op` (a primitive, or primitives PyTorch shows as one node)
runs on arrays and, when an input requires grad, records one node named as PyTorch names it."""

from __future__ import annotations

import functools

import numpy as np

from functrans.torch._grad_mode import MODE
from functrans.torch._graph import new_seq, node_class
from functrans.torch._programs import get_program
from functrans.torch._saved_hooks import OPEN, hooks_now, pack_node
from functrans.torch._tensor import Tensor, _shared_vc, check_saveable, edge, wrap

_new = object.__new__

# PyTorch computes inf and nan silently; numpy warns. Ops run with numpy's floating-point
# warnings off, set through the context variable np.errstate itself uses (a tenth of its cost).
try:
    from numpy._core.umath import _extobj_contextvar as _EXTOBJ
    from numpy._core.umath import _make_extobj
    _QUIET = _make_extobj(all="ignore")
    _set, loud = _EXTOBJ.set, _EXTOBJ.reset
except ImportError:  # numpy 1.x: the public (slower) way
    _QUIET = "ignore"

    def _set(level):
        return np.seterr(all=level)

    def loud(token):
        np.seterr(**token)
quiet = functools.partial(_set, _QUIET)


class Op:
    """How to run (`impl`, on arrays) and differentiate (`traced`, bindable) one op.
    `forward_params`: params only `impl` reads (not in the backward program or its key);
    `zero_tensor_derivative`: the row's torch_zero_tensor_derivative (sgn's)."""

    __slots__ = ("name", "impl", "traced", "multiple", "forward_params", "node_cls",
                 "zero_tensor_derivative", "__weakref__")

    def __init__(self, name, impl, traced, multiple=False, forward_params=(),
                 zero_tensor_derivative=False):
        self.name, self.impl, self.traced, self.multiple = name, impl, traced, multiple
        self.forward_params, self.zero_tensor_derivative = forward_params, zero_tensor_derivative
        self.node_cls = node_class(name)

    def __repr__(self):
        return f"Op({self.name})"


_PRIM_OPS: dict = {}  # one Op per (primitive, name): bounded by the table, never evicted


def prim_op(prim, name=None) -> Op:
    """The Op of primitive `prim`, its node named `name` (default: the row's torch_name)."""
    op = _PRIM_OPS.get((prim, name))
    if op is None:
        default = "".join(w.title() for w in prim.name.split("_")) + "Backward0"
        op = Op(name or prim.torch_name or default, prim.impl, prim.bind, prim.multiple_results,
                zero_tensor_derivative="torch_zero_tensor_derivative" in prim.props)
        # setdefault: threads racing here share one Op (it keys the backward programs)
        op = _PRIM_OPS.setdefault((prim, name), op)
    return op


def composite(name, multiple=False):
    """Decorator: a function of primitives recorded as ONE node named `name`."""
    return lambda fn: Op(name, fn, fn, multiple)


def _as_array(x):
    return x if type(x) is np.ndarray else np.asarray(x)


def check_broadcast(*shapes: tuple) -> tuple:
    """The shape operands of `shapes` broadcast to, or PyTorch's RuntimeError naming the first
    axis where they do not (folded from the left, as its TensorIterator does)."""
    shape = shapes[0]
    for src in shapes[1:]:
        if src == shape:
            continue
        n = max(len(shape), len(src))
        a, b = (1,) * (n - len(shape)) + shape, (1,) * (n - len(src)) + src
        for i in reversed(range(n)):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of "
                                   f"tensor b ({b[i]}) at non-singleton dimension {i}")
        shape = tuple(np.broadcast_shapes(a, b))
    return shape


def run(op: Op, inputs, vals, params=None):
    """`op` on `vals` (the arrays of `inputs`, Tensors or constants), recorded: a Tensor, or a
    list. A None input is an operand PyTorch does not count (an index, a Scalar overload's)."""
    token = quiet()
    try:
        out = op.impl(*vals, **params) if params else op.impl(*vals)
    finally:
        loud(token)
    if MODE.enabled:
        needs = tuple([isinstance(t, Tensor) and t._requires_grad for t in inputs])
        if True in needs:
            params = params or {}
            if op.forward_params:
                params = {k: v for k, v in params.items() if k not in op.forward_params}
            return (record_multiple if op.multiple else record)(op, inputs, vals, out, needs,
                                                                params)
    if op.multiple:
        return [wrap(_as_array(o)) for o in out]
    return _plain(out)


def _plain(out):
    return wrap(out if type(out) is np.ndarray else np.asarray(out))


def run1(op: Op, x, v):
    """`run` for a single-result op of one tensor `x` (whose array is `v`), no params."""
    token = _set(_QUIET)
    try:
        out = op.impl(v)
    finally:
        loud(token)
    if x._requires_grad and MODE.enabled:
        return record(op, (x,), (v,), out, (True,), {})
    return _plain(out)


def run2(op: Op, a, b, va, vb):
    """`run` for a single-result op of two operands (Tensors or constants), no params."""
    token = _set(_QUIET)
    try:
        out = op.impl(va, vb)
    except ValueError:
        check_broadcast(np.shape(va), np.shape(vb))
        raise
    finally:
        loud(token)
    ra = isinstance(a, Tensor) and a._requires_grad
    rb = isinstance(b, Tensor) and b._requires_grad
    if (ra or rb) and MODE.enabled:
        return record(op, (a, b), (va, vb), out, (ra, rb), {})
    return _plain(out)


def _saved(t, v):
    """What a node keeps of an input: (tensor, version), or (None, array) for a constant."""
    if isinstance(t, Tensor):
        check_saveable(t)
        vc = t._vc
        return (t, 0 if vc is None else vc[0])
    return (None, v)


def check_at_backward(node, k, t):
    """`node` keeps tensor `t` for its input k (recorded as a constant: no edge) and checks at
    backward that nothing changed t in place since, as PyTorch checks a saved output that
    needs no grad (the indices of max(dim), sort, topk, ...)."""
    used = node._prog.used_inputs
    if node._saved is not None and k in used:  # None: kept by saved-tensor hooks instead
        node._saved[used.index(k)] = _saved(t, t._value)


def _edge_of(x, need):
    if need:
        fn = x._grad_fn
        return (fn, x._output_nr) if fn is not None and x._meta is None else edge(x)
    return None if x is not None else False


def record(op, inputs, vals, out, needs, params):
    """Record the node of a single-result op already run (`out`: its raw result); the hot path."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    n = len(vals)
    prog = get_program(op, params, vals, needs, (out,))
    node = _new(op.node_cls)
    node._seq, node._prog, node._n_out = new_seq(), prog, 1
    node._pre_hooks = node._retains = None
    if n == 2:
        node._next = (_edge_of(inputs[0], needs[0]), _edge_of(inputs[1], needs[1]))
    elif n == 1:
        node._next = (_edge_of(inputs[0], needs[0]),)
    else:
        node._next = tuple([_edge_of(x, need) for x, need in zip(inputs, needs)])
    used = prog.used_inputs
    if not used:
        node._saved = []
    elif len(used) == 1:
        node._saved = [_saved(inputs[used[0]], vals[used[0]])]
    else:
        node._saved = [_saved(inputs[i], vals[i]) for i in used]
    t = _new(Tensor)
    t._value, t._output_nr, t._meta = out, 0, None
    differentiable = t._requires_grad = out.dtype.kind in "fc"
    t._grad_fn = node if differentiable else None
    if prog.used_outputs:
        vc = t._vc = [0, 0]
        node._saved_out = [(out, vc, 0)]
    else:
        t._vc = node._saved_out = None
    if OPEN[0] and hooks_now():
        node._saved_out = pack_node(node, inputs, vals, used, (t,), prog.used_outputs)
        node._saved = None
    return t


def record_multiple(op, inputs, vals, out, needs, params):
    """Record the node of an op with several results."""
    outs = [_as_array(o) for o in out]
    prog = get_program(op, params, vals, needs, outs)
    node = _new(op.node_cls)
    node._seq, node._prog, node._n_out = new_seq(), prog, len(outs)
    node._pre_hooks = node._retains = None
    node._next = tuple([_edge_of(x, need) for x, need in zip(inputs, needs)])
    node._saved = [_saved(inputs[i], vals[i]) for i in prog.used_inputs]
    results = [wrap(o, o.dtype.kind in "fc", node if o.dtype.kind in "fc" else None, k)
               for k, o in enumerate(outs)]
    node._saved_out = [(outs[k], _shared_vc(results[k]), 0) for k in prog.used_outputs] or None
    if OPEN[0] and hooks_now():
        node._saved_out = pack_node(node, inputs, vals, prog.used_inputs, results,
                                    prog.used_outputs)
        node._saved = None
    return results


def apply_primitive(prim, tensors, params):
    """`bind` of a primitive on Tensors (the tape trace's process_primitive)."""
    vals = [t._value for t in tensors]
    return run(prim_op(prim), tensors, vals, params)
