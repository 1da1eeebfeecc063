"""Parity programs by topic: backward, autograd.grad, leaf flags, grad mode, hooks, graph structure,
printing.

Registered in parity_observe.PROGRAMS; parity_programs.py gathers them and records the
fixtures."""

from __future__ import annotations

import math

from parity_observe import program


@program
def leaf_flags(torch, rec):
    a = torch.tensor([3.], requires_grad=True)
    b = a * a
    c = torch.tensor([5.])
    d = c * c
    rec("a", a), rec("b", b), rec("c", c), rec("d", d)


@program
def requires_grad_inheritance(torch, rec):
    a = torch.tensor([5.], requires_grad=True)
    c = torch.tensor([5.], requires_grad=False)
    rec("d", torch.sin(a * c))
    rec("e", torch.sin(c * c))


@program
def grad_accumulates_over_backward_calls(torch, rec):
    a = torch.tensor([3.], requires_grad=True)
    b = a * a
    for _ in range(3):
        b.backward(retain_graph=True)
        rec(f"grad{_}", a.grad)


@program
def non_leaf_grad_warns(torch, rec):
    a = torch.tensor([3.], requires_grad=True)
    b = a * a
    b.backward()
    rec("b_grad", b.grad)
    rec("a_grad", a.grad)


@program
def retain_grad_on_non_leaf(torch, rec):
    a = torch.tensor([3., 4.], requires_grad=True)
    b = a * a
    b.retain_grad()
    c = b.sum() * 2
    c.backward()
    rec("b_grad", b.grad), rec("retains", b.retains_grad), rec("a_grad", a.grad)
    rec("grad_flags", [b.grad.requires_grad, b.grad.is_leaf, a.grad.retains_grad])


@program
def backward_twice_errors(torch, rec):
    a = torch.tensor([3.], requires_grad=True)
    b = a * a
    b.backward()
    rec("grad", a.grad)
    b.backward()


@program
def backward_twice_without_saved_values_is_fine(torch, rec):
    a = torch.tensor([3.], requires_grad=True)
    b = a + 2
    b.backward()
    b.backward()
    rec("grad", a.grad)


@program
def implicit_grad_needs_scalar(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    (x * x).backward()


@program
def backward_on_tensor_without_grad(torch, rec):
    torch.tensor([1., 2.]).sum().backward()


@program
def gradient_shape_mismatch(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    (x * 2).backward(torch.ones(2))


@program
def vector_jacobian_product(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * x * 3 - x
    y.backward(torch.tensor([0.1, 1.0, 10.0]))
    rec("grad", x.grad)


@program
def create_graph_backward(torch, rec):
    a = torch.tensor([5.], requires_grad=True)
    b = a * a
    b.retain_grad()
    b.backward(create_graph=True)
    rec("a_grad", a.grad), rec("b_grad", b.grad)
    g = a.grad
    (h,) = torch.autograd.grad(g, a)
    rec("h", h)


@program
def autograd_grad_second_derivative(torch, rec):
    from importlib import import_module
    grad = import_module(torch.__name__ + ".autograd").grad
    a = torch.tensor([3.], requires_grad=True)
    b = a * a * a
    db = grad(b, a, create_graph=True)[0]
    d2 = grad(db, a, create_graph=True)[0]
    d3 = grad(d2, a)[0]
    rec("db", db), rec("d2", d2), rec("d3", d3), rec("a_grad_untouched", a.grad)


@program
def autograd_grad_with_grad_outputs(torch, rec):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    w = torch.tensor([[0.5], [-1.]], requires_grad=True)
    y = torch.tanh(x @ w)
    gx, gw = torch.autograd.grad(y, [x, w], grad_outputs=torch.tensor([[1.], [2.]]))
    rec("gx", gx), rec("gw", gw), rec("x_grad", x.grad)


@program
def autograd_grad_unused_input(torch, rec):
    x = torch.tensor(1., requires_grad=True)
    z = torch.tensor(2., requires_grad=True)
    y = x * 2
    rec("allowed", torch.autograd.grad(y, [x, z], retain_graph=True, allow_unused=True))
    torch.autograd.grad(y, [x, z])


@program
def autograd_grad_materialize(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    z = torch.tensor([2., 3.], requires_grad=True)
    rec("g", torch.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True))


@program
def autograd_grad_of_non_leaf(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x.exp()
    y = (h * h).sum()
    (gh,) = torch.autograd.grad(y, h)
    rec("gh", gh)


@program
def backward_inputs_argument(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 4.], requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    rec("x_grad", x.grad), rec("w_grad", w.grad)


@program
def no_grad_and_enable_grad(torch, rec):
    x = torch.tensor([1.], requires_grad=True)
    with torch.no_grad():
        y = x * 2
        with torch.enable_grad():
            z = x * 3
        rec("mode_inside", torch.is_grad_enabled())
    rec("y", y), rec("z", z), rec("mode_after", torch.is_grad_enabled())

    @torch.no_grad()
    def f(t):
        return t * 4
    rec("f", f(x))
    torch.set_grad_enabled(False)
    rec("w", x * 5)
    torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        rec("v", x * 6)
    rec("mode_end", torch.is_grad_enabled())


@program
def grad_fn_names(torch, rec):
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    v = torch.tensor([1., 2., 3.], requires_grad=True)
    m = torch.ones(3, 3, requires_grad=True)
    exprs = {
        "add": x + 1, "radd": 1 + x, "sub": x - 1, "rsub": 1 - x, "mul": x * 2,
        "div": x / 2, "rdiv": 2 / x, "neg": -x, "pow2": x ** 2, "powhalf": x ** 0.5,
        "powt": x ** v, "rpow": 2 ** x, "sqrt": x.sqrt(), "abs": x.abs(), "relu": x.relu(),
        "sigmoid": x.sigmoid(), "tanh": x.tanh(), "exp": x.exp(), "log": x.log(),
        "sin": x.sin(), "cos": x.cos(), "sum": x.sum(), "sum0": x.sum(0), "mean": x.mean(),
        "mean0": x.mean(0), "max": x.max(), "max0": x.max(0)[0], "min": x.min(),
        "amax": x.amax(0), "prod": x.prod(), "std": x.std(), "var": x.var(),
        "norm": x.norm(), "reshape": x.reshape(3, 2), "view": x.view(6),
        "flatten": x.flatten(), "t": x.t(), "T": x.T, "transpose": x.transpose(0, 1),
        "permute": x.permute(1, 0), "unsqueeze": x.unsqueeze(0), "squeeze": x.squeeze(),
        "squeeze0": x.unsqueeze(0).squeeze(0), "expand": v.expand(2, 3),
        "expand_as": v.expand_as(x), "select": x[0], "select_col": x[:, 1],
        "slice": x[:1], "index": x[[0, 1]], "mask": x[x > 2], "mm": x @ m, "dot": v @ v,
        "mv": x @ v, "cat": torch.cat([x, x]), "stack": torch.stack([v, v]),
        "clone": x.clone(), "double": x.double(), "clamp": x.clamp(0, 3),
        "where": torch.where(x > 2, x, 0.), "maximum": torch.maximum(x, x),
        "softmax": x.softmax(0), "log_softmax": torch.log_softmax(x, 0),
        "logsumexp": x.logsumexp(0), "cumsum": x.cumsum(0), "flip": x.flip(0),
        "split": x.split(1)[0], "unbind": x.unbind()[0], "narrow": x.narrow(0, 0, 1),
        "repeat": x.repeat(2, 1), "gather": torch.gather(x, 1, torch.tensor([[0], [1]])),
        "index_select": x.index_select(0, torch.tensor([1])),
        "masked_fill": x.masked_fill(x > 2, 0.), "reciprocal": x.reciprocal(),
        "outer": torch.outer(v, v), "atan2": torch.atan2(x, x), "sign": x.sign(),
    }
    for k, t in exprs.items():
        rec(k, [type(t.grad_fn).__name__] + [None if n is None else type(n).__name__
                                             for n, _ in t.grad_fn.next_functions])


@program
def next_functions_structure(torch, rec):
    a = torch.tensor([1., 2.], requires_grad=True)
    c = torch.tensor([3., 4.])
    y = (a * c).sum()
    fn = y.grad_fn
    rec("y_fn", fn.name())
    inner = fn.next_functions[0][0]
    rec("inner", inner.name())
    rec("inner_next", [(None if n is None else n.name(), i) for n, i in inner.next_functions])
    rec("leaf_is_variable", inner.next_functions[0][0].variable is a)


@program
def printing(torch, rec):
    rec("r1", repr(torch.tensor([6.], requires_grad=True)))
    a = torch.tensor(2.0, requires_grad=True)
    rec("r2", repr(a.exp()))
    rec("r3", repr(torch.tensor([[1., 2.], [3., 4.]])))
    rec("r4", repr(torch.tensor([10., 5., 2., 3.])))
    rec("r5", repr(torch.tensor([1e-5, 1.])))
    rec("r6", repr(torch.tensor([0.1234567, 123.5])))
    rec("r7", repr(torch.tensor([1, 2, 3])))
    rec("r8", repr(torch.tensor([1.5, 2.25], dtype=torch.float64)))
    rec("r9", repr(torch.tensor([True, False])))
    rec("r10", repr(torch.arange(2000.)))
    rec("r11", repr(torch.zeros(2, 0)))
    rec("r12", repr(torch.tensor(float("nan"))))
    rec("r13", repr(torch.tensor([-1., 2.])))
    rec("r14", repr(torch.linspace(0, 1, 5)))
    rec("r15", repr(torch.ones(3, 3, requires_grad=True) * 2))
    rec("r16", str(torch.tensor([1., 2.]).shape))
    rec("r17", repr(torch.float32) + repr(torch.double) + str(torch.device("cpu")))
    rec("r18", repr(torch.tensor([[1e9, 1.], [2., 3.]])))


@program
def int_tensor_cannot_require_grad(torch, rec):
    rec("ok", torch.tensor([1.], requires_grad=True).requires_grad)
    torch.tensor([1, 2], requires_grad=True)


@program
def set_requires_grad_on_non_leaf(torch, rec):
    x = torch.tensor([1.], requires_grad=True)
    y = x * 2
    y.requires_grad = False


@program
def retain_grad_without_requires_grad(torch, rec):
    torch.tensor([1.]).retain_grad()


@program
def numpy_of_requires_grad(torch, rec):
    x = torch.tensor([1.], requires_grad=True)
    rec("detached", x.detach().numpy().tolist())
    x.numpy()


@program
def item_and_scalars(torch, rec):
    x = torch.tensor([2.5], requires_grad=True)
    rec("item", x.item())
    rec("float", float(x))
    rec("tolist", x.tolist())
    rec("size", list(torch.ones(2, 3).size()))
    rec("size1", torch.ones(2, 3).size(1))
    rec("numel", torch.ones(2, 3).numel())
    rec("dim", torch.ones(2, 3).dim())
    bool(torch.tensor([1., 2.]))


@program
def grad_set_and_zeroed(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    (x * x).sum().backward()
    rec("g1", x.grad)
    x.grad.zero_()
    (x * 3).sum().backward()
    rec("g2", x.grad)
    x.grad = None
    (x * 4).sum().backward()
    rec("g3", x.grad)
    x.grad = torch.ones(3)


@program
def hooks(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    y = x * 3
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    rec("seen", seen), rec("grad", x.grad)


@program
def detach_and_data_flags(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    rec("detach", y.detach()), rec("data", y.data)
    z = y.detach()
    z.requires_grad_()
    rec("z", z)
    (z * z).sum().backward()
    rec("z_grad", z.grad), rec("x_grad", x.grad)
    y.detach_()
    rec("y_after_detach_", y)


@program
def autograd_functional(torch, rec):
    from importlib import import_module
    F = import_module(torch.__name__ + ".autograd.functional")

    def f(x):
        return (x ** 3).sum() + x[0] * x[1]

    x = torch.tensor([1., 2.], dtype=torch.float64)
    rec("jac", F.jacobian(lambda t: t ** 2 * t[0], x))
    rec("hess", F.hessian(f, x))
    out, v = F.vjp(lambda t: t * t, x, torch.tensor([1., 3.], dtype=torch.float64))
    rec("vjp", [out, v])


@program
def requires_grad_on_computed(torch, rec):
    x = torch.ones(2, requires_grad=True)
    y = (x * 2).requires_grad_()
    rec("y", y)
    z = torch.linspace(0, 1, 3).reshape(-1, 1).requires_grad_()
    rec("z", z)
    y.requires_grad_(False)


@program
def requires_grad_attr_on_computed(torch, rec):
    x = torch.ones(2, requires_grad=True)
    (x * 2).requires_grad = True


@program
def requires_grad_on_int(torch, rec):
    torch.tensor([1, 2]).requires_grad_()


@program
def grad_dtype_assign(torch, rec):
    x = torch.ones(2, requires_grad=True)
    x.grad = torch.tensor([1, 2])


@program
def post_accumulate_grad_hook(torch, rec):
    seen = []
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    h.remove()
    (x * 4).sum().backward()
    rec("seen", seen), rec("grad", x.grad)
    (x * 2).register_post_accumulate_grad_hook(lambda t: None)


@program
def autograd_functional_jvp_vhp_hvp(torch, rec):
    F = torch.autograd.functional
    x = torch.tensor([1., 2.])
    v = torch.tensor([1., 0.5])

    def g(t):
        return t ** 2 * t[0]

    def f(t):
        return (t ** 3).sum() * t[1]

    rec("jvp", F.jvp(g, x, v)), rec("vhp", F.vhp(f, x, v)), rec("hvp", F.hvp(f, x, v))
    rec("jvp2", F.jvp(lambda p, q: (p * q, p.sin()), (x, x + 1), (v, v * 2)))
    rec("vhp2", F.vhp(lambda p, q: (p * q * q).sum(), (x, x + 1), (v, v)))
    rec("jvp_cg", F.jvp(g, x, v, create_graph=True))
    rec("jvp_none", F.jvp(lambda t: t * 3, torch.tensor([2.])))
    rec("hvp_unused", F.hvp(lambda p, q: (p * p).sum(), (x, x), (v, v)))
    F.vhp(g, x, v)


@program
def autograd_functional_jacobian_hessian_options(torch, rec):
    AF = torch.autograd.functional
    W = torch.tensor([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6]], dtype=torch.float64)
    v = torch.tensor([[0.3], [-0.2], [0.7]], dtype=torch.float64)

    def net(x):
        return torch.tanh(x @ W) @ v

    def attempt(name, fn):
        try:
            rec(name, fn())
        except Exception as e:
            rec(name, [type(e).__name__, str(e)])

    x = torch.tensor([[0.1, 0.2], [0.3, -0.4]], dtype=torch.float64)
    attempt("J", lambda: AF.jacobian(net, x))
    attempt("J_vec", lambda: AF.jacobian(net, x, vectorize=True))
    attempt("J_fwd", lambda: AF.jacobian(net, x, vectorize=True, strategy="forward-mode"))
    attempt("J_fwd_unvectorized", lambda: AF.jacobian(net, x, strategy="forward-mode"))
    attempt("J_fwd_create_graph", lambda: AF.jacobian(net, x, vectorize=True,
                                                      strategy="forward-mode",
                                                      create_graph=True))
    attempt("J_fwd_strict", lambda: AF.jacobian(net, x, vectorize=True,
                                                strategy="forward-mode", strict=True))
    attempt("J_bad_strategy", lambda: AF.jacobian(net, x, strategy="backward"))
    attempt("J_create_graph_of_constant", lambda: AF.jacobian(net, x, create_graph=True))
    x2 = x.clone().requires_grad_()
    J = AF.jacobian(net, x2, create_graph=True)
    rec("J_create_graph", J)
    J.sum().backward()
    rec("x2.grad", x2.grad)
    attempt("J_of_requires_grad_input", lambda: AF.jacobian(net, x2))
    attempt("J_fwd_of_requires_grad_input",
            lambda: AF.jacobian(net, x2, vectorize=True, strategy="forward-mode"))
    rec("x_untouched", x)

    a = torch.tensor([1., 2.], dtype=torch.float64)
    b = torch.tensor([0.5, -1., 3.], dtype=torch.float64)
    attempt("J_tuples", lambda: AF.jacobian(lambda a, b: (a.sum() * b, torch.sin(a) * b[:2]),
                                            (a, b)))
    attempt("J_scalar_of_tuple", lambda: AF.jacobian(lambda a, b: (a ** 2).sum() + b.sum(),
                                                     (a, b)))
    attempt("J_input_returned", lambda: AF.jacobian(lambda a: (a, a.sum()), a))
    attempt("J_constant", lambda: AF.jacobian(lambda a: torch.zeros(2), a))
    attempt("J_constant_strict", lambda: AF.jacobian(lambda a: torch.zeros(2), a, strict=True))
    attempt("J_vec_strict", lambda: AF.jacobian(lambda a: a * 2, a, strict=True,
                                                vectorize=True))
    attempt("J_unused_strict", lambda: AF.jacobian(lambda a, b: a * 2, (a, b), strict=True))
    attempt("J_linear_strict_create_graph",
            lambda: AF.jacobian(lambda a: a * 2, a, strict=True, create_graph=True))
    attempt("J_int_output", lambda: AF.jacobian(lambda a: 3, a))
    attempt("J_list_inputs", lambda: AF.jacobian(lambda a, b: a, [a, b]))
    attempt("J_float_input", lambda: AF.jacobian(lambda a: a, 1.5))

    f = lambda x: (torch.tanh(x) ** 3).sum() + x[0] * x[1]  # noqa: E731
    p = torch.tensor([0.1, 0.2, -0.3], dtype=torch.float64)
    attempt("H", lambda: AF.hessian(f, p))
    attempt("H_vec", lambda: AF.hessian(f, p, vectorize=True))
    attempt("H_fwd", lambda: AF.hessian(f, p, vectorize=True,
                                        outer_jacobian_strategy="forward-mode"))
    attempt("H_fwd_unvectorized", lambda: AF.hessian(f, p,
                                                     outer_jacobian_strategy="forward-mode"))
    attempt("H_bad_strategy", lambda: AF.hessian(f, p, outer_jacobian_strategy="x"))
    attempt("H_create_graph", lambda: AF.hessian(f, p, create_graph=True))
    attempt("H_tuples", lambda: AF.hessian(lambda a, b: (a * b).sum() + (a ** 2).sum(),
                                           (p, p * 2)))
    attempt("H_of_vector_function", lambda: AF.hessian(torch.sin, p))
    attempt("H_of_tuple_function", lambda: AF.hessian(lambda x: (x.sum(),), p))
    attempt("H_linear", lambda: AF.hessian(lambda x: x.sum(), p))
    attempt("H_linear_strict", lambda: AF.hessian(lambda x: x.sum(), p, strict=True))
    attempt("H_constant_strict", lambda: AF.hessian(lambda x: torch.ones(()), p, strict=True))
    attempt("H_float32", lambda: AF.hessian(lambda x: (x ** 3).sum(), torch.tensor([1., 2.])))
    p2 = p.clone().requires_grad_()
    H = AF.hessian(f, p2, create_graph=True)
    rec("H_create_graph_leaf", H)
    torch.autograd.grad(H.trace(), p2)


@program
def autograd_grad_is_grads_batched(torch, rec):
    x = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, -0.6]], dtype=torch.float64,
                     requires_grad=True)
    W = torch.tensor([[0.5, -0.3], [0.1, 0.4]], dtype=torch.float64, requires_grad=True)
    u = torch.tanh(x @ W)
    I = torch.eye(2, dtype=torch.float64)
    eye = I.reshape(2, 1, 2).expand(2, 3, 2)
    g, gw = torch.autograd.grad(u, (x, W), eye, is_grads_batched=True, retain_graph=True)
    rec("g", g), rec("gw", gw)
    g, = torch.autograd.grad(u, x, eye, is_grads_batched=True, create_graph=True)
    rec("gc", [g.detach(), g.requires_grad])  # PyTorch names the node after its vmap
    d2, = torch.autograd.grad(g[0, :, 0].sum(), x)
    rec("d2", d2)
    u = torch.tanh(x @ W)
    t = torch.tensor(1., requires_grad=True)
    r = torch.autograd.grad(u, (x, t), eye, is_grads_batched=True, allow_unused=True,
                            retain_graph=True)
    rec("r", r)
    r = torch.autograd.grad(u, (x, t), eye, is_grads_batched=True, materialize_grads=True,
                            retain_graph=True)
    rec("rm", r)
    try:
        torch.autograd.grad(u, (x, t), eye, is_grads_batched=True, materialize_grads=True,
                            allow_unused=False, retain_graph=True)
    except ValueError as e:
        rec("materialize_without_allow_unused", str(e))
    r = torch.autograd.grad([u.sum(), u[0, 0]], x, [torch.ones(3, dtype=torch.float64),
                                                   torch.arange(3., dtype=torch.float64)],
                            is_grads_batched=True, retain_graph=True)
    rec("multi", r)
    try:
        torch.autograd.grad(u, x, torch.ones(3, 3), is_grads_batched=True, retain_graph=True)
    except RuntimeError as e:
        rec("err", str(e))
    try:
        torch.autograd.grad(u, x, torch.ones(4, 3, 3), is_grads_batched=True, retain_graph=True)
    except RuntimeError as e:
        rec("err2", str(e))
    torch.autograd.grad(u, x, eye, is_grads_batched=True)
    torch.autograd.grad(u, x, eye, is_grads_batched=True)


@program
def hook_on_unbind_output_without_gradient(torch, rec):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    u0, u1, u2 = torch.cat([x, x[:1]]).unbind(0)
    calls = []
    u1.register_hook(lambda g: calls.append(["u1", None if g is None else g.tolist()]))
    u0.register_hook(lambda g: calls.append(["u0", None if g is None else g.tolist()]))
    u2.register_hook(lambda g: calls.append(["u2", None if g is None else g.tolist()]))
    (u0 * 2).sum().backward()
    rec("calls", calls)
    rec("grad", x.grad)


@program
def grad_mode_decorated_generators(torch, rec):
    @torch.no_grad()
    def no_grad_gen():
        yield torch.is_grad_enabled()
        got = yield torch.is_grad_enabled()
        yield [got, torch.is_grad_enabled()]

    @torch.enable_grad()
    def enable_grad_gen():
        yield torch.is_grad_enabled()
        yield torch.is_grad_enabled()

    g = no_grad_gen()
    seen = [next(g), torch.is_grad_enabled(), next(g), torch.is_grad_enabled()]
    seen += [g.send("sent"), torch.is_grad_enabled()]
    rec("no_grad_gen", seen)
    with torch.no_grad():
        g = enable_grad_gen()
        rec("enable_grad_gen", [next(g), torch.is_grad_enabled(), next(g),
                                torch.is_grad_enabled()])
    g = no_grad_gen()
    next(g)
    g.close()
    rec("after_close", torch.is_grad_enabled())
    x = torch.tensor([1.], requires_grad=True)

    @torch.no_grad()
    def doubles(n):
        for _ in range(n):
            yield x * 2

    rec("products", [[y.requires_grad, (x * 3).requires_grad] for y in doubles(2)])


@program
def inference_tensors_refused_by_autograd(torch, rec):
    w = torch.tensor([1., 2., 3.], requires_grad=True)
    n = torch.ones(3)
    with torch.inference_mode():
        t = torch.ones(3)
        inside = w * 2
        rec("inside", [torch.is_inference_mode_enabled(), torch.is_grad_enabled(),
                       inside.requires_grad, inside.is_inference(), n[:2].is_inference(),
                       w.detach().is_inference(), torch.ones(2).requires_grad_().requires_grad])
        with torch.inference_mode(False):
            rec("nested_off", [torch.is_inference_mode_enabled(), torch.is_grad_enabled(),
                               torch.ones(1).is_inference()])
    rec("t", [t.is_inference(), torch.is_inference(t), t.requires_grad, t.detach().is_inference(),
              t[:2].is_inference(), t.clone().is_inference(), (t + 1).is_inference(),
              torch.is_inference_mode_enabled()])
    rec("not_saved", [w + t, torch.stack([w, t]), t.clone() * w, (t + w).exp()])
    rec("no_grad_use", torch.sin(t) * t)

    def attempt(name, fn):
        try:
            rec(name, fn())
        except RuntimeError as e:
            rec(name, ["RuntimeError", str(e)])

    attempt("mul", lambda: w * t)
    attempt("mul_reversed", lambda: t * w)
    attempt("matmul", lambda: w @ t)
    attempt("pow", lambda: w ** t)
    attempt("divide_by", lambda: w / t)
    attempt("divide", lambda: t / w)
    attempt("inplace_on_inference", lambda: t.add_(1))
    attempt("inplace_with_inference", lambda: (w * 1).mul_(t))
    attempt("requires_grad_", lambda: t.requires_grad_())
    attempt("version", lambda: t._version)

    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, None

    attempt("function_saves", lambda: Keep.apply(w, t))
    attempt("function_without_grad", lambda: Keep.apply(w.detach(), t))

    @torch.inference_mode()
    def make():
        return torch.ones(1)

    rec("decorated", [make().is_inference(), torch.is_inference_mode_enabled()])


@program
def second_order_with_non_leaf_inputs(torch, rec):
    # the gradient with respect to a non-leaf t0 is what reaches t0's node; in the second call
    # it flows wherever the first gradients read t0: PyTorch's div reads its operands, relu
    # and rsqrt their result (with a zero derivative in relu's), exp its result
    def second(make, body, name):
        a = torch.tensor([[0.95, -0.3, 2.0]], requires_grad=True)
        t0 = make(a)
        g = torch.autograd.grad(body(a, t0), [a, t0], create_graph=True, allow_unused=True)
        rec(f"{name}_first", [None if x is None else [x.detach(), x.requires_grad] for x in g])
        outs = [x.sum() * w for x, w in zip(g, (-0.35, -1.0)) if x is not None and
                x.requires_grad]
        if outs:
            rec(f"{name}_second", torch.autograd.grad(sum(outs), [a, t0], allow_unused=True))

    def quotient(a):
        return a / (a ** 2 + 1)

    second(quotient, lambda a, t0: torch.sin(t0).sum(), "div_sin")
    second(quotient, lambda a, t0: (a.sin() + t0.mean()).sum(), "div_mean")
    second(torch.relu, lambda a, t0: torch.sin(t0).sum(), "relu_sin")
    second(torch.relu, lambda a, t0: t0.sum(), "relu_sum")
    second(torch.relu, lambda a, t0: (a.sin() + t0.mean()).sum(), "relu_mean")
    second(lambda a: (a * a + 0.5).rsqrt(), lambda a, t0: torch.sin(t0).sum(), "rsqrt_sin")
    second(lambda a: torch.maximum(a, a.flip(1)), lambda a, t0: torch.sin(t0).sum(),
           "maximum_sin")
    second(torch.exp, lambda a, t0: (t0 * t0).sum(), "exp_square")
    x = torch.tensor([float("nan"), -0., 0., -1., 2.], requires_grad=True)
    y = torch.relu(x)
    rec("relu_values", [[math.copysign(1.0, v) if v == 0 else v for v in y.tolist()], y])
    g, = torch.autograd.grad(y, x, torch.tensor([1., float("inf"), 2., float("nan"), 3.]))
    rec("relu_grad", g)
    p = torch.tensor([float("nan"), 1., 2., 3.], requires_grad=True)
    q = torch.tensor([0., float("nan"), 2., 1.], requires_grad=True)
    rec("maximum_grads", torch.autograd.grad(torch.maximum(p, q).sum(), [p, q]))
    rec("minimum_grads", torch.autograd.grad(torch.minimum(p, q).sum(), [p, q]))


@program
def saved_tensor_hooks(torch, rec):
    hooks = torch.autograd.graph.saved_tensors_hooks
    counts = []

    def pack(x):
        counts.append("pack")
        return x

    def unpack(x):
        counts.append("unpack")
        return x

    # what pack returns is what backward reads: the gradient follows the saved values
    with hooks(lambda x: 2 * x, lambda x: x):
        a = torch.tensor([1., 2., 3.], requires_grad=True)
        (a * a).sum().backward()
    rec("mul_packed_doubled", a.grad)
    x, y = torch.ones(4, requires_grad=True), torch.ones(4)
    with hooks(pack, unpack):
        out = x * y                     # only y is needed for x's gradient: one pack
        rec("packs_at_record", list(counts))
        out.sum().backward()
        rec("after_backward", list(counts))
        (x * 3).sum().backward()        # a number is not a tensor: never packed
        rec("number_operand", list(counts))
    with hooks(lambda x: 3 * x, lambda x: x):
        a = torch.tensor([0.5, 1.0], requires_grad=True)
        y = torch.exp(a)                # exp saves its result
    y.sum().backward()
    rec("exp_result_tripled", a.grad)
    with hooks(lambda x: 2 * x, lambda x: x):
        b = torch.tensor([1., 2.], requires_grad=True)
        y = (b * 1.5).sin()             # a non-leaf saved: the gradient still reaches b
    y.sum().backward()
    rec("non_leaf", b.grad)
    with hooks(lambda x: 2 * x, lambda x: x):
        a = torch.tensor([1., 2.], requires_grad=True)
        s = (a ** 3).sum()
    (g,) = torch.autograd.grad(s, (a,), create_graph=True)
    g.sum().backward()                  # the unpacked tensor is a stand-in for a itself
    rec("double_backward", a.grad)
    with hooks(lambda x: 3 * x, lambda x: x / 3):
        with hooks(lambda x: 5 * x, lambda x: x):   # the innermost wins
            a = torch.tensor([1., 2.], requires_grad=True)
            y = a * a
    y.sum().backward()
    rec("innermost", a.grad)


@program
def saved_tensor_hooks_in_functions_and_in_place(torch, rec):
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y * x

    with torch.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
        a = torch.tensor([1., 2.], requires_grad=True)
        out = Exp.apply(a)
    out.sum().backward()
    rec("function", a.grad)
    with torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
        a = torch.tensor([1., 2.], requires_grad=True)
        y = a * 1.0
        y.sin_()                        # the value before sin_ is what its backward reads
    y.sum().backward()
    rec("in_place", a.grad)
    with torch.autograd.graph.save_on_cpu():
        a = torch.tensor([1., 2.], requires_grad=True)
        y = (a * a).sin()
    y.sum().backward()
    rec("save_on_cpu", a.grad)


@program
def saved_tensor_hooks_errors(torch, rec):
    hooks = torch.autograd.graph.saved_tensors_hooks

    def wrong_unpack():
        with hooks(lambda x: x, lambda x: 1):
            a = torch.tensor([1.], requires_grad=True)
            y = a * a
        y.backward()

    def in_place_pack():
        def inc(x):
            x += 1
            return x

        with hooks(inc, lambda x: x):
            torch.exp(torch.tensor([1.], requires_grad=True))

    def disabled():
        with torch.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with hooks(lambda x: x, lambda x: x):
                pass

    def disabling_while_set():
        with hooks(lambda x: x, lambda x: x):
            with torch.autograd.graph.disable_saved_tensors_hooks("not while hooks are set"):
                pass

    for name, fn in [("wrong_unpack", wrong_unpack), ("in_place_pack", in_place_pack),
                     ("disabled", disabled), ("disabling_while_set", disabling_while_set)]:
        try:
            fn()
            rec(name, "no error")
        except Exception as e:
            rec(name, [type(e).__name__, str(e)])
    a = torch.tensor([2.], requires_grad=True)
    (a * a).backward()                  # every context exited: nothing packs any more
    rec("after", a.grad)
