"""Parity programs by topic: tutorials, PINN-style programs and losses.

Registered in parity_observe.PROGRAMS; parity_programs.py gathers them and records the
fixtures."""

from __future__ import annotations

from parity_observe import program


@program
def higher_order_pinn_style(torch, rec):
    x = torch.tensor([[0.1], [0.5], [0.9]], dtype=torch.float64, requires_grad=True)
    W1 = torch.tensor([[0.7, -1.3, 0.4]], dtype=torch.float64, requires_grad=True)
    W2 = torch.tensor([[1.1], [0.2], [-0.8]], dtype=torch.float64, requires_grad=True)
    u = torch.tanh(x @ W1) @ W2
    (u_x,) = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)
    (u_xx,) = torch.autograd.grad(u_x, x, torch.ones_like(u_x), create_graph=True)
    loss = (u_xx + u).pow(2).mean()
    loss.backward()
    rec("u_x", u_x), rec("u_xx", u_xx), rec("loss", loss), rec("W1", W1.grad),
    rec("W2", W2.grad), rec("x", x.grad)


@program
def legendre_steps(torch, rec):
    class P3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    x = torch.linspace(-1, 1, 5, dtype=torch.float64)
    y = torch.sin(x)
    a, b, c, d = (torch.full((), v, dtype=torch.float64, requires_grad=True)
                  for v in (0.0, -1.0, 0.0, 0.3))
    for t in range(3):
        loss = (a + b * P3.apply(c + d * x) - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= 0.1 * p.grad
                p.grad = None
        rec(f"loss{t}", loss)
    rec("params", [a, b, c, d])


@program
def pytorch_autograd_tutorial(torch, rec):
    # pytorch.org/tutorials/beginner/basics/autogradqs_tutorial (fixed weights instead of randn)
    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = torch.tensor([[0.1 * i - 0.2 * j for j in range(3)] for i in range(5)],
                     requires_grad=True)
    b = torch.tensor([0.3, -0.1, 0.2], requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    rec("z_fn", type(z.grad_fn).__name__), rec("loss_fn", type(loss.grad_fn).__name__)
    loss.backward()
    rec("w_grad", w.grad), rec("b_grad", b.grad)
    z = torch.matmul(x, w) + b
    rec("z_requires_grad", z.requires_grad)
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    rec("z_no_grad", z.requires_grad)
    rec("z_det", z.detach().requires_grad)
    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    rec("first", repr(inp.grad))
    out.backward(torch.ones_like(out), retain_graph=True)
    rec("second", repr(inp.grad))
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    rec("after_zero", repr(inp.grad))


@program
def nn_functional_losses(torch, rec):
    F = torch.nn.functional
    x = torch.tensor([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]], requires_grad=True)
    t = torch.tensor([[1., 0., 1.], [0., 1., 0.]])
    w = torch.tensor([[1., 0.5, -1.], [0., 2., 1.]], requires_grad=True)
    fs = {"mse": lambda: F.mse_loss(x, t), "mse_sum": lambda: F.mse_loss(x, t, reduction="sum"),
          "l1": lambda: F.l1_loss(x, t), "bce": lambda: F.binary_cross_entropy(x.sigmoid(), t),
          "bce_logits": lambda: F.binary_cross_entropy_with_logits(x, t),
          "ce": lambda: F.cross_entropy(x, torch.tensor([2, 0])),
          "linear": lambda: F.linear(x, w, torch.tensor([1., 2.])).sum(),
          "linear_nobias": lambda: F.linear(x, w).sum(), "softplus": lambda: F.softplus(x).sum(),
          "gelu": lambda: F.gelu(x).sum(), "silu": lambda: F.silu(x).sum(),
          "relu": lambda: F.relu(x).sum(), "elu": lambda: F.elu(x).sum(),
          "leaky_relu": lambda: F.leaky_relu(x, 0.2).sum()}
    for name, f in fs.items():
        x.grad = w.grad = None
        v = f()
        rec(name, v)
        rec(name + "_fn", [v.grad_fn.name()] + [None if n is None else n.name()
                                                for n, _ in v.grad_fn.next_functions])
        v.backward()
        rec(name + "_grad", [x.grad, w.grad])


@program
def d2l_autograd_chapter(torch, rec):
    # d2l.ai, "Automatic Differentiation" (a fixed `a` instead of torch.randn(size=()))
    x = torch.arange(4.0)
    x.requires_grad_(True)
    rec("grad0", x.grad)
    y = 2 * torch.dot(x, x)
    rec("y", y)
    y.backward()
    rec("g1", x.grad == 4 * x)
    x.grad.zero_()
    y = x.sum()
    y.backward()
    rec("g2", x.grad)
    x.grad.zero_()
    y = x * x
    y.backward(gradient=torch.ones(len(y)))
    rec("g3", x.grad)
    x.grad.zero_()
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    rec("g4", x.grad == u)
    x.grad.zero_()
    y.sum().backward()
    rec("g5", x.grad == 2 * x)

    def f(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        if b.sum() > 0:
            c = b
        else:
            c = 100 * b
        return c

    a = torch.tensor(-0.7, requires_grad=True)
    d = f(a)
    d.backward()
    rec("d", d), rec("ratio", a.grad == d / a)
    rec("shapes", [list(torch.randn(size=(2, 3)).shape), list(torch.zeros(size=(4,)).shape)])


@program
def cross_entropy_weights_smoothing_probabilities(torch, rec):
    F = torch.nn.functional
    x = torch.tensor([[1., 2., 0.5], [0.1, 0.2, 3.], [0.3, -1., 0.]], requires_grad=True)
    t = torch.tensor([1, 2, 0])
    w = torch.tensor([1., 2., 3.])
    p = torch.tensor([[0.2, 0.3, 0.5], [1., 0., 0.], [0., 0.5, 0.5]])
    out = {}
    for red in ["mean", "sum", "none"]:
        out[red] = [F.cross_entropy(x, t, weight=w, reduction=red),
                    F.cross_entropy(x, torch.tensor([1, -100, 0]), weight=w, reduction=red),
                    F.cross_entropy(x, p, reduction=red),
                    F.cross_entropy(x, p, weight=w, reduction=red),
                    F.cross_entropy(x, t, label_smoothing=0.1, reduction=red),
                    F.cross_entropy(x, torch.tensor([1, 2, 7]), ignore_index=7,
                                    label_smoothing=0.2, weight=w, reduction=red),
                    F.cross_entropy(x, p, label_smoothing=0.1, reduction=red),
                    F.nll_loss(F.log_softmax(x, 1), t, weight=w, reduction=red)]
        rec(red, out[red])
    total = sum(l.sum() for l in out["mean"] + out["none"])
    total.backward()
    rec("g", x.grad)
    y = torch.ones(2, 3, 4, requires_grad=True) * torch.arange(4.)
    rec("sm3", F.softmax(y)), rec("lsm3", F.log_softmax(y))
    rec("sm1", F.softmax(torch.tensor([1., 2.]))), rec("sm2", F.softmax(torch.ones(2, 2)))
    torch.softmax(y)


@program
def loss_target_size_warning(torch, rec):
    F = torch.nn.functional
    x = torch.tensor([[1., 2., 0.5], [0.1, 0.2, 3.]], requires_grad=True)
    rec("mse", F.mse_loss(x, torch.zeros(3)))
    rec("l1", F.l1_loss(x, torch.zeros(2, 1)))

    rec("mse_fn", F.mse_loss(x, torch.zeros(2, 3)).grad_fn), rec("l1_fn", F.l1_loss(x, x * 0).grad_fn)


@program
def bce_size_mismatch(torch, rec):
    F = torch.nn.functional
    F.binary_cross_entropy(torch.full((2, 3), 0.5), torch.ones(3))


@program
def bce_logits_size_mismatch(torch, rec):
    F = torch.nn.functional
    F.binary_cross_entropy_with_logits(torch.ones(2, 3), torch.ones(3))


@program
def activations_for_pinns_nan_zero_and_integers(torch, rec):
    F = torch.nn.functional
    acts = [("mish", F.mish), ("selu", F.selu), ("celu", F.celu),
            ("celu2", lambda x: F.celu(x, alpha=2.)), ("logsigmoid", F.logsigmoid),
            ("softsign", F.softsign), ("tanhshrink", F.tanhshrink), ("hardtanh", F.hardtanh),
            ("hardtanh2", lambda x: F.hardtanh(x, -2., 3.)), ("relu6", F.relu6),
            ("hardswish", F.hardswish), ("hardsigmoid", F.hardsigmoid),
            ("torch.selu", torch.selu), ("torch.celu", torch.celu), ("elu", F.elu),
            ("elu2", lambda x: F.elu(x, 0.5)), ("softplus", F.softplus),
            ("softplus2", lambda x: F.softplus(x, beta=2., threshold=5.)), ("silu", F.silu),
            ("gelu", F.gelu), ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh")),
            ("leaky_relu", F.leaky_relu)]
    smooth = {"mish", "selu", "celu", "logsigmoid", "softsign", "tanhshrink", "elu", "elu2",
              "softplus", "softplus2", "silu", "gelu", "gelu_tanh"}
    # float32 rounds differently through erf (gelu) and expm1's derivative (the elu family:
    # functrans takes exp(x) as expm1(x) + 1), so those and the second derivatives are
    # compared in float64
    expm1_or_erf = {"selu", "celu", "celu2", "torch.selu", "torch.celu", "elu", "elu2", "gelu",
                    "gelu_tanh"}
    for dt in (torch.float32, torch.float64):
        x = torch.tensor([-800., -30., -7., -3., -1., -0.5, 0., 0.5, 1., 3., 6., 7., 30., 800.,
                          float("nan")], dtype=dt, requires_grad=True)
        for n, fn in acts:
            if dt == torch.float32 and n in expm1_or_erf:
                continue
            y = fn(x)
            g, = torch.autograd.grad(y.sum(), x, create_graph=True)
            rec(f"{n} {dt}", y), rec(f"{n}' {dt}", g.detach())
            if n in smooth and dt == torch.float64:
                # second derivatives, without +-800 (where PyTorch's mish overflows to NaN)
                xs = x.detach()[1:-2].requires_grad_()
                g, = torch.autograd.grad(fn(xs).sum(), xs, create_graph=True)
                rec(f"{n}'' {dt}", torch.autograd.grad(g.sum(), xs)[0])
    for n in ["mish", "selu", "celu", "logsigmoid", "softsign", "tanhshrink", "hardtanh", "relu6",
              "hardswish", "hardsigmoid", "silu", "gelu", "elu", "softplus", "leaky_relu"]:
        try:
            rec(f"{n} of int64", getattr(F, n)(torch.tensor([1, 2])))
        except Exception as e:
            rec(f"{n} of int64", [type(e).__name__, str(e)])
    try:
        rec("silu of bool", F.silu(torch.tensor([True])))
    except Exception as e:
        rec("silu of bool", [type(e).__name__, str(e)])
    F.hardtanh(x, 2., 1.)


def _pinn_mlp(torch, dtype, act, sizes=(2, 6, 6, 1)):
    """Weights as leaf tensors (fixed values) and the network x -> u."""
    ws = []
    for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        W = torch.sin(torch.arange(a * b, dtype=dtype) * 0.7 + k).reshape(a, b) * 0.8
        c = torch.cos(torch.arange(b, dtype=dtype) + k) * 0.1
        ws.append((W.requires_grad_(), c.requires_grad_()))

    def net(x):
        h = x
        for i, (W, c) in enumerate(ws):
            h = h @ W + c
            if i < len(ws) - 1:
                h = act(h)
        return h
    return ws, net


@program
def pinn_derivatives_and_manual_training(torch, rec):
    F = torch.nn.functional
    rec("constants", [torch.pi, torch.e, torch.inf, torch.newaxis])
    for dt, act in [(torch.float64, torch.tanh), (torch.float64, torch.sin),
                    (torch.float64, F.softplus), (torch.float64, F.silu),
                    (torch.float64, F.gelu), (torch.float64, F.mish), (None, torch.tanh)]:
        tag = f"{act.__name__} {dt}"
        ws, net = _pinn_mlp(torch, dt or torch.get_default_dtype(), act)
        t = torch.linspace(0, 1, 4, dtype=dt)
        x = torch.linspace(-1, 1, 3, dtype=dt)
        T, X = torch.meshgrid(t, x, indexing="ij")
        tx = torch.stack([T.reshape(-1), X.reshape(-1)], dim=1).requires_grad_()
        u = net(tx)
        du, = torch.autograd.grad(u, tx, grad_outputs=torch.ones_like(u), create_graph=True)
        u_t, u_x = du[:, 0:1], du[:, 1]
        u_xx = torch.autograd.grad(u_x, tx, torch.ones_like(u_x), create_graph=True)[0][:, 1]
        u_xxx = torch.autograd.grad(u_xx.sum(), tx, create_graph=True)[0][:, 1]
        u_tx = torch.autograd.grad(u_t, tx, torch.ones_like(u_t), create_graph=True)[0][:, 1:2]
        lap = 0
        for i in range(2):
            lap = lap + torch.autograd.grad(du[:, i], tx, torch.ones_like(du[:, i]),
                                            create_graph=True)[0][:, i]
        f = u_t.squeeze(1) + u.squeeze(1) * u_x - 0.01 / torch.pi * u_xx
        loss = f.pow(2).mean() + lap.pow(2).mean() + (u_xxx * u_tx.squeeze()).mean()
        loss = loss + torch.trapezoid(u.reshape(4, 3) ** 2, x, dim=1).sum()
        loss.backward()
        if dt is None:  # float32: PyTorch sums in another order; compare 4 digits and flags
            r4 = lambda t: [round(v, 4) for v in t.detach().reshape(-1).tolist()]  # noqa: E731
            rec(tag, [r4(u), r4(du), r4(u_xx), r4(lap), r4(ws[0][0].grad), str(loss.dtype),
                      str(ws[0][0].grad.dtype), du.requires_grad, u_xx.requires_grad])
            continue
        rec(f"{tag} u", u), rec(f"{tag} du", du), rec(f"{tag} u_t", u_t), rec(f"{tag} u_x", u_x)
        rec(f"{tag} u_xx", u_xx), rec(f"{tag} u_xxx", u_xxx), rec(f"{tag} u_tx", u_tx)
        rec(f"{tag} lap", lap), rec(f"{tag} loss", loss), rec(f"{tag} tx.grad", tx.grad)
        for i, (W, c) in enumerate(ws):
            rec(f"{tag} W{i}.grad", W.grad), rec(f"{tag} c{i}.grad", c.grad)

    ws, net = _pinn_mlp(torch, torch.float64, torch.tanh)
    x = torch.linspace(0, 1, 5, dtype=torch.float64).reshape(-1, 1)
    x = torch.cat([x, x * 2], 1).requires_grad_(True)
    for step in range(4):
        u = net(x)
        ux, = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)
        loss = ((ux[:, 0:1] - torch.cos(x[:, 0:1])) ** 2).mean() + torch.diff(u, dim=0).abs().sum()
        loss.backward()
        rec(f"step {step} loss", loss)
        with torch.no_grad():
            for W, c in ws:
                W -= 0.05 * W.grad
                c.sub_(0.05 * c.grad)
                if step % 2:
                    W.grad.zero_(), c.grad.zero_()
                else:
                    W.grad, c.grad = None, None
        rec(f"step {step} W0", ws[0][0])
        rec(f"step {step} flags", [ws[0][0].is_leaf, ws[0][0].requires_grad, ws[0][0].grad_fn,
                                   ws[0][0].grad])
    rec("x.grad", x.grad)
    y = torch.tensor([[1., 2., 4.], [0., 1., 3.]], requires_grad=True)
    s = torch.tensor([0., 0.5, 2.], requires_grad=True)
    for k, r in enumerate([torch.trapezoid(y), torch.trapezoid(y, dx=0.5), torch.trapezoid(y, s),
                           torch.trapezoid(y, dim=0), torch.trapz(y, s), torch.trapz(y, dx=2.),
                           torch.diff(y), torch.diff(y, n=2),
                           torch.diff(y, dim=0), torch.diff(y, prepend=y[:, :1], append=2 * y[:, -1:]),
                           torch.trapezoid(y[:, :1]), torch.trapezoid(y[:, :0])]):
        rec(f"r{k}", r)
        rec(f"r{k} next", None if r.grad_fn is None else r.grad_fn.next_functions)
    (torch.trapezoid(y, s).sum() + torch.diff(y, n=2).pow(2).sum()).backward()
    rec("y.grad", y.grad), rec("s.grad", s.grad)
    for k, bad in enumerate((lambda: torch.trapezoid(y, torch.tensor([0., 1.])),
                             lambda: torch.trapezoid(y, s, dx=1.),
                             lambda: torch.trapezoid(y, 0.25),
                             lambda: torch.diff(torch.tensor(1.)))):
        try:
            bad()
        except (RuntimeError, TypeError) as e:
            rec(f"error{k}", [type(e).__name__, str(e)])
    ws[0][0].add_(1.0)
