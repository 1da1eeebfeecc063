"""Saved-tensor hooks (`torch.autograd.graph.saved_tensors_hooks`): while a pair (pack, unpack)
is set, every tensor a node saves for its backward is handed to `pack` when the node is
recorded, only what `pack` returns is kept, and `unpack` of it gives the tensor back when the
backward runs (to keep saved tensors on disk or compressed, say).

As in PyTorch, the unpacked tensor lends its values only: gradients still flow to the tensor
that was saved (a leaf's accumulator, or the node and output number that made it), and a
constant operand (a Python number) is not a tensor and is never packed."""

from __future__ import annotations

import threading
import weakref

from functrans.torch._tensor import Tensor, _shared_vc, accumulator, wrap


class _State(threading.local):
    """The hooks set in this thread (innermost last), why they may not be (if disabled), and
    whether a hook is running (the ops it runs save without hooks)."""

    def __init__(self):
        self.hooks, self.disabled, self.busy = [], None, False


STATE = _State()
OPEN = [0]  # hooks set in any thread: while none are, recording skips the thread-local test
_OPEN_LOCK = threading.Lock()


class Packed:
    """What a node keeps of its saved tensors under hooks: per tensor (what pack returned,
    unpack, where its gradient goes: (node, output_nr) or None)."""

    __slots__ = ("inputs", "outputs")

    def __init__(self, inputs, outputs):
        self.inputs, self.outputs = inputs, outputs


def pack(t: Tensor, hooks):
    """`t` through the pack hook of `hooks`: (packed, unpack hook, the edge t's gradient takes:
    (node, output_nr), or None)."""
    pack_hook, unpack_hook = hooks
    before = 0 if t._vc is None else t._vc[0]
    busy, STATE.busy = STATE.busy, True
    try:
        packed = pack_hook(t)
    finally:
        STATE.busy = busy
    if (0 if t._vc is None else t._vc[0]) != before:
        raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors "
                           "provided as input to pack hook cannot be modified by in-place "
                           "operations as this can lead to unexpected side-effects. Please "
                           "open an issue if you need to perform in-place operations on the "
                           "input to a pack hook.")
    if not t._requires_grad:
        return packed, unpack_hook, None
    fn = t.grad_fn
    return packed, unpack_hook, (fn, t._output_nr) if fn is not None else (accumulator(t), 0)


def unpack(entry, as_tensor: bool):
    """The array of a packed entry (as_tensor: a Tensor whose gradient goes where the saved
    tensor's went)."""
    packed, unpack_hook, where = entry
    busy, STATE.busy = STATE.busy, True
    try:
        t = unpack_hook(packed)
    finally:
        STATE.busy = busy
    if not isinstance(t, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(t).__name__}")
    if not as_tensor:
        return t._value
    if where is None:
        return wrap(t._value)
    node, nr = where
    if node._is_accumulate:     # a leaf: a leaf of its own, sharing the saved leaf's accumulator
        x = wrap(t._value, True, None, 0, _shared_vc(t))
        x._get_meta().acc = weakref.ref(node)
        return x
    return wrap(t._value, True, node, nr, _shared_vc(t))


def hooks_now():
    """The pair of hooks a tensor saved now goes through, or None."""
    return STATE.hooks[-1] if OPEN[0] and STATE.hooks and not STATE.busy else None


def pack_node(node, inputs, vals, used_inputs, outputs, used_outputs) -> Packed:
    """The saved tensors of a node just recorded, through the innermost hooks: the inputs at
    `used_inputs` (a constant's array is kept as it is) and its own outputs at `used_outputs`."""
    hooks = hooks_now()
    ins = [pack(inputs[i], hooks) if isinstance(inputs[i], Tensor) else vals[i]
           for i in used_inputs]
    outs = [pack(outputs[k], hooks) for k in used_outputs]
    return Packed(ins, outs)


def unpack_node(packed: Packed, as_tensors: bool) -> list:
    """A packed node's saved values, inputs then outputs, in the order its program reads them;
    a constant input comes back as its array."""
    out = []
    for e in packed.inputs:
        if type(e) is tuple:
            out.append(unpack(e, as_tensors))
        else:
            out.append(wrap(e) if as_tensors else e)
    out.extend(unpack(e, as_tensors) for e in packed.outputs)
    return out


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through `pack_hook` when saved
    and `unpack_hook` when the backward needs them (torch.autograd.graph.saved_tensors_hooks).
    Nested, the innermost wins; the hooks are this thread's."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if STATE.disabled is not None:
            raise RuntimeError(STATE.disabled)
        STATE.hooks.append((self.pack_hook, self.unpack_hook))
        with _OPEN_LOCK:
            OPEN[0] += 1
        return self

    def __exit__(self, *exc):
        if STATE.hooks:         # an exit with none set (an unpack hook's, say) changes nothing
            STATE.hooks.pop()
            with _OPEN_LOCK:
                OPEN[0] -= 1


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors kept as copies on the CPU (torch.autograd.graph.save_on_cpu); every tensor
    here is on the CPU already, so this keeps a copy and gives it back."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(t):
            return t.device, t.detach().clone()

        def unpack_from_cpu(packed):
            device, t = packed
            return t.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Context manager: inside it, setting saved-tensor hooks raises RuntimeError(error_message)
    (torch.autograd.graph.disable_saved_tensors_hooks); it raises on entry if hooks are set."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        if STATE.hooks:
            raise RuntimeError(self.error_message)
        self._previous, STATE.disabled = STATE.disabled, self.error_message
        return self

    def __exit__(self, *exc):
        STATE.disabled = self._previous


def hooks_enabled() -> bool:
    """Whether saved-tensor hooks may be set here (torch._C._autograd's
    _saved_tensors_hooks_is_enabled)."""
    return STATE.disabled is None
