"""The backward engine: run the recorded graph's nodes in PyTorch's order (the ready node with
the highest sequence number first), each once all gradients flowing into it are summed. A plain
backward passes arrays to compiled programs; `create_graph=True` passes recording tensors."""

from __future__ import annotations

import heapq

import numpy as np

from functrans.torch._dtype import from_numpy
from functrans.torch._grad_mode import MODE
from functrans.torch._graph import ERR_BACKWARD_TWICE, OpNode, unpack_input, unpack_output
from functrans.torch._ops import copy_for_grad
from functrans.torch._record import loud, quiet
from functrans.torch._saved_hooks import Packed, unpack_node
from functrans.torch._tensor import Size, Tensor, _shared_vc, edge, warn_once, wrap

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")


def make_roots(tensors, grads, create_graph):
    """(edge, gradient) per output, with PyTorch's checks and its implicit scalar gradient."""
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        root_edge = None
        if _is_gradient_edge(t):  # an output named by its graph edge (autograd.graph)
            root_edge, t = tuple(t), None
            v = _edge_value_like(*root_edge)
        elif not isinstance(t, Tensor):
            raise TypeError(f"backward expects Tensors as outputs, got {type(t).__name__} at "
                            f"position {i}.")
        elif not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        else:
            v = t._value
        if g is None:
            if v.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if v.dtype.kind != "f":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {t.dtype}")
            g = wrap(np.ones(v.shape, v.dtype)) if create_graph else np.ones(v.shape, v.dtype)
        else:
            if not isinstance(g, Tensor):
                g = wrap(np.asarray(g, v.dtype))
            if g._value.shape != v.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of "
                    f"{Size(g._value.shape)} and output[{i}] has a shape of "
                    f"{Size(v.shape)}.")
            if g._value.dtype != v.dtype:
                if "c" in (g._value.dtype.kind, v.dtype.kind):
                    raise RuntimeError(
                        "For complex Tensors, both grad_output and output are required to have "
                        f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                        f"{g.dtype} and output[{i}] has a dtype of {from_numpy(v.dtype)}.")
                if root_edge is not None:
                    raise RuntimeError(
                        f"Function {root_edge[0].name()} returned an invalid gradient at index "
                        f"{root_edge[1]} - expected dtype {g.dtype} but got a gradient of the "
                        "output; the gradient is required to have the same dtype as the output")
                g = g.to(t.dtype) if create_graph else wrap(g._value.astype(v.dtype))
            if not create_graph:
                g = g._value
        roots.append((root_edge if root_edge is not None else edge(t), g))
    return roots


def _is_gradient_edge(x) -> bool:
    return isinstance(x, tuple) and len(x) == 2 and hasattr(x, "node")


def _edge_value_like(node, nr):
    """A read-only array shaped and typed like output `nr` of `node` (a GradientEdge root)."""
    prog = getattr(node, "_prog", None)
    meta = [(node.variable._value.shape, node.variable._value.dtype)] if node._is_accumulate \
        else [(a.shape, a.dtype) for a in prog.out_avals] if prog is not None \
        else getattr(node, "_out_meta", None)
    if not meta or meta[nr] is None:
        raise TypeError(f"autograd cannot find the shape of output {nr} of {node.name()}: "
                        "pass the tensor itself instead of its GradientEdge")
    return np.broadcast_to(np.zeros((), meta[nr][1]), meta[nr][0])


def run_backward(tensors, grads, *, retain_graph, create_graph, inputs=None, accumulate=True):
    """Tensor.backward, autograd.backward and .grad: `inputs`' gradients unless `accumulate`d."""
    roots = make_roots(tensors, grads, create_graph)
    if create_graph and accumulate:
        warn_once("create_graph", CREATE_GRAPH_WARNING, stacklevel=4)
    captures = None
    if inputs is not None:
        captures = {}
        for k, t in enumerate(inputs):
            named_by_edge = _is_gradient_edge(t)
            if not (named_by_edge or isinstance(t, Tensor)):
                raise TypeError(f"inputs must be Tensors, got {type(t).__name__} at position {k}")
            if not (named_by_edge or t._requires_grad):
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            node, nr = t if named_by_edge else edge(t)
            captures.setdefault(node, []).append((nr, k))
    deps, needed, reached = _dependencies(roots, captures, run_captured=accumulate)
    captured = [None] * (len(inputs) if inputs is not None else 0)

    prev_mode = MODE.enabled
    MODE.enabled = create_graph
    token = quiet()
    try:
        _execute(roots, deps, needed, reached, captures, captured, retain_graph,
                 create_graph, accumulate)
    finally:
        loud(token)
        MODE.enabled = prev_mode
    if inputs is None or not accumulate:
        return captured if inputs is not None else None
    for t, g in zip(inputs, captured):  # backward(inputs=...): non-leaf inputs get .grad
        if g is not None and isinstance(t, Tensor) and not edge(t)[0]._is_accumulate:
            accumulate_grad(t, g, create_graph)
    return None


def _dependencies(roots, captures, run_captured=False):
    """(in-degrees, nodes that run, nodes that receive gradients). As in PyTorch, a captured
    node runs only if a node it leads to is captured too, or for backward(inputs=...)."""
    deps = {}
    parents = {} if captures is not None else None
    for (n, _), _ in roots:
        deps[n] = deps.get(n, 0) + 1
    stack = list(deps)
    while stack:
        n = stack.pop()
        for e in n._next:
            if not e:
                continue
            c = e[0]
            if c not in deps:  # found: its edges are walked once
                deps[c] = 0
                stack.append(c)
            deps[c] += 1
            if parents is not None:
                parents.setdefault(c, []).append(n)
    if captures is None:
        return deps, None, None
    reached = set()
    stack = [n for n in captures if n in deps]
    while stack:
        n = stack.pop()
        if n in reached:
            continue
        reached.add(n)
        stack.extend(parents.get(n, ()))
    if run_captured:
        return deps, reached, reached
    runs = {p for n in reached for p in parents.get(n, ())}
    return deps, runs, reached


def _execute(roots, deps, needed, reached, captures, captured, retain_graph, create_graph,
             accumulate):
    """Run the graph in PyTorch's order. At each node: its outputs' tensor hooks, retain_grad
    and captures, then (if it runs) pre-hooks, backward (or accumulation) and post hooks."""
    heap, buffers = [], {}
    push, pop = heapq.heappush, heapq.heappop
    for (node, nr), g in roots:
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_out
        buf[nr] = g if buf[nr] is None else buf[nr] + g
        deps[node] -= 1
        if deps[node] == 0:
            push(heap, (-node._seq, node))
    plain = not create_graph
    zeros = {}  # id -> an efficient zero gradient in flight (PyTorch's ZeroTensor)
    while heap:
        node = pop(heap)[1]
        buf = buffers.pop(node)
        if node._is_accumulate:
            m = node.variable._meta
            if m is not None and m.hooks:
                _run_tensor_hooks(m.hooks, buf, create_graph, leaf=True)
        pre = node._pre_hooks
        if pre:
            _run_tensor_hooks(pre, buf, create_graph)
        if node._retains:
            _retain(node, buf)
        if captures is not None and node in captures:
            for nr, k in captures[node]:
                captured[k] = buf[nr]
        if needed is not None and node not in needed:
            continue
        if pre:
            _run_node_prehooks(pre, buf, create_graph)
        post = getattr(node, "_post_hooks", None)
        if node._is_accumulate:
            if accumulate and buf[0] is not None:
                t = node.variable
                accumulate_grad(t, buf[0], create_graph)
                if t._meta.post_hooks:
                    for hook in list(t._meta.post_hooks):
                        if hook(t) is not None:
                            raise RuntimeError("Tensor post accumulate grad hooks should return "
                                               "None.")
            if post:
                _run_post_hooks(post, (), buf, create_graph)
            continue
        nexts = node._next
        prog = node._prog if type(node)._backward is _opnode_backward else None
        if prog is not None and (_all_undefined(buf) or prog.error is None and (
                prog.zero_tensor or zeros and _all_zero_tensors(buf, zeros))):
            # no gradient defined flowing in: none flows out (PyTorch's any_grad_defined), but
            # the nodes below still run, so a custom Function sees its undefined gradients.
            # An efficient zero tensor (sgn's derivative; or only zero tensors flow in): zeros
            # flow out, which the nodes below pass on (so 1 / 0 after it meets no 0 * inf)
            if not retain_graph:
                node._release()
            none = _all_undefined(buf)
            pairs = [(nexts[i], None if none else _zero_tensor(prog.in_avals[i], create_graph,
                                                                zeros)) for i in prog.diff_inputs]
        elif plain and prog is not None and node._saved is not None and prog.error is None:
            # the hot path, written out (a call per node costs 2-3% of a backward): the node's
            # compiled program on its saved inputs (version-checked), saved outputs and the
            # gradients of its outputs (zeros where none is defined)
            saved = node._saved
            args = []
            for t, v in saved:
                if t is None:
                    args.append(v)
                else:
                    vc = t._vc
                    if vc is not None and vc[0] != v:
                        unpack_input(t, v)  # raises PyTorch's version error
                    args.append(t._value)
            so = node._saved_out
            if so:
                for entry, k in zip(so, prog.used_outputs):
                    args.append(unpack_output(entry, node, k))
            for k, g in enumerate(buf):
                if g is None:
                    a = prog.out_avals[k]
                    g = np.zeros(a.shape, a.dtype)
                args.append(g)
            res = prog.fn(*args)
            if not retain_graph and (saved or so):
                node._saved = node._saved_out = None
            if post:
                grads = [None] * len(nexts)
                for i, r in zip(prog.diff_inputs, res):
                    grads[i] = r
                pairs = zip(nexts, _run_post_hooks(post, grads, buf, False, nexts))
            else:
                pairs = zip([nexts[i] for i in prog.diff_inputs], res)
        else:
            grads = node._backward(buf, create_graph)
            if not retain_graph:
                node._release()
            if post:
                grads = _run_post_hooks(post, grads, buf, create_graph, nexts)
            pairs = zip(nexts, grads)
        for e, g in pairs:
            if not e:
                continue
            child, nr = e
            if reached is not None and child not in reached:
                continue  # PyTorch sends nothing to a node that neither runs nor captures
            cbuf = buffers.get(child)
            if cbuf is None:  # an undefined (None) gradient reaches the node too
                cbuf = buffers[child] = [None] * child._n_out
            if g is not None:
                prev = cbuf[nr]
                if prev is None:
                    cbuf[nr] = g
                elif zeros and zeros.get(id(prev)) is prev:
                    cbuf[nr] = g  # zero tensor + g
                elif not (zeros and zeros.get(id(g)) is g):
                    cbuf[nr] = prev + g
            d = deps[child] - 1
            deps[child] = d
            if d == 0:
                push(heap, (-child._seq, child))


def _all_zero_tensors(buf, zeros) -> bool:
    """Whether every gradient defined in `buf` is an efficient zero tensor."""
    for g in buf:
        if g is not None and zeros.get(id(g)) is not g:
            return False
    return True


def _zero_tensor(aval, create_graph, zeros):
    z = np.zeros(aval.shape, aval.dtype)
    if create_graph:
        z = wrap(z)
    zeros[id(z)] = z
    return z


def _all_undefined(buf) -> bool:
    for g in buf:
        if g is not None:
            return False
    return True


def _as_hook_arg(g, create_graph):
    return None if g is None else (g if create_graph else wrap(np.asarray(g)))


def _from_hook(r, create_graph):
    return r if create_graph or r is None else r._value


def _run_tensor_hooks(hooks, buf, create_graph, leaf=False):
    """The hooks of the node's output tensors (`(output_nr, fn)`; a leaf's: fns, stopping at an
    undefined gradient), in order; a tensor a hook returns replaces that gradient."""
    for h in list(hooks):
        if leaf and buf[0] is None:
            return
        if leaf or type(h) is tuple:
            nr, fn = (0, h) if leaf else h
            res = fn(_as_hook_arg(buf[nr], create_graph))
            if res is not None:
                buf[nr] = _from_hook(res, create_graph)


def _run_node_prehooks(hooks, buf, create_graph):
    """`grad_fn.register_prehook` hooks: fn(grad_outputs) -> grad_outputs | None."""
    for h in list(hooks):
        if type(h) is not tuple:
            res = h(tuple(_as_hook_arg(g, create_graph) for g in buf))
            if res is not None:
                for i, r in enumerate(res):
                    buf[i] = _from_hook(r, create_graph)


def _run_post_hooks(hooks, grads, buf, create_graph, nexts=()):
    """`grad_fn.register_hook` hooks: fn(grad_inputs, grad_outputs) -> grad_inputs | None."""
    slots = [i for i, e in enumerate(nexts) if e is not False]
    grads = list(grads)
    outs = tuple(_as_hook_arg(g, create_graph) for g in buf)
    for h in list(hooks):
        ins = tuple(_as_hook_arg(grads[i], create_graph) for i in slots)
        res = h(ins, outs)
        if res is not None:
            for i, r in zip(slots, res):
                grads[i] = _from_hook(r, create_graph)
    return grads


def _retain(node, buf):
    """retain_grad: the gradient flowing into a retained output, added to its `.grad`."""
    for nr, ref in node._retains.items():
        t, g = ref(), buf[nr]
        if t is None or g is None:
            continue
        m = t._get_meta()
        if isinstance(g, Tensor):
            m.grad = g.clone() if m.grad is None else m.grad + g
        else:
            m.grad = wrap(np.array(g)) if m.grad is None else wrap(m.grad._value + g)


def accumulate_grad(t, g, create_graph):
    """AccumulateGrad: the first gradient becomes `.grad`; later ones add in place (out of place
    when building a graph)."""
    m = t._get_meta()
    dt = t._value.dtype
    if isinstance(g, Tensor):
        if g._value.dtype != dt:
            g = g.to(t.dtype)
        if m.grad is None:
            if g._requires_grad:
                m.grad = copy_for_grad(g)
                m.grad._value = _laid_out_like(t._value, m.grad._value)
            else:
                m.grad = wrap(_laid_out_like(t._value, g._value, copy=True))
        elif MODE.enabled:
            m.grad = m.grad + g
        else:
            _add_in_place(m, g._value)
        return
    if m.grad is None:
        m.grad = wrap(_laid_out_like(t._value, np.asarray(g, dtype=dt), copy=True))
    else:
        _add_in_place(m, g)


def _laid_out_like(param, g, copy=False):
    """`g` in `param`'s memory order, as PyTorch lays out `.grad` (so `p.grad.view(-1)` works
    for a contiguous parameter, whatever order the backward pass produced)."""
    order = "F" if param.flags.f_contiguous and not param.flags.c_contiguous else "C"
    return np.array(g, order=order, copy=True) if copy else np.asarray(g, order=order)


def _add_in_place(m, g):
    grad = m.grad
    if grad._value.flags.writeable and grad._value.shape == np.shape(g):
        np.add(grad._value, g, out=grad._value, casting="unsafe")
    else:
        grad._value = grad._value + g
    _shared_vc(grad)[0] += 1


def _opnode_backward(node, buf, create_graph):
    """A recorded op's backward on recording tensors (create_graph=True; else _execute's)."""
    prog = node._prog
    if prog.error is not None:
        raise RuntimeError(f"the derivative for '{node.name()}' is not implemented: "
                           f"{prog.error}")
    if type(node._saved_out) is Packed:  # kept by saved-tensor hooks
        args = unpack_node(node._saved_out, True)
    elif node._saved is None:
        raise RuntimeError(ERR_BACKWARD_TWICE)
    else:
        args = []
        for t, v in node._saved:
            if t is not None:
                unpack_input(t, v)  # raises PyTorch's error if t changed in place since
            args.append(wrap(v) if t is None else t)
        for so, k in zip(node._saved_out or (), prog.used_outputs):
            args.append(wrap(unpack_output(so, node, k), True, node, k, so[1]))
    for k, g in enumerate(buf):
        a = prog.out_avals[k]
        args.append(wrap(np.zeros(a.shape, a.dtype)) if g is None else _as_tensor(g))
    out = [None] * len(node._next)
    for i, r in zip(prog.diff_inputs, prog.run_tensors(args)):
        out[i] = _as_tensor(r)
    return out


def _as_tensor(g):
    return g if isinstance(g, Tensor) else wrap(np.asarray(g))


OpNode._backward = _opnode_backward
