"""The recorded graph: nodes (one class per PyTorch name: `MulBackward0`, ...), leaves'
`AccumulateGrad`, and saved values as SavedVariable keeps them (an input as (tensor, version), an
output as (array, version counter, version): no cycle), version-checked when unpacked."""

from __future__ import annotations

import itertools
import re

from functrans.torch._dtype import kind

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")

new_seq = itertools.count().__next__  # the sequence numbers of nodes: the later runs first


def _type_name(dtype) -> str:
    """PyTorch's name of a tensor type in messages: torch.FloatTensor, CPUComplexFloatType."""
    k = kind(dtype)
    return f"CPU{k}Type" if dtype.kind == "c" else f"torch.{k}Tensor"


class Node:
    """Base of every grad_fn."""

    __slots__ = ("_next", "_seq", "_n_out", "_pre_hooks", "_retains", "_post_hooks",
                 "_metadata", "__weakref__")
    _is_accumulate = False
    _cpp_prefix = ""  # PyTorch's nodes written in C++ report torch::autograd::Name

    def name(self) -> str:
        return self._cpp_prefix + type(self).__name__

    @property
    def next_functions(self):
        # an entry of _next is an edge (node, output_nr), None (an input needing no gradient:
        # PyTorch shows (None, 0)), or False (an operand PyTorch does not count as an input)
        return tuple((None, 0) if e is None else e for e in self._next if e is not False)

    @property
    def metadata(self) -> dict:
        """A dict kept with the node for the user's data (made on first use)."""
        m = getattr(self, "_metadata", None)
        if m is None:
            m = self._metadata = {}
        return m

    def register_prehook(self, hook):
        """Call `hook(grad_outputs)` before this node runs (a tuple returned replaces them)."""
        return append_hook(self, "_pre_hooks", hook)

    def register_hook(self, hook):
        """Call `hook(grad_inputs, grad_outputs)` after this node runs (a tuple returned wins)."""
        return append_hook(self, "_post_hooks", hook)

    def _release(self):
        pass

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


def append_hook(holder, attr, item):
    """Append `item` to the list `holder.attr` (made on first use); the handle removes it."""
    items = getattr(holder, attr, None)
    if items is None:
        items = []
        setattr(holder, attr, items)
    items.append(item)
    return RemovableHandle(items, item)


class RemovableHandle:
    """What registering a hook returns: `remove()` unregisters it."""

    __slots__ = ("_list", "_item")

    def __init__(self, lst, item):
        self._list, self._item = lst, item

    def remove(self):
        if self._item in self._list:
            self._list.remove(self._item)


class OpNode(Node):
    """A recorded op: its backward program and saved values."""

    __slots__ = ("_prog", "_saved", "_saved_out")

    def _release(self):
        if self._saved or self._saved_out:
            self._saved = self._saved_out = None


# one class per torch name (bounded by the primitive table and the shim's ops); never evicted,
# since type(grad_fn) identity must hold; setdefault keeps one class when threads race
_NODE_CLASSES: dict[str, type] = {}
_CPP_NODES = {"CopySlices", "CopyBackwards"}


def node_class(name: str) -> type:
    """The OpNode subclass named `name` (created once), so type(grad_fn).__name__ is `name`."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        attrs = {"__slots__": (), "_cpp_prefix": "torch::autograd::" * (name in _CPP_NODES)}
        cls = _NODE_CLASSES.setdefault(name, type(name, (OpNode,), attrs))
    return cls


class AccumulateGrad(Node):
    """Where gradients of a leaf land: its `.grad`."""

    __slots__ = ("variable",)
    _is_accumulate = True
    _cpp_prefix = "torch::autograd::"

    def __init__(self, variable):
        self.variable, self._next, self._n_out = variable, (), 1
        self._seq = (1 << 62) + new_seq()  # run as soon as ready, as in PyTorch
        self._pre_hooks = self._retains = None


def op_display_name(node) -> str:
    """`AddBackward0` -> `Add`: how PyTorch names a node in its messages."""
    return re.sub(r"Backward\d*$", "", type(node).__name__)


def version_error(value, grad_fn, output_nr, current, saved) -> RuntimeError:
    """PyTorch's message for a saved value changed in place."""
    where = f", which is output {output_nr} of {op_display_name(grad_fn)}," if grad_fn else ""
    shape = ", ".join(map(str, value.shape))
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{_type_name(value.dtype)} [{shape}]]{where} is at version {current}; "
        f"expected version {saved} instead. Hint: enable anomaly detection to find the "
        "operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False).")


def unpack_input(t, version):
    """The array of a saved input, after checking nothing changed it in place since."""
    vc = t._vc
    if vc is not None and vc[0] != version:
        raise version_error(t._value, t.grad_fn, t._output_nr, vc[0], version)
    return t._value


def unpack_output(saved, node, output_nr):
    arr, vc, version = saved
    if vc[0] != version:
        raise version_error(arr, node, output_nr, vc[0], version)
    return arr
