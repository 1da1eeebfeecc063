"""Programs for the gaps PyTorch's own autograd test-suite found in functrans.torch.

Each program runs under PyTorch and under functrans.torch and records what it observes (see
parity_programs.observe). test_suite_gaps.py compares functrans.torch's record with PyTorch's:
always with the records in suite_gap_fixtures.json, and live when torch is installed.
Re-record with torch==2.13.0 installed: `python tests/functrans_torch/suite_gap_programs.py`.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from importlib import import_module

from parity_programs import _message, record_fixtures

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suite_gap_fixtures.json")
PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


def _mod(torch, name):
    return import_module(f"{torch.__name__}.{name}")


def _attempt(rec, name, fn):
    """Record fn()'s result, or its error (type and message)."""
    try:
        rec(name, fn())
    except Exception as e:  # the error is what the program observes
        rec(name, [type(e).__name__, str(e).split("\n")[0]])


def _warned(rec, name, fn):
    """Record the warnings fn() gives (category and first line), whatever their category."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    # the class path a message names depends on where the program is defined: left out
    rec(name, [[w.category.__name__, re.sub(r"<class '[^']*'>", "<class>",
                                            _message(w.message).split("\n")[0])]
               for w in caught])


def _d(torch, values):
    return torch.tensor(values, dtype=torch.float64)


@program
def node_hooks_run_in_pytorch_order(torch, rec):
    log = []

    def tensor_hook(g):
        log.append("tensor")
        return g * 3

    def node_prehook(gs):
        log.append("pre")
        return tuple(g * 2 for g in gs)

    def node_posthook(grad_inputs, grad_outputs):
        log.append(f"post{len(grad_inputs)}:{len(grad_outputs)}")

    a = _d(torch, [1.0, 2.0]).requires_grad_()
    b = a.clone()
    b.grad_fn.register_prehook(node_prehook)
    b.register_hook(tensor_hook)
    b.grad_fn.register_hook(node_posthook)
    acc = b.grad_fn.next_functions[0][0]
    rec("acc_name", acc.name())
    a.register_hook(tensor_hook)
    acc.register_prehook(node_prehook)
    acc.register_hook(node_posthook)
    a.register_post_accumulate_grad_hook(lambda t: log.append("post_acc"))
    b.sum().backward(retain_graph=True)
    rec("backward_log", list(log))
    rec("a.grad", a.grad)
    log.clear()
    rec("grad", torch.autograd.grad(b.sum(), (a,), retain_graph=True))
    rec("grad_log", list(log))  # AccumulateGrad's own hooks do not run under grad()
    log.clear()
    b.sum().backward(inputs=(b,))
    rec("inputs_log", list(log))
    rec("b.grad", b.grad)


@program
def node_posthook_replaces_grad_inputs(torch, rec):
    x = _d(torch, [1.0, -2.0, 3.0]).requires_grad_()
    y = _d(torch, [0.5, 0.5, 0.5]).requires_grad_()
    z = x * y
    seen = []

    def post(grad_inputs, grad_outputs):
        seen.append([grad_inputs, grad_outputs])
        return (grad_inputs[0] * 10, grad_inputs[1])

    handle = z.grad_fn.register_hook(post)
    z.sum().backward(retain_graph=True)
    rec("seen", seen[0])
    rec("grads", [x.grad, y.grad])
    handle.remove()
    x.grad = y.grad = None
    z.sum().backward()
    rec("after_remove", [x.grad, y.grad])
    t = _d(torch, [1.0]).requires_grad_()
    t.register_post_accumulate_grad_hook(lambda p: p.grad)
    _attempt(rec, "post_acc_returns_value", lambda: (t * 2).sum().backward())


@program
def variable_constructor(torch, rec):
    Variable = _mod(torch, "autograd").Variable
    data = torch.arange(1.0, 5.0)
    v = Variable(data, requires_grad=True)
    rec("flags", [v.requires_grad, v.is_leaf, v.grad_fn is None, isinstance(v, Variable),
                  isinstance(data, Variable)])
    (v * v).sum().backward()
    rec("grad", v.grad)
    rec("shares_data", [v.detach().add_(1) is not None, data])
    w = Variable(torch.tensor([3, 4]))
    rec("int_variable", [w, w.requires_grad])


@program
def gradient_edges(torch, rec):
    graph = _mod(torch, "autograd.graph")
    x = _d(torch, [1.0, 2.0]).requires_grad_()
    h = x.clone()
    edge = graph.get_gradient_edge(h)
    rec("edge", [edge.node.name(), edge.output_nr, isinstance(edge.node, graph.Node)])
    h *= 3
    g_old, g_new = torch.autograd.grad(h.sum(), (edge, h))
    rec("grads_old_new", [g_old, g_new])
    leaf_edge = graph.get_gradient_edge(x)
    rec("leaf_edge", leaf_edge.node.name())
    rec("grad_to_leaf_edge", torch.autograd.grad((x * x).sum(), leaf_edge))
    y = _d(torch, [1.0]).requires_grad_()
    _attempt(rec, "materialize_unused_edge",
             lambda: torch.autograd.grad((x * 2).sum(), (x, graph.get_gradient_edge(y.clone())),
                                         allow_unused=True, materialize_grads=True))
    z = x * x
    graph.increment_version(x)
    _attempt(rec, "after_increment_version", lambda: z.sum().backward())


@program
def gradient_edge_outputs(torch, rec):
    graph = _mod(torch, "autograd.graph")
    x = _d(torch, [1.0, 2.0]).requires_grad_()

    def fn(reduce):
        tmp = x.sin().cos()
        if reduce:
            tmp = tmp.sum()
        return tmp.exp().clone().sin().sum(), graph.get_gradient_edge(tmp)

    out, edge = fn(True)
    (tmp_grad,) = torch.autograd.grad(out, (edge,))
    rec("two_steps", torch.autograd.grad(edge, (x,), grad_outputs=(tmp_grad,)))
    rec("one_step", torch.autograd.grad(fn(True)[0], (x,)))
    _attempt(rec, "not_scalar", lambda: torch.autograd.grad(fn(False)[1], (x,)))
    _attempt(rec, "bad_shape", lambda: torch.autograd.grad(
        fn(True)[1], (x,), grad_outputs=_d(torch, [1.0, 2.0, 3.0])))
    torch.autograd.backward(fn(True)[1])
    rec("backward", x.grad)


@program
def data_assignment(torch, rec):
    a = torch.tensor(1.0, requires_grad=True)
    a.data = torch.tensor(2.0)
    rec("assigned", [a, a.requires_grad])
    _attempt(rec, "int_data", lambda: setattr(a, "data", torch.tensor(3)))
    _attempt(rec, "none_data", lambda: setattr(a, "data", None))

    def delete():
        del a.data

    _attempt(rec, "delete", delete)


@program
def var_mean_and_std_mean(torch, rec):
    x = _d(torch, [[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]]).requires_grad_()
    v, m = torch.var_mean(x, dim=1, keepdim=True)
    s, m0 = torch.std_mean(x, dim=0, correction=0)
    rec("values", [v, m, s, m0])
    rec("same_node", [v.grad_fn is m.grad_fn, s.grad_fn is m0.grad_fn])
    g = torch.autograd.grad((v * m).sum() + (s * m0.exp()).sum(), x, create_graph=True)[0]
    rec("grad", g)
    rec("second", torch.autograd.grad(g.sin().sum(), x))
    count = []

    def prehook(grad_outputs):
        count.append(len(grad_outputs))
        return tuple(None if t is None else t * 2 for t in grad_outputs)

    v2, m2 = torch.var_mean(x, dim=0)
    m2.grad_fn.register_prehook(prehook)
    rec("prehooked", torch.autograd.grad((v2 + m2).sum(), x))
    rec("prehook_saw", count)
    rec("full", list(torch.var_mean(x)) + list(torch.std_mean(x, unbiased=False)))


@program
def split_variants(torch, rec):
    x = torch.arange(10.0, dtype=torch.float64).requires_grad_()
    parts = torch.split_with_sizes(x, [3, 7])
    rec("split_with_sizes", parts)
    unsafe = torch.unsafe_split(x * 1, 4)
    rec("unsafe_split", unsafe)
    pieces = (x * 1).unsafe_split_with_sizes([5, 5])
    rec("grad", torch.autograd.grad((parts[0] ** 2).sum() + (unsafe[2] * 3).sum()
                                    + pieces[1].sum(), x))
    _attempt(rec, "bad_sizes", lambda: torch.split_with_sizes(x, [3, 3]))


@program
def scatter_reduce_all_reductions(torch, rec):
    base = [[0.5, -1.0, 2.0, 0.3, 1.1], [1.5, 0.2, -0.7, 0.9, -2.0]]
    source = [[0.4, 0.4, 3.0, -1.5], [0.9, 1.5, -0.7, 0.1]]
    index = torch.tensor([[1, 1, 0, 4], [0, 0, 2, 2]])
    weights = _d(torch, [[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, 0.5, 2.0, 1.0, 3.0]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            x = _d(torch, base).requires_grad_()
            src = _d(torch, source).requires_grad_()
            out = torch.scatter_reduce(x, 1, index, src, reduce, include_self=include_self)
            g = torch.autograd.grad((out * weights).sum().sin(), (x, src), create_graph=True)
            gg = torch.autograd.grad(g[0].sum() + g[1].sum(), (x, src), allow_unused=True)
            rec(f"{reduce}_{include_self}", [out, g[0].detach(), g[1].detach(),
                                             [None if t is None else t.abs().sum() for t in gg]])
    rec("max_alias", _d(torch, base).scatter_reduce(1, index, _d(torch, source), "max"))
    _attempt(rec, "bad_reduce", lambda: _d(torch, base).scatter_reduce(1, index,
                                                                         _d(torch, source),
                                                                         "median"))


@program
def nanmedian_isin_as_strided(torch, rec):
    nan = float("nan")
    x = _d(torch, [[1.0, nan, 3.0, 2.0], [4.0, 4.0, 1.0, nan], [nan, 0.5, nan, -1.0]])
    x.requires_grad_()
    values, indices = torch.nanmedian(x, 1)
    full = x.nanmedian()
    rec("dim", [values, indices, type(values.grad_fn).__name__])
    rec("full", [full, type(full.grad_fn).__name__])
    rec("grad", torch.autograd.grad(values.sum() * 2 + full, x))
    rec("isin", [torch.isin(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4, 6])),
                 torch.isin(_d(torch, [0.5, 1.5]), 1.5, invert=True)])
    y = torch.arange(12.0, dtype=torch.float64).requires_grad_()
    s = torch.as_strided(y, (3, 3), (2, 1), 1)
    rec("as_strided", [s, type(s.grad_fn).__name__])
    rec("as_strided_grad", torch.autograd.grad((s * s).sum(), y))


@program
def legacy_constructors_and_new(torch, rec):
    x = torch.randn(2, 3, dtype=torch.float64)
    rec("isinstance", [isinstance(x.float(), torch.FloatTensor),
                       isinstance(x, torch.FloatTensor), isinstance(x, torch.DoubleTensor),
                       isinstance(x.long(), torch.LongTensor)])
    rec("constructors", [torch.FloatTensor([1, 2]), torch.LongTensor([3, 4]),
                         torch.BoolTensor([True, False]), torch.DoubleTensor(2, 3).shape,
                         torch.FloatTensor().shape])
    rec("types", [x.type(), x.type(torch.IntTensor).dtype, x.type("torch.FloatTensor").dtype,
                  torch.LongTensor.dtype])
    n = x.new(4, 2)
    rec("new", [n.shape, n.dtype, x.new([1, 2]).dtype, x.new_zeros(2), x.new_ones((1, 2)),
                x.new_full((2,), 7.0), x.new_tensor([1.0, 2.0]).dtype, x.new_empty(3).shape])
    v = torch.arange(6.0).view(2, 3)
    rec("views", [v._is_view(), v._base is not None, torch.arange(3.0)._is_view()])
    rec("inference", [torch.is_inference_mode_enabled()])
    with torch.inference_mode():
        t = torch.ones(2)
        rec("inside", [torch.is_inference_mode_enabled(), t.is_inference(),
                       torch.is_inference(t)])


@program
def out_argument(torch, rec):
    a = _d(torch, [1.0, 2.0])
    out = torch.empty(2, dtype=torch.float64)
    r = torch.add(a, 1, out=out)
    rec("add", [r is out, out])
    rec("exp_into_double", torch.exp(torch.ones(2), out=torch.empty(2, dtype=torch.float64)))
    _attempt(rec, "cast_error", lambda: torch.add(torch.ones(2), 1,
                                                  out=torch.empty(2, dtype=torch.long)))
    _attempt(rec, "requires_grad_error",
             lambda: torch.mul(a.requires_grad_(), 2, out=torch.empty(2, dtype=torch.float64)))
    with torch.no_grad():
        rec("no_grad", torch.mul(a, 2, out=torch.empty(2, dtype=torch.float64)))
    empty = torch.empty(0)
    torch.sin(torch.ones(2, 2), out=empty)
    rec("resized_from_empty", empty.shape)
    _warned(rec, "resize_warning", lambda: torch.sub(torch.ones(2), 1, out=torch.empty(3)))


@program
def gradcheck_checks_reentrancy_before_values(torch, rec):
    # a backward both wrong and nondeterministic: PyTorch runs each output's backward twice
    # and reports it not reentrant before comparing it with the finite differences
    class Noisy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * (2 + torch.rand(g.shape, dtype=g.dtype))

    x = _d(torch, [0.5, 1.5]).requires_grad_()
    _attempt(rec, "error", lambda: torch.autograd.gradcheck(Noisy.apply, (x,)))


@program
def gradcheck_checks(torch, rec):
    gc = _mod(torch, "autograd.gradcheck")
    Function = torch.autograd.Function

    class NonDet(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * (1 + torch.rand(g.shape, dtype=g.dtype) * 1e-6)

    class BadUndefined(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            if g is None:
                raise RuntimeError("undefined")
            return g

    x = _d(torch, [0.5, 1.5]).requires_grad_()
    _attempt(rec, "nondet", lambda: torch.autograd.gradcheck(NonDet.apply, (x,)))
    rec("nondet_tol", torch.autograd.gradcheck(NonDet.apply, (x,), nondet_tol=1e-4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _attempt(rec, "undefined", lambda: torch.autograd.gradcheck(BadUndefined.apply, (x,)))
    rec("undefined_off", torch.autograd.gradcheck(BadUndefined.apply, (x,),
                                                  check_undefined_grad=False))

    def hooked(t):
        y = t.clone()
        y.register_hook(lambda g: g + 1e-2)
        return y

    _attempt(rec, "not_linear", lambda: torch.autograd.gradcheck(hooked, (x,), atol=1e-1))
    _attempt(rec, "no_differentiable_output",
             lambda: torch.autograd.gradcheck(lambda t: t.detach() * 2, (x,)))
    rec("no_outputs", torch.autograd.gradcheck(lambda t: (), (x,)))
    _attempt(rec, "shape_changes", lambda: torch.autograd.gradcheck(
        lambda t: torch.cat([t, t]) if bool((t >= 1).all()) else t,
        (_d(torch, [1.0]).requires_grad_(),)))
    a, b = _d(torch, [[0.2, 0.4], [0.6, 0.8]]).requires_grad_(), \
        _d(torch, [[1.0, 2.0], [3.0, 4.0]]).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec("numerical", gc.get_numerical_jacobian(lambda xs: (2 * xs[0] + xs[1],), (a, b),
                                                   eps=1e-6))
        jac, reentrant, sizes_ok, types_ok = gc.get_analytical_jacobian((a, b), 2 * a + b)
        rec("analytical", [jac, reentrant, sizes_ok, types_ok])
        _attempt(rec, "grad_out", lambda: gc.get_numerical_jacobian(lambda xs: xs[0], (a,),
                                                                    grad_out=2.0))
    _warned(rec, "deprecation", lambda: gc.get_analytical_jacobian((a,), a * 2))



@program
def gradcheck_outputs_without_grad_and_strided_inputs(torch, rec):
    x = _d(torch, [1.0, 2.0]).requires_grad_()
    rec("output_needing_no_grad", torch.autograd.gradcheck(lambda t: (t.detach() * 1, t * 2),
                                                           (x,)))
    xt = _d(torch, [[1.0, 2.0], [3.0, 4.0]]).t().requires_grad_()
    rec("non_contiguous", torch.autograd.gradcheck(lambda t: t * t, (xt,)))
    rec("non_contiguous_2nd", torch.autograd.gradgradcheck(lambda t: t * t * t, (xt,)))
    _attempt(rec, "jacobian_of_empty_output", lambda: torch.autograd.functional.jacobian(
        lambda t: t[:0] * 2, _d(torch, [1.0, 1.0, 1.0])))

@program
def functional_validation_and_strict(torch, rec):
    F = _mod(torch, "autograd.functional")
    inp = _d(torch, [0.1, 0.2, 0.3, 0.4])

    def narrow(a):
        return 3 * a.narrow(0, 0, 3)

    def detached(a):
        return a.detach()

    def unconnected(a):
        return a.long().double().requires_grad_().clone()

    for name in ("vjp", "jvp"):
        fn = getattr(F, name)
        v = _d(torch, [1.0, 1.0, 1.0]) if name == "vjp" else inp
        _attempt(rec, f"{name}_inputs", lambda: fn(narrow, (inp, 2), v))
        _attempt(rec, f"{name}_outputs", lambda: fn(lambda a: (narrow(a), "bar"), inp, v))
        _attempt(rec, f"{name}_no_v", lambda: fn(narrow, inp))
        _attempt(rec, f"{name}_two_v", lambda: fn(narrow, inp, (v, v)))
        _attempt(rec, f"{name}_bad_v", lambda: fn(narrow, inp, v[:2]))
        _attempt(rec, f"{name}_strict_detached", lambda: fn(detached, inp, inp, strict=True))
        rec(f"{name}_lenient_detached", fn(detached, inp, inp)[1])
        _attempt(rec, f"{name}_strict_unconnected",
                 lambda: fn(unconnected, inp, inp, strict=True))
        _attempt(rec, f"{name}_strict_linear",
                 lambda: fn(lambda a: a.clone(), inp.clone().requires_grad_(), inp,
                            create_graph=True, strict=True))

    def cube_sum(a):
        return (a ** 3).sum()

    for name in ("vhp", "hvp"):
        fn = getattr(F, name)
        _attempt(rec, f"{name}_not_scalar", lambda: fn(narrow, inp, inp))
        _attempt(rec, f"{name}_bad_v", lambda: fn(cube_sum, inp, (inp, 2)))
        _attempt(rec, f"{name}_strict_linear", lambda: fn(lambda a: (3 * a).sum(), inp, inp,
                                                         strict=True))
        rec(f"{name}_value", fn(cube_sum, inp, _d(torch, [1.0, 0.0, -1.0, 2.0])))
    rec("basis", F._construct_standard_basis_for((_d(torch, [1.0, 2.0]), torch.ones(2, 1)),
                                                 (2, 2)))


@program
def checkpoint_recomputes(torch, rec):
    cp = _mod(torch, "utils.checkpoint")
    w = _d(torch, [0.5, -1.0, 2.0]).requires_grad_()
    x = _d(torch, [1.0, 2.0, 3.0]).requires_grad_()
    calls = []

    def block(t):
        calls.append(1)
        return (t * w).sin() * t

    y = cp.checkpoint(block, x, use_reentrant=True)
    rec("value", [y, type(y.grad_fn).__name__, len(calls)])
    y.sum().backward()
    rec("grads", [x.grad, w.grad, len(calls)])
    x.grad = w.grad = None
    z = cp.checkpoint(block, x, use_reentrant=False)
    rec("non_reentrant_grad", torch.autograd.grad(z.sum(), (x, w)))
    _warned(rec, "warns_without_use_reentrant", lambda: cp.checkpoint(block, x))
    _attempt(rec, "kwargs_reentrant", lambda: cp.checkpoint(block, x, use_reentrant=True,
                                                            foo=1))
    seq = [lambda t: t * 2, lambda t: t.exp(), lambda t: t.sum()]
    out = cp.checkpoint_sequential(seq, 2, x, use_reentrant=True)
    out.backward()
    rec("sequential", [out, x.grad])


@program
def checkpoint_early_stop_flag(torch, rec):
    cp = _mod(torch, "utils.checkpoint")

    def fn(a, blah=None):
        out = a.sin().exp()
        return (out * blah if blah is not None else out).sin().exp()

    a = _d(torch, [2.0, -0.5]).requires_grad_()
    b = _d(torch, [3.0, 1.5]).requires_grad_()
    for stop in (True, False):
        with cp.set_checkpoint_early_stop(stop):
            out = cp.checkpoint(fn, a, blah=b, use_reentrant=False)
        rec(f"context_{stop}", [out, torch.autograd.grad(out.sum(), (a, b))])
        out = cp.checkpoint(fn, a, use_reentrant=False, early_stop=stop)
        (g,) = torch.autograd.grad(out.sum(), a, create_graph=True)
        rec(f"kwarg_{stop}", [out, g, torch.autograd.grad(g.sum(), a)])


@program
def inference_mode_as_bare_decorator(torch, rec):
    def square(x):
        rec("enabled_inside", torch.is_inference_mode_enabled())
        return x * x

    x = _d(torch, [1.5, -2.0]).requires_grad_()
    for label, decorated in (("bare", torch.inference_mode(square)),
                             ("keyword", torch.inference_mode(mode=square)),
                             ("off", torch.inference_mode(False)(square))):
        y = decorated(x)
        rec(label, [y, torch.is_inference(y), y.requires_grad,
                    torch.is_inference_mode_enabled()])


@program
def views_made_under_no_grad_or_inference_mode(torch, rec):
    for label, mode in (("no_grad", torch.no_grad), ("inference", torch.inference_mode)):
        for requires_grad in (True, False):
            a = _d(torch, [[1.0, 2.0], [3.0, 4.0]]).requires_grad_(requires_grad).clone()
            with mode():
                view = a.view_as(a)
            _attempt(rec, f"{label}_{requires_grad}_view_modified",
                     lambda: [view.add_(2), a._version])
            a = _d(torch, [[1.0, 2.0], [3.0, 4.0]]).requires_grad_(requires_grad).clone()
            with mode():
                view = a.view(-1)
            a.mul_(3)
            _attempt(rec, f"{label}_{requires_grad}_base_modified",
                     lambda: [view, view.grad_fn is None, view.requires_grad])


@program
def views_of_inference_tensors(torch, rec):
    for requires_grad in (True, False):
        with torch.inference_mode():
            c = _d(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).requires_grad_(requires_grad)
            inside = c.view(-1)
            rec(f"inside_{requires_grad}", [inside, torch.is_inference(inside)])
        for name, f in (("view", lambda t: t.view(-1)), ("index", lambda t: t[0]),
                        ("t", lambda t: t.t()), ("unbind", lambda t: t.unbind()[1]),
                        ("narrow", lambda t: t.narrow(1, 0, 2))):
            out = f(c)
            rec(f"{name}_{requires_grad}", [out, torch.is_inference(out), out._is_view()])
        _attempt(rec, f"inplace_outside_{requires_grad}", lambda: c.view(-1).add_(1))


@program
def grad_assignment_checks(torch, rec):
    x = _d(torch, [[1.0, 2.0], [3.0, 4.0]])
    _attempt(rec, "not_a_tensor", lambda: setattr(x, "grad", 0))
    _attempt(rec, "wrong_shape", lambda: setattr(x, "grad", _d(torch, [1.0, 2.0])))
    _attempt(rec, "wrong_dtype", lambda: setattr(x, "grad", x.long()))
    _attempt(rec, "its_own_grad", lambda: setattr(x, "grad", x))
    x.grad = x.clone()
    rec("clone_accepted", x.grad)


@program
def unsafe_split_pieces_are_not_views(torch, rec):
    for name, f in (("unsafe_split", lambda t: t.unsafe_split(1)),
                    ("unsafe_split_with_sizes", lambda t: t.unsafe_split_with_sizes((1, 1, 1))),
                    ("unsafe_chunk", lambda t: t.unsafe_chunk(3)),
                    ("torch.unsafe_chunk", lambda t: torch.unsafe_chunk(t, 3))):
        a = _d(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]).requires_grad_()
        b = a * a
        s1, s2, s3 = f(b)
        rec(f"{name}_pieces", [s1._is_view(), s1._base is b, s1._version])
        s1.mul_(s2)
        rec(f"{name}_versions", [s1._version, s2._version, b._version, b])
        s1.sum().backward()
        rec(f"{name}_grad", a.grad)


@program
def views_of_multi_output_views_stay_guarded(torch, rec):
    def fresh():
        return _d(torch, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]).requires_grad_().clone()

    b = fresh().unbind(0)
    _attempt(rec, "view_as_of_unbind", lambda: b[0].view_as(b[0]).mul_(2))
    b = fresh().split(2)
    _attempt(rec, "select_of_split", lambda: b[1][0].mul_(2))
    _attempt(rec, "t_of_split", lambda: b[1].t().mul_(2))
    _attempt(rec, "narrow_of_chunk", lambda: fresh().chunk(2)[1].narrow(0, 1, 1).mul_(2))
    c = fresh().view_as(fresh()).unbind(1)
    _attempt(rec, "unbind_of_view", lambda: c[1].mul_(2))
    with torch.no_grad():
        b = fresh().unbind(0)
        rec("no_grad_view_of_unbind", b[0].view(2, 1).mul_(2))


@program
def signbit_and_isin_do_not_require_grad(torch, rec):
    x = torch.tensor([-1.5, -0.0, 0.0, 2.0, float("inf"), -float("inf")], requires_grad=True)
    out = torch.signbit(x)
    rec("signbit", [out, out.requires_grad, x.signbit()])
    rec("signbit_int", torch.signbit(torch.tensor([-3, 0, 4])))
    y = torch.tensor([[1, 2], [3, 4.0]], requires_grad=True)
    out = torch.isin(y, torch.tensor([2, 3]))
    rec("isin", [out, out.requires_grad])


@program
def inference_tensors_refuse_view_inplace_and_out_outside_the_mode(torch, rec):
    with torch.inference_mode():
        c = _d(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for name, f in (("transpose_", lambda: c.transpose_(0, 1)), ("t_", lambda: c.t_()),
                    ("unsqueeze_", lambda: c.unsqueeze_(0)), ("squeeze_", lambda: c.squeeze_())):
        _attempt(rec, name, lambda: [f(), c.shape])
    s = _d(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    _attempt(rec, "out_plain", lambda: torch.mul(s, s, out=c))
    _attempt(rec, "out_requires_grad", lambda: torch.mul(s.requires_grad_(), s, out=c))
    with torch.inference_mode():
        rec("inside", [c.t_().shape, torch.mul(s, 2.0, out=c)])


@program
def custom_function_non_tensor_outputs(torch, rec):
    class Mixed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return 2.5, x * k, None, x * x

        @staticmethod
        def backward(ctx, g_scale, g_a, g_none, g_b):
            seen.append([g_scale is None, g_none is None, g_a is None, g_b is None])
            return g_a * 3, None

    seen = []
    x = _d(torch, [1.0, -2.0]).requires_grad_()
    scale, a, none, b = Mixed.apply(x, 3)
    rec("outputs", [scale, none, a.output_nr, b.output_nr])
    a.sum().backward()
    rec("seen", seen)
    rec("grad", x.grad)


@program
def undefined_gradients_flow_through(torch, rec):
    class Drop(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    class Watch(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            seen.append(g is None)
            return g

    seen = []
    x = _d(torch, [1.0, 2.0]).requires_grad_()
    y = Drop.apply(Watch.apply(x).exp() * 2)
    y.sum().backward()
    rec("watch_saw_none", seen)
    rec("x.grad", x.grad)


@program
def grad_materialize_and_dict_inputs(torch, rec):
    x = _d(torch, [0.5]).requires_grad_()
    a = _d(torch, [1.0]).requires_grad_()
    (d,) = torch.autograd.grad(x * a, x, create_graph=True)
    (d2,) = torch.autograd.grad(d, x, create_graph=True, materialize_grads=True)
    rec("materialized", [d2, d2.requires_grad])
    rec("third", torch.autograd.grad(d2, x, materialize_grads=True))
    out = torch.autograd.grad((x * a * a).sum(), {"x": x, "a": a})
    rec("dict", [sorted(out), out["x"], out["a"]])


@program
def mode_and_construction_warnings(torch, rec):
    x = _d(torch, [1.0]).requires_grad_()
    with torch.no_grad():
        rec("numpy_under_no_grad", x.numpy().tolist())
    _attempt(rec, "numpy_with_grad", lambda: x.numpy())

    def decorate():
        @torch.no_grad()
        class Builder:
            def __init__(self):
                self.enabled = torch.is_grad_enabled()

        rec("class_decorated", Builder().enabled)

    _warned(rec, "class_decoration", decorate)

    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t

        @staticmethod
        def backward(ctx, g):
            return g

    _warned(rec, "instantiation", lambda: Identity())

    class Saver(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_variables
            return g * 2

    _warned(rec, "saved_variables", lambda: Saver.apply(x).sum().backward())
    _warned(rec, "volatile", lambda: x.volatile)


@program
def conjugate_transposes(torch, rec):
    # mT, mH, H, adjoint() (and T, t()) on 0-d to 3-d, real and complex: results, nodes, views
    # (a complex mH/H/adjoint() is conj() of the view: a copy in functrans.torch), errors
    for is_complex in (False, True):
        for shape in ((), (2,), (2, 3), (2, 3, 4)):
            x = torch.arange(1.0, 1.0 + math.prod(shape), dtype=torch.float64).reshape(shape)
            x = (torch.complex(x, -x / 2) if is_complex else x).requires_grad_()
            y = x * 2
            for name, take in (("mT", lambda t: t.mT), ("mH", lambda t: t.mH),
                               ("H", lambda t: t.H), ("adjoint", lambda t: t.adjoint()),
                               ("torch.adjoint", torch.adjoint), ("T", lambda t: t.T),
                               ("t", lambda t: t.t())):
                def taken():
                    out = take(y)
                    conjugated = out.is_conj()  # a view in PyTorch, a copy here: not compared
                    return [out, out is y, None if conjugated else out._base is y, conjugated]

                _attempt(rec, f"{x.dtype}{list(shape)}.{name}", taken)
    z = torch.tensor([[1 + 2j, 3 - 1j], [0.5j, 2.0]], dtype=torch.complex128, requires_grad=True)
    w = torch.tensor([[1.0, 2j], [3.0, 4.0]], dtype=torch.complex128)
    rec("grad_mH", torch.autograd.grad((z.mH * w).sum().abs(), z))
    rec("nodes_mH", [type(n).__name__ for n, _ in z.mH.grad_fn.next_functions])
    rec("int_adjoint", torch.adjoint(torch.tensor([[1, 2], [3, 4]])))


@program
def full_and_tile_take_sequences(torch, rec):
    # torch.full and torch.tile take a sequence (an int is a TypeError); Tensor.tile ints too
    x = _d(torch, [1.0, 2.0]).requires_grad_()
    for name, make in (("full_int", lambda: torch.full(2, 1.5)),
                       ("full_float", lambda: torch.full(2.0, 1.5)),
                       ("full_tensor", lambda: torch.full(torch.tensor([2]), 1.5)),
                       ("full_tuple", lambda: torch.full((2,), 1.5)),
                       ("full_list", lambda: torch.full([1, 2], 3)),
                       ("full_size", lambda: torch.full(torch.Size([2]), True)),
                       ("tile_int", lambda: torch.tile(x, 2)),
                       ("tile_tensor", lambda: torch.tile(x, torch.tensor(2))),
                       ("tile_tuple", lambda: torch.tile(x, (2,))),
                       ("tile_list", lambda: torch.tile(x, [2, 1])),
                       ("method_tile_int", lambda: x.tile(2)),
                       ("method_tile_ints", lambda: x.tile(2, 3)),
                       ("method_tile_tuple", lambda: x.tile((3,)))):
        _attempt(rec, name, make)


@program
def samplers_refuse_dtypes_as_pytorch(torch, rec):
    # in-place samplers on integer, bool and complex tensors: PyTorch's errors (types, messages,
    # the argument checks first), and the draws the dtypes allow
    torch.manual_seed(0)
    calls = (("uniform_", ()), ("uniform_", (2.0, 1.0)), ("normal_", ()), ("normal_", (0.0, -1.0)),
             ("random_", ()), ("random_", (0, 2)), ("random_", (5,)), ("random_", (-1, 1)),
             ("random_", (0, 256)), ("random_", (-129, 0)), ("random_", (0, 40000)),
             ("random_", (3, 1)), ("bernoulli_", ()), ("bernoulli_", (2.0,)),
             ("exponential_", ()), ("exponential_", (-1.0,)), ("geometric_", (0.5,)),
             ("geometric_", (2.0,)), ("log_normal_", ()), ("log_normal_", (1.0, -1.0)),
             ("cauchy_", ()), ("cauchy_", (0.0, -1.0)))
    for dtype in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
                  torch.complex64, torch.complex128):
        for name, args in calls:
            _attempt(rec, f"{dtype}.{name}{args}",
                     lambda: getattr(torch.zeros(5, dtype=dtype), name)(*args))
    for dtype in (torch.int64, torch.complex64):
        _attempt(rec, f"{dtype}.bernoulli_(tensor)",
                 lambda: torch.zeros(3, dtype=dtype).bernoulli_(torch.full((3,), 0.5)))


@program
def as_tensor_checks_its_device(torch, rec):
    # torch.as_tensor(..., device=) refuses a device a CPU-only build lacks, as torch.tensor does
    import numpy as np

    t, a = torch.ones(2), np.ones(2)
    for name, data in (("list", [1.0, 2.0]), ("tensor", t), ("ndarray", a)):
        for device in ("cpu", "cuda", "cuda:0", torch.device("cuda"), 0):
            _attempt(rec, f"{name}_on_{device!r}", lambda: torch.as_tensor(data, device=device))
    rec("cpu_keeps_identity", [torch.as_tensor(t, device="cpu") is t,
                               torch.as_tensor(a, device="cpu").add_(1), a.tolist()])
    torch.set_default_device("cuda")
    try:
        _attempt(rec, "default_cuda", lambda: torch.as_tensor(t))
        rec("default_cuda_given_cpu", torch.as_tensor([1.0], device="cpu"))
    finally:
        torch.set_default_device(None)


@program
def returned_indices_are_saved(torch, rec):
    # the indices of max/min(dim), sort, topk, cummax, median(dim): the node saves them, so an
    # in-place change raises PyTorch's version error at backward (first and second order)
    calls = (("max", lambda t: torch.max(t, 1)), ("min_keepdim", lambda t: t.min(0, True)),
             ("sort", lambda t: torch.sort(t, 1, descending=True)),
             ("topk", lambda t: torch.topk(t, 2)), ("cummax", lambda t: torch.cummax(t, 1)),
             ("cummin", lambda t: t.cummin(0)), ("median", lambda t: torch.median(t, 1)),
             ("nanmedian", lambda t: torch.nanmedian(t, 0, keepdim=True)))
    for name, call in calls:
        x = _d(torch, [[1.0, 3.0, 2.0], [4.0, 0.5, 5.0]]).requires_grad_()
        values, indices = call(x)
        rec(f"{name}.nodes", [values.grad_fn, values.grad_fn.next_functions, indices])
        (g,) = torch.autograd.grad((values * values).sum(), x, create_graph=True)
        # (g's own node is not compared: functrans.torch names its double-backward nodes apart)
        rec(f"{name}.grads", [g.detach(), g.requires_grad, torch.autograd.grad(g.sum(), x)])
        values, indices = call(x)
        indices.add_(0)
        _attempt(rec, f"{name}.changed", lambda: torch.autograd.grad(values.sum(), x))
        _attempt(rec, f"{name}.changed_create_graph",
                 lambda: torch.autograd.grad(values.sum(), x, create_graph=True))


def main(names=()):
    """Record every program, or with `names` only those (the other records are kept)."""
    record_fixtures(FIXTURES, PROGRAMS, names)

if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
