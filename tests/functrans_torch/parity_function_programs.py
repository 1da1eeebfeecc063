"""Parity programs by topic: torch.autograd.Function and gradcheck.

Registered in parity_observe.PROGRAMS; parity_programs.py gathers them and records the
fixtures."""

from __future__ import annotations

from parity_observe import program


@program
def function_combined_style(torch, rec):
    class Exp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            result, = ctx.saved_tensors
            return grad_output * result

    x = torch.tensor([0., 1.], requires_grad=True)
    y = Exp.apply(x)
    rec("y", y), rec("name", type(y.grad_fn).__name__)
    y.sum().backward()
    rec("grad", x.grad)


@program
def function_setup_context_and_needs_input_grad(torch, rec):
    seen = {}

    class Mul(torch.autograd.Function):
        @staticmethod
        def forward(a, b, scale=2.0):
            return a * b * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            a, b, scale = inputs
            seen["needs"] = ctx.needs_input_grad
            ctx.save_for_backward(a, b)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b * ctx.scale, g * a * ctx.scale, None

    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.])
    y = Mul.apply(a, b)
    y.sum().backward()
    rec("y", y), rec("needs", list(seen["needs"])), rec("a_grad", a.grad), rec("b_grad", b.grad)
    rec("next", [None if n is None else n.name() for n, _ in y.grad_fn.next_functions])


@program
def function_wrong_number_of_grads(torch, rec):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    x = torch.tensor([1., 2.], requires_grad=True)
    Bad.apply(x, 2.).sum().backward()


@program
def function_grad_for_non_tensor(torch, rec):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, c):
            return a * c

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = torch.tensor([1., 2.], requires_grad=True)
    Bad.apply(x, 2.).sum().backward()


@program
def function_wrong_grad_shape(torch, rec):
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g[:2]

    x = torch.tensor([1., 2., 3.], requires_grad=True)
    Bad.apply(x).sum().backward()


@program
def function_broadcast_grad_is_summed(torch, rec):
    class Widen(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g.expand(3, 2) * 2

    x = torch.tensor([1., 2.], requires_grad=True)
    Widen.apply(x).sum().backward()
    rec("grad", x.grad)


@program
def function_saved_tensors_freed(torch, rec):
    class Sv(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.tensor([1., 2.], requires_grad=True)
    r = Sv.apply(x)
    r.sum().backward()
    r.sum().backward()  # backward never reads saved_tensors: fine
    rec("grad", x.grad)
    r.grad_fn.saved_tensors


@program
def function_mark_dirty(torch, rec):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    x = torch.tensor([1., 2.], requires_grad=True)
    z = x * 1
    r = Double.apply(z)
    rec("same", r is z), rec("r", r), rec("version", z._version)
    r.sum().backward()
    rec("grad", x.grad)
    Double.apply(x)


@program
def function_mark_non_differentiable(torch, rec):
    class Sort2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            o1, o2 = a * 2, a * 3
            ctx.mark_non_differentiable(o2)
            return o1, o2

        @staticmethod
        def backward(ctx, g1, g2):
            ctx.g2 = g2
            return g1 * 2

    x = torch.tensor([1., 2.], requires_grad=True)
    o1, o2 = Sort2.apply(x)
    rec("o1", o1), rec("o2", o2)
    o1.sum().backward()
    rec("grad", x.grad), rec("g2", o1.grad_fn.g2)


@program
def function_returns_input(torch, rec):
    class Ident(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 5

    x = torch.tensor([1., 2.], requires_grad=True)
    r = Ident.apply(x)
    rec("same", r is x), rec("r", r)
    r.sum().backward()
    rec("grad", x.grad)


@program
def function_under_no_grad(torch, rec):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.mode = torch.is_grad_enabled()
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.tensor([1.], requires_grad=True)
    y = F.apply(x)
    rec("y", y), rec("mode_in_forward", y.grad_fn.mode)
    with torch.no_grad():
        rec("z", F.apply(x))


@program
def once_differentiable_double_backward(torch, rec):
    from importlib import import_module
    once = import_module(torch.__name__ + ".autograd.function").once_differentiable

    class Sq(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        @once
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 2 * a * g

    x = torch.tensor([1.5, 2.], dtype=torch.float64, requires_grad=True)
    y = Sq.apply(x)
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    rec("g", g)
    g.sum().backward()


@program
def my_cube_double_backward(torch, rec):
    class MyCube(torch.autograd.Function):
        @staticmethod
        def forward(x):
            dx = 3 * x ** 2
            result = x ** 3
            return result, dx

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, = inputs
            result, dx = output
            ctx.save_for_backward(x, dx)

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            return grad_output * dx + grad_dx * 6 * x

    x = torch.tensor([1., -2.], dtype=torch.float64, requires_grad=True)
    y, dx = MyCube.apply(x)
    (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), x)
    rec("y", y), rec("dx", dx), rec("g", g), rec("g2", g2)


@program
def gradcheck_results(torch, rec):
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([[0.5, 1.0, -1.0]], dtype=torch.float64, requires_grad=True)
    rec("ok", torch.autograd.gradcheck(lambda a, b: torch.tanh(b @ a).exp(), (x, w)))
    rec("ok2", torch.autograd.gradgradcheck(lambda a: (a * a.sin()).sum(), (x,)))

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * a

        @staticmethod
        def backward(ctx, g):
            return g

    rec("bad", torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False))
    torch.autograd.gradcheck(lambda a: a.sin(), (torch.tensor([1.], requires_grad=True),),
                             eps=1e-3, atol=1e-2)
    torch.autograd.gradcheck(lambda a: a.sin(), (torch.tensor([1.], dtype=torch.float64),))


@program
def function_vjp_alias(torch, rec):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2
        @staticmethod
        def vjp(ctx, g):
            return g * 2
    x = torch.tensor([1.], requires_grad=True)
    F.apply(x).backward()
    rec("g", x.grad)


@program
def function_backward_and_vjp(torch, rec):
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2
        @staticmethod
        def backward(ctx, g):
            return g * 2
        @staticmethod
        def vjp(ctx, g):
            return g * 2
    x = torch.tensor([1.], requires_grad=True)
    F.apply(x).backward()


@program
def function_mark_dirty_on_a_view(torch, rec):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = torch.tensor([1., 2., 3., 4.], requires_grad=True)
    b = a.clone()
    v = b.narrow(0, 1, 2)
    out = Double.apply(v)
    rec("same_tensor", out is v)
    rec("out", out)
    rec("base", b)
    rec("base_node", b.grad_fn.name())
    (b * torch.tensor([1., 10., 100., 1000.])).sum().backward(retain_graph=True)
    rec("grad_through_base", a.grad)
    a.grad = None
    (out * torch.tensor([3., 5.])).sum().backward()
    rec("grad_through_view", a.grad)
    c = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    d = c * 1
    row = d[1]
    Double.apply(row)
    d.sum().backward()
    rec("row_of_matrix", [d, c.grad])
