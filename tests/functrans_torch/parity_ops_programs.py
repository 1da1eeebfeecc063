"""Parity programs by topic: values and derivatives of ops (ties, non-smooth points, conventions
at zero).

Registered in parity_observe.PROGRAMS; parity_programs.py gathers them and records the
fixtures."""

from __future__ import annotations

import math

from parity_observe import _message, program


@program
def dtype_promotion(torch, rec):
    f = torch.tensor([1., 2.])
    i = torch.tensor([1, 2])
    d0 = torch.tensor(2., dtype=torch.float64)
    i32 = torch.tensor([1], dtype=torch.int32)
    out = {"int_div": i / 2, "int_mul_float": i * 2.5, "f_mul_d0": f * d0,
           "i_add_f0": i + torch.tensor(2.), "i0_add_d": torch.tensor(1) +
           torch.tensor([1.], dtype=torch.float64), "f_add_bool": f + True,
           "b_add_b": torch.tensor([True]) + True, "i32_add_big": i32 + 2 ** 40,
           "sum_int": i.sum(), "mean_float": f.mean(), "sin_int": torch.sin(i),
           "arange_int": torch.arange(3), "arange_float": torch.arange(0, 1, 0.25),
           "full_int": torch.full((2,), 1), "full_float": torch.full((2,), 1.5),
           "zeros": torch.zeros(2), "ones_like_int": torch.ones_like(i), "eye": torch.eye(2),
           "linspace": torch.linspace(-1, 1, 3), "int_floordiv": i // 2,
           "rem": torch.tensor([-3., 5.]) % 2, "pow_int": i ** 2}
    for k, v in out.items():
        rec(k, v)


@program
def reductions_and_ties(torch, rec):
    x = torch.tensor([[1., 3., 3.], [2., 0., 2.]], requires_grad=True)
    for name, f in [("max", lambda t: t.max()), ("max0", lambda t: t.max(0).values.sum()),
                    ("min1", lambda t: t.min(1)[0].sum()), ("amax", lambda t: t.amax(1).sum()),
                    ("mean1", lambda t: t.mean(1, keepdim=True).sum()),
                    ("sum_dims", lambda t: t.sum((0, 1))), ("prod", lambda t: t.prod()),
                    ("std", lambda t: t.std()), ("var0", lambda t: t.var(0).sum()),
                    ("norm", lambda t: t.norm()), ("logsumexp", lambda t: t.logsumexp(1).sum())]:
        x.grad = None
        out = f(x)
        out.backward()
        rec(name, out), rec(name + "_grad", x.grad)
    rec("argmax", x.argmax()), rec("max_idx", x.max(1).indices)


@program
def nonsmooth_points(torch, rec):
    x = torch.tensor([-1., 0., 2.], requires_grad=True)
    for name, f in [("relu", lambda t: t.relu()), ("abs", lambda t: t.abs()),
                    ("clamp", lambda t: t.clamp(0, 2)), ("clamp_min", lambda t: t.clamp(min=0)),
                    ("maximum", lambda t: torch.maximum(t, torch.zeros(3))),
                    ("where", lambda t: torch.where(t > 0, t * t, -t)),
                    ("sqrt_pos", lambda t: (t * t).sqrt())]:
        x.grad = None
        f(x).sum().backward()
        rec(name, x.grad)


@program
def elementwise_grads(torch, rec):
    x = torch.tensor([0.5, 1.5, 2.5], dtype=torch.float64, requires_grad=True)
    fs = {"sin": torch.sin, "cos": torch.cos, "tan": torch.tan, "exp": torch.exp,
          "log": torch.log, "sqrt": torch.sqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
          "asin": lambda t: torch.asin(t / 3), "atan": torch.atan, "sinh": torch.sinh,
          "log1p": torch.log1p, "expm1": torch.expm1, "rsqrt": torch.rsqrt, "erf": torch.erf,
          "reciprocal": torch.reciprocal, "pow3": lambda t: t ** 3, "powf": lambda t: t ** 2.5,
          "rpow": lambda t: 2 ** t, "powt": lambda t: t ** t, "div": lambda t: 1 / t,
          "square": torch.square, "softmax": lambda t: torch.softmax(t, 0)[1],
          "log_softmax": lambda t: torch.log_softmax(t, 0)[0], "floor": torch.floor,
          "atan2": lambda t: torch.atan2(t, t + 1), "remainder": lambda t: t % 1.0}
    for name, f in fs.items():
        x.grad = None
        f(x).sum().backward()
        rec(name, x.grad)


@program
def broadcasting_grads(torch, rec):
    a = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    b = torch.tensor([10., 20., 30.], requires_grad=True)
    c = torch.tensor(2., requires_grad=True)
    d = torch.tensor([[1.], [2.]], requires_grad=True)
    y = (a * b + c) / d - b
    y.sum().backward()
    rec("y", y), rec("a", a.grad), rec("b", b.grad), rec("c", c.grad), rec("d", d.grad)


@program
def matmul_family(torch, rec):
    A = torch.tensor([[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)
    B = torch.tensor([[1., -1., 0.5], [2., 0., 1.]], requires_grad=True)
    v = torch.tensor([1., 2.], requires_grad=True)
    out = (A @ B).sum() + (A @ v).sum() + (v @ v) + torch.mm(A, B).trace()
    out.backward()
    rec("out", out), rec("A", A.grad), rec("B", B.grad), rec("v", v.grad)
    C = torch.ones(2, 3, 2, requires_grad=True)
    D = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    (C @ D).sum().backward()
    rec("C", C.grad), rec("D", D.grad)
    rec("mat_err", None)
    torch.mm(A, A)


@program
def shape_ops_grads(torch, rec):
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    w = torch.arange(6.).reshape(3, 2)
    ys = [x.t() @ torch.ones(2, 1), x.reshape(3, 2) * w, x.view(6)[::2],
          x.unsqueeze(0).expand(4, 2, 3), x.permute(1, 0)[1:], x.flatten()[[0, 0, 5]],
          torch.cat([x, x * 2], 1), torch.stack([x, -x]), x.flip(1)[:, :2], x[1, 1:],
          x[..., None], x.transpose(0, 1).contiguous().view(-1), x.split([1, 2], 1)[1],
          x.chunk(3, 1)[2], torch.gather(x, 1, torch.tensor([[2, 0], [1, 1]])),
          x.index_select(1, torch.tensor([0, 0])), x.repeat(2, 2), x[x > 3],
          x.masked_fill(x < 3, -1.), x.roll(1, 1), x.tril(), x.narrow(1, 1, 2)]
    for i, y in enumerate(ys):
        x.grad = None
        (y * torch.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        rec(f"y{i}", y), rec(f"g{i}", x.grad)


@program
def clamp_bounds_crossed_and_nan(torch, rec):
    nan = float("nan")
    x = torch.tensor([nan, 1., 5., 2., 0., 3.], requires_grad=True)
    y = x.clamp(3., 2.)
    rec("crossed", y), rec("nan_kept", x.clamp(-1., 1.)), rec("min_only", x.clamp(min=1.))
    rec("max_only", x.clamp(max=1.))
    (y.sum() + x.clamp(-1., 1.).sum() + x.clamp(min=1.).sum()).backward()
    rec("g", x.grad)
    lo = torch.tensor([0., 3., 0., 2., 1., 3.], requires_grad=True)
    hi = torch.tensor([1., 2., 4., 2., 1., 3.], requires_grad=True)
    x.grad = None
    t = torch.clamp(x, lo, hi)
    rec("t", t)
    t.sum().backward()
    rec("gx", x.grad), rec("glo", lo.grad), rec("ghi", hi.grad)
    x.grad = lo.grad = hi.grad = None
    (torch.clamp(x, min=lo) * 2 + torch.clamp(x, max=hi)).sum().backward()
    rec("gx1", x.grad), rec("glo1", lo.grad), rec("ghi1", hi.grad)
    z = torch.tensor([1., 4.], requires_grad=True)
    w = z.clamp(torch.tensor([[0.], [2.]]), torch.tensor(3.))
    rec("w", w)
    (g,) = torch.autograd.grad(w.sum(), z, create_graph=True)
    rec("gz", g)
    i = torch.tensor([1, 5, -3])
    rec("int", i.clamp(0, 3)), rec("int_t", i.clamp(torch.tensor(0), torch.tensor(3)))
    c = torch.tensor([-2., 0.5, 9.])
    c.clamp_(torch.tensor([0., 0., 0.]), torch.tensor([1., 1., 1.]))
    rec("inplace", c)


@program
def zero_norm_std_and_logits_at_zero(torch, rec):
    grads = []
    for p in [2, 1, float("inf"), 3, 0.5, "fro"]:
        x = torch.tensor([[0., 0.], [0., -2.], [1., -1.]], requires_grad=True)
        x.norm(p=p, dim=1).sum().backward()
        grads.append(x.grad)
    rec("norm_grads", grads)
    z = torch.zeros(3, requires_grad=True)
    n = z.norm()
    (g,) = torch.autograd.grad(n, z, create_graph=True)
    rec("n", n), rec("g", g.tolist()), rec("g_requires_grad", g.requires_grad)
    c = torch.tensor([1., 1., 1.], requires_grad=True)
    s = c.std()
    s.backward()
    rec("std", s), rec("std_g", c.grad)
    c.grad = None
    c.std(dim=0, keepdim=True, correction=0).backward()
    rec("std_g0", c.grad)
    b = torch.tensor([1000., -1000., 0., 0.5], requires_grad=True)
    t = torch.tensor([0., 1., 1., 0.])
    loss = torch.nn.functional.binary_cross_entropy_with_logits(b, t)
    loss.backward()
    rec("bce", loss), rec("bce_g", b.grad)
    b.grad = None
    loss = torch.nn.functional.binary_cross_entropy_with_logits(
        b, t, pos_weight=torch.tensor([2., 2., 3., 3.]), reduction="sum")
    loss.backward()
    rec("bce_pw", loss), rec("bce_pw_g", b.grad)


@program
def mean_of_long_names_its_dtype(torch, rec):
    rec("a", torch.tensor([1, 2]) * 1.5)
    rec("b", torch.tensor([1, 2]) / 2)
    rec("d", torch.tensor([1., 2.]) * torch.tensor([1., 2.], dtype=torch.float64))
    rec("e", torch.tensor([1., 2.]) * torch.tensor(2., dtype=torch.float64))
    rec("f", torch.tensor([1, 2]) * torch.tensor(2.5, dtype=torch.float64))
    rec("g", torch.tensor([1, 2]).sum()), rec("h", torch.tensor([True, False]).sum())
    torch.tensor([1, 2]).mean()


@program
def x_T_on_1d(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    rec("T", x.T)
    x.T.sum().backward()
    rec("g", x.grad)
    rec("T3", torch.ones(2, 3, 4).T.shape)


@program
def std_of_one_element_warns(torch, rec):
    x = torch.tensor([1.], requires_grad=True)
    s = x.std()
    rec("s", s)
    rec("v", x.var())


@program
def squeeze_and_matmul_names(torch, rec):
    v = torch.ones(4, requires_grad=True)
    b = torch.ones(4, 2)
    e = v @ b
    rec("e", e), rec("nf", [type(n[0]).__name__ for n in e.grad_fn.next_functions])
    x = torch.ones(1, 3, 1, requires_grad=True)
    rec("sq2", x.squeeze((0, 2)))
    y = torch.ones(3, 4, requires_grad=True)
    rec("a", y.t().reshape(12)), rec("b", y[:, ::2].reshape(6)), rec("c", y.t().reshape(4, 3))
    rec("ms", y.masked_select(y > 0))
    w = torch.arange(12.).view(3, 4).requires_grad_()
    r = w.t().reshape(12) * 1
    a = w.t().reshape(12)
    b = w[:, ::2].reshape(6)
    with torch.no_grad():
        src = w.detach().t().reshape(12)
        src[0] = 100.
    rec("w_untouched", w), rec("copy_base", src._base is None)
    (a * torch.arange(12.)).sum().backward()
    rec("g_copy", w.grad)
    w.grad = None
    (b * torch.arange(6.)).sum().backward()
    rec("g_alias", w.grad)
    w.grad = None
    (e * torch.tensor([1., 2.])).sum().backward()
    rec("g_vec", v.grad)
    x.squeeze((0, 2)).sum().backward()
    rec("g_sq", x.grad)


@program
def sort_topk(torch, rec):
    x = torch.tensor([[3., 1., 2.], [0., 5., 4.]], requires_grad=True)
    v, i = x.sort()
    rec("v", v), rec("i", i)
    s = torch.sort(x, dim=0, descending=True)
    rec("s", s.values), rec("si", s.indices)
    t = x.topk(2)
    rec("t", t.values), rec("ti", t.indices)
    a = x.argsort(dim=1, descending=True)
    rec("a", a)
    (v * torch.tensor([1., 2., 3.])).sum().backward()
    rec("g", x.grad)
    x.grad = None
    (t.values * torch.tensor([1., 10.])).sum().backward()
    rec("g2", x.grad)


@program
def sort_topk_more(torch, rec):
    nan = float("nan")
    x = torch.tensor([[2., nan, 1., 2.], [0., 0., -1., 3.]], requires_grad=True)
    a, b = x.sort(descending=True), x.sort(dim=1)
    rec("a", a.values), rec("ai", a.indices), rec("b", b.values), rec("bi", b.indices)
    rec("types", [type(a).__name__, type(x.topk(1)).__name__, type(x.max(0)).__name__,
                  type(x.min(1)).__name__])
    s = torch.tensor(3., requires_grad=True)
    rec("s", s.sort()), rec("st", s.topk(1)), rec("sa", s.argsort())
    rec("small", x.topk(2, dim=0, largest=False))
    (x.topk(1, dim=1).values.sum() + s.sort().values).backward()
    rec("g", x.grad), rec("gs", s.grad)
    rec("repr", repr(torch.tensor([3., 1.]).sort()))
    torch.tensor([1., 2.]).topk(3)


@program
def clamp_min_max_nan_to_num_addcmul(torch, rec):
    x = torch.tensor([[1., -2., 3.], [4., 5., -6.]], requires_grad=True)
    t = torch.tensor([[.5, .5, .5], [1., 1., 8.]], requires_grad=True)
    outs = [torch.clamp_min(x, 0.), x.clamp_min(t), x.clamp_max(1.), torch.clamp_max(x, t),
            torch.addcmul(x, t, x, value=2), torch.addcdiv(x, t, x, value=-0.5),
            torch.addcmul(x, t, t)]
    y = torch.tensor([1., float("nan"), float("inf"), -float("inf")], requires_grad=True)
    outs += [torch.nan_to_num(y), y.nan_to_num(nan=1., posinf=2.),
             torch.nan_to_num(torch.tensor([1, 2]))]
    z = x * 1
    z.clamp_min_(0.5).clamp_max_(4.)
    w = t * 1
    w.addcmul_(x, x, value=0.5).addcdiv_(x, t)
    u = y * 1
    u.nan_to_num_(neginf=-7.)
    outs += [z, w, u]
    rec("outs", outs)
    rec("nf", [type(n[0]).__name__ if n[0] is not None else None
               for n in x.clamp_min(t).grad_fn.next_functions])
    tot = sum((o * (torch.arange(o.numel()).reshape(o.shape) + 1)).sum() for o in outs
              if o.requires_grad)
    tot.backward()
    rec("gx", x.grad), rec("gt", t.grad), rec("gy", y.grad)
    torch.addcdiv(torch.tensor([1, 2]), torch.tensor([1, 2]), torch.tensor([1, 2]))


@program
def addmm_cdist(torch, rec):
    x = torch.tensor([[1., -2., 3.], [4., 5., -6.]], requires_grad=True)
    t = torch.tensor([[.5, .5, .5], [1., 1., 8.]], requires_grad=True)
    m = torch.tensor([[1., 2.], [3., 4.], [5., 6.]], requires_grad=True)
    b = torch.tensor([1., 2.], requires_grad=True)
    outs = [torch.addmm(b, x, m), torch.addmm(b, x, m, beta=0.5, alpha=2),
            torch.addmm(b * float("nan"), x, m, beta=0), torch.ones(2, 2).addmm(t, m, alpha=.5)]
    outs += [torch.cdist(x, t), torch.cdist(x, x), torch.cdist(x, t, p=1),
             torch.cdist(x, t, p=3), torch.cdist(x, t, p=0), torch.cdist(x, t, p=float("inf")),
             torch.cdist(x.unsqueeze(0), t.unsqueeze(0) * 2)]
    rec("outs", outs)
    tot = sum((o * (torch.arange(o.numel()).reshape(o.shape) + 1)).sum() for o in outs)
    tot.backward()
    rec("gx", x.grad), rec("gt", t.grad), rec("gm", m.grad), rec("gb", b.grad)
    g = torch.tensor([[0., 0.], [0., 0.]], requires_grad=True)
    torch.cdist(g, g).sum().backward()
    rec("g_zero_distance", g.grad)
    torch.addmm(torch.ones(3), x, m)


@program
def scatter_gather_index_add(torch, rec):
    # src shaped like the index: PyTorch's backward refuses a larger src (a gradient shaped
    # like the index)
    x = torch.tensor([[1., -2., 3.], [4., 5., -6.]], requires_grad=True)
    src = torch.tensor([[10., 20., 30.], [40., 50., 60.], [70., 80., 90.]], requires_grad=True)
    i = torch.tensor([[1, 0, 1], [0, 1, 0]])
    j = torch.tensor([[2, 0], [1, 2]])
    s2, s22 = src[:2] * 1, src[:2, :2] * 1
    rec("larger_src", [torch.scatter(x, 0, i, src), x.scatter(1, j, src),
                       x.scatter_add(1, j, src)])
    outs = [torch.scatter(x, 0, i, s2), x.scatter(1, j, s22), x.scatter(0, i, 2.5),
            torch.scatter_add(x, 0, i, s2), x.scatter_add(1, j, s22),
            torch.gather(x, 1, j), x.gather(0, i),
            torch.index_add(x, 0, torch.tensor([1, 0]), src[:2]),
            x.index_add(1, torch.tensor([0, 0, 2]), src[:2], alpha=2),
            torch.index_fill(x, 1, torch.tensor([0, 2]), -1.),
            x.index_fill(0, torch.tensor([1]), torch.tensor(7., requires_grad=True))]
    y = x * 1
    y.scatter_(1, j, s22).scatter_add_(0, i, s2).index_add_(0, torch.tensor([0]), src[1:2])
    y.index_fill_(1, torch.tensor([1]), 0.)
    outs.append(y)
    rec("outs", outs)
    rec("nf", [[type(n[0]).__name__ if n[0] is not None else None for n in o.grad_fn.next_functions]
               for o in outs])
    tot = sum((o * (torch.arange(o.numel()).reshape(o.shape) + 1)).sum() for o in outs)
    tot.backward()
    rec("gx", x.grad), rec("gsrc", src.grad)
    rec("ints", torch.zeros(3, dtype=torch.long).scatter_add(0, torch.tensor([0, 0, 2]),
                                                             torch.tensor([1, 2, 3])))
    for k, bad in enumerate([lambda: x.scatter(0, torch.tensor([[2, 0, 0]]), src),
                             lambda: x.scatter(0, i, src.double()),
                             lambda: x.scatter(0, i.int(), src),
                             lambda: x.index_add(0, torch.tensor([0]), src[:1].double()),
                             lambda: x.index_add(0, torch.tensor([0]), src[:2])]):
        try:
            bad()
        except (RuntimeError, IndexError) as e:
            rec(f"err{k}", [type(e).__name__, str(e)])
    torch.scatter(x, 0, torch.tensor([[0, 1, 2, 0]]), src)


@program
def index_put_and_masked_fill(torch, rec):
    x = torch.tensor([[1., -2., 3.], [4., 5., -6.]], requires_grad=True)
    v = torch.tensor([10., 20.], requires_grad=True)
    rows, cols = torch.tensor([0, 1]), torch.tensor([2, 0])
    outs = [torch.index_put(x, (rows, cols), v), x.index_put((rows, cols), v, accumulate=True),
            x.index_put((torch.tensor([0, 0]), torch.tensor([1, 1])), v, accumulate=True),
            x.index_put((torch.tensor([1]),), torch.tensor(3.)),
            x.index_put((x > 0,), v.sum()),
            x.masked_fill(x > 0, torch.tensor(1.)), x.masked_fill(x < 0, v[0]),
            torch.masked_fill(x, torch.tensor([True, False, True]), 0.),
            torch.where(x > 0, x, 0.), torch.where(x > 0, 1., x), x.where(x < 0, v[1])]
    y = x * 1
    y.index_put_((rows, cols), v * 2).index_put_((rows,), v[:1], accumulate=True)
    y.masked_fill_(y > 5, v[0])
    outs.append(y)
    rec("outs", outs)
    rec("nf", [[type(n[0]).__name__ if n[0] is not None else None for n in o.grad_fn.next_functions]
               for o in outs])
    tot = sum((o * (torch.arange(o.numel()).reshape(o.shape) + 1)).sum() for o in outs)
    tot.backward()
    rec("gx", x.grad), rec("gv", v.grad)
    c = torch.tensor([[0., 1.], [2., 0.]])
    rec("where1", torch.where(c)), rec("where_scalars", torch.where(c > 0, 1., 0.))
    rec("where_ints", torch.where(c > 0, 1, 0)), rec("where_mixed", torch.where(c > 0, c, 2))
    rec("where_double", torch.where(c > 0, c, torch.tensor(0., dtype=torch.float64)))
    x.index_put((rows,), v.double())


@program
def repeat_interleave_tile_diag_meshgrid(torch, rec):
    x = torch.tensor([[1., -2., 3.], [4., 5., -6.]], requires_grad=True)
    v = torch.tensor([1., 2.], requires_grad=True)
    outs = [x.repeat_interleave(2), x.repeat_interleave(2, dim=1),
            torch.repeat_interleave(x, torch.tensor([1, 2]), dim=0),
            x.repeat_interleave(torch.tensor(2)), v.repeat_interleave(3),
            x.tile(2), torch.tile(x, (2, 1)), v.tile((2, 2)),
            torch.diag(v), torch.diag(v, 1), torch.diag(v, -2), torch.diag(x), x.diag(1),
            torch.diag(x, -1)]
    g1 = torch.meshgrid(v, v * 2, indexing="ij")
    g2 = torch.meshgrid(v, torch.tensor([1., 2., 3.]), indexing="xy")
    g3 = torch.meshgrid([v, v[0]], indexing="ij")
    outs += list(g1) + list(g2) + list(g3)
    rec("outs", outs)
    rec("views", [g._base is not None for g in g1 + g2])
    rec("chains", [[type(n[0]).__name__ for n in o.grad_fn.next_functions] for o in outs[:3]])
    tot = sum((o * (torch.arange(o.numel()).reshape(o.shape) + 1)).sum() for o in outs)
    tot.backward()
    rec("gx", x.grad), rec("gv", v.grad)
    rec("counts", torch.repeat_interleave(torch.tensor([1, 0, 2])))
    rec("implicit", torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3])))
    torch.diag(torch.ones(2, 2, 2))


@program
def median_values_indices_gradients(torch, rec):
    x = torch.tensor([[3., 1., 2., 7.], [0., 5., 4., -1.], [9., 8., 6., 2.5]],
                     requires_grad=True)
    m = x.median()
    a, b = x.median(0), torch.median(x, dim=1, keepdim=True)
    rec("m", m), rec("a", [a.values, a.indices]), rec("b", [b.values, b.indices])
    rec("type", type(a).__name__)
    (m * 10 + (a.values * torch.tensor([1., 2., 3., 4.])).sum() + b.values.sum()).backward()
    rec("g", x.grad)
    t = torch.tensor([[1., 1., 1.], [2., 1., 2.], [1., 5., 2.]], requires_grad=True)
    t.median().backward()
    rec("ties", t.grad)
    y = torch.tensor([1., float("nan"), 3., float("nan")], requires_grad=True)
    rec("nan", y.median()), rec("nan_dim", list(y.median(0)))
    y.median().backward()
    rec("gnan", y.grad)
    rec("ints", [torch.tensor([3, 1, 2, 4]).median(), list(torch.tensor([3, 1, 2, 4]).median(0))])
    s = torch.tensor(2., requires_grad=True)
    rec("scalar", [s.median(), list(s.median(0))])
    torch.ones(2, 0).median(1)


@program
def pow_and_atan2_derivatives_at_zero(torch, rec):
    # PyTorch's conventions where JAX's derivative is nan (the rows' torch_jvp rules)
    b = torch.tensor([-1., 0., 1., 2.5], requires_grad=True)
    (torch.zeros(4) ** b).sum().backward()
    rec("zero_base_exponent_grad", b.grad)
    b = torch.tensor([-1., 0., 1., 2.5], requires_grad=True)
    (0.0 ** b).sum().backward()
    rec("scalar_zero_base_exponent_grad", b.grad)
    x = torch.tensor([0., 0., 0., 2.], requires_grad=True)
    y = torch.tensor([0., -1., 0.5, 0.], requires_grad=True)
    p = x.pow(y)
    g = torch.autograd.grad(p.sum(), [x, y], create_graph=True)
    rec("pow_grads", [t.detach() for t in g])
    rec("pow_second", torch.autograd.grad(g[0].sum() + g[1].sum(), [x, y]))
    x = torch.zeros(3, requires_grad=True)
    x.pow(torch.zeros(3)).sum().backward()
    rec("zero_exponent_base_grad", x.grad)
    yy = torch.tensor([0., -0., 0., 1.], dtype=torch.float64, requires_grad=True)
    xx = torch.tensor([0., 0., -0., 0.], dtype=torch.float64, requires_grad=True)
    torch.atan2(yy, xx).sum().backward()
    rec("atan2_grads", [yy.grad, xx.grad])
    rec("atan2_signs", [[math.copysign(1.0, v) for v in t.tolist()] for t in (yy.grad, xx.grad)])


@program
def abs_sign_of_zero_and_derivative_at_zero(torch, rec):
    x = torch.tensor([-0., 0., -2., 3.], requires_grad=True)
    y = torch.abs(x)
    rec("abs", [y, [math.copysign(1.0, v) for v in y.tolist()]])
    g, = torch.autograd.grad(y.sum(), x, create_graph=True)
    rec("grad", [g.detach(), g.requires_grad])
    rec("norms", [x.norm(1), x.norm(float("inf")), x.norm(3)])


@program
def derivative_conventions_found_by_random_programs(torch, rec):
    # prod's backward takes exclusive products from running products where the operand has a
    # 0 (log(1) here), so the entry after log(0) = -inf gets inf, not -inf * 0 = nan
    a = torch.tensor([0.0, 0.5, 1.0], dtype=torch.float64, requires_grad=True)
    torch.prod(torch.log(a)).backward()
    rec("prod_log_grad", a.grad)
    m = torch.tensor([[0.5, 1.0, 2.0], [3.0, 1.0, -1.0]], dtype=torch.float64,
                     requires_grad=True)
    p = torch.prod(torch.log(m.abs() + 0.5), dim=1)
    g = torch.autograd.grad(p.sum(), [m], create_graph=True)
    rec("prod_dim_grads", [g[0].detach(), g[0].requires_grad,
                           torch.autograd.grad(g[0].sum(), [m])])
    # x ** 1's derivative is x ** 0, still a function of x: it requires grad, and its own
    # derivative (0) reaches x
    x = torch.tensor(0.55, dtype=torch.float64, requires_grad=True)
    t = x ** 1.0
    g = torch.autograd.grad(t.sum(), [x, t], create_graph=True)
    rec("pow_one_first", [[v.detach(), v.requires_grad] for v in g])
    rec("pow_one_second", torch.autograd.grad(g[0].sum(), [x, t], allow_unused=True))
    # the side maximum/minimum did not pick gets 0, even from a NaN gradient (sqrt(-1))
    a = torch.tensor([-1.0, 1.0, 2.0, float("nan")], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([2.0, 1.0, float("nan"), 1.0], dtype=torch.float64, requires_grad=True)
    rec("minimum_nan_grad", torch.autograd.grad(torch.sqrt(torch.minimum(a, b)).sum(), [a, b]))
    rec("maximum_nan_grad", torch.autograd.grad(torch.sqrt(-torch.maximum(a, b)).sum(), [a, b]))
    # sigmoid's derivative t (1 - y) y differentiates as one factor t (1 - 2y): with t = inf
    # (a division by 0 after it), the second derivative is -inf or inf, not inf - inf = nan
    s = torch.tensor([0.55, -3.0, 0.0], dtype=torch.float64, requires_grad=True)
    y = torch.sigmoid(s)
    g = torch.autograd.grad((y / 0.0).sum(), [s, y], create_graph=True)
    rec("sigmoid_first", [[v.detach(), v.requires_grad] for v in g])
    rec("sigmoid_second", torch.autograd.grad(g[0].sum(), [s, y], allow_unused=True))
    # x ** 0.5 and x ** -0.5 (a Python float exponent) are sqrt and 1/sqrt: at -0.0 the value
    # of x ** -0.5 and the derivative of x ** 0.5 are -inf (numpy's power gives inf)
    z = torch.tensor([-0.0, 0.0, 2.0, -float("inf")], dtype=torch.float64, requires_grad=True)
    roots = [z ** 0.5, z ** -0.5, z ** 1.5]
    rec("scalar_pow_values", roots)
    g = torch.autograd.grad(sum(r.sum() for r in roots[::2]), [z], create_graph=True)
    rec("scalar_pow_grads", [g[0].detach(), torch.autograd.grad(g[0].sum(), [z])])
    # prod's backward reads its result, with keepdim=True as well: a second derivative with
    # respect to the (kept-dim) result, taken as a non-leaf input, flows
    w = torch.tensor([[0.55, -0.92, -1.84]], dtype=torch.float64, requires_grad=True)
    for name, keep in (("prod_keepdim", True), ("prod_dim", False)):
        p = torch.prod(w, dim=-1, keepdim=keep)
        g = torch.autograd.grad(torch.sin(p).sum(), [w, p], create_graph=True)
        rec(name, torch.autograd.grad(g[0].sum() + g[1].sum(), [w, p], allow_unused=True))
    # pow's backward for x is where(y == 0, 0, t * y x^(y-1)): a NaN tangent (log of a
    # negative base, in the second derivative) stays out where y == 0
    b = torch.tensor([0.55, -0.92, -1.84, 0.0], dtype=torch.float64, requires_grad=True)
    e = torch.tensor([1.5, 0.0, 2.0, 0.0], dtype=torch.float64, requires_grad=True)
    g = torch.autograd.grad((b ** e).sum() + (b ** torch.relu(b)).sum(), [b, e],
                            create_graph=True)
    rec("pow_first", [v.detach() for v in g])
    rec("pow_second", [torch.autograd.grad(g[0].sum(), [b, e]),
                       torch.autograd.grad(g[1].sum(), [b, e])])
    # a sum or mean of a 0-d tensor starts from +0.0 (so 1 / sum(-0.0) is inf); dim=0 is
    # accepted on a 0-d tensor
    m = torch.tensor(-0.0, dtype=torch.float64, requires_grad=True)
    outs = [torch.sum(m), torch.mean(m), m.sum(dim=0), m.mean(dim=-1, keepdim=True),
            m.prod(0)]
    rec("zero_d_reductions", [[1 / o for o in outs], outs])


@program
def prod_second_order_with_and_without_zeros(torch, rec):
    # prod_backward reads its result only where the operand has no 0 (result / input): a
    # second derivative with respect to the result, a non-leaf input, is None where it has one
    # (exclusive products), over all entries, over a dim and with keepdim=True
    for name, values, prod in (
            ("one_zero", [0.0, 2.0, 3.0], lambda x: torch.prod(x)),
            ("two_zeros", [0.0, 0.0, 3.0], lambda x: torch.prod(x)),
            ("no_zero_keepdim", [0.55, -0.92, -1.84], lambda x: x.prod(-1, keepdim=True)),
            ("zero_keepdim", [0.0, -0.92, -1.84], lambda x: x.prod(-1, keepdim=True)),
            ("rows_dim", [[0.0, -1.0, 2.0], [1.0, 2.0, 3.0]], lambda x: x.prod(1)),
            ("rows_no_zero", [[0.5, -1.0, 2.0], [1.0, 2.0, 3.0]], lambda x: x.prod(1, True)),
            # one entry along dim: PyTorch's exclusive product is the gradient itself, which
            # reads neither the operand nor the result (nothing to differentiate again)
            ("size_one_dim", [[0.0, 0.5, 2.0]], lambda x: x.prod(0)),
            ("single_entry", [0.0], lambda x: x.prod())):
        x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        p = prod(x)
        g = torch.autograd.grad(p.sum(), [x, p], create_graph=True)
        second = g[0].sum() + g[1].sum()
        rec(name, [[v.detach(), v.requires_grad] for v in g]
            + [torch.autograd.grad(second, [x, p], allow_unused=True)
               if second.requires_grad else "constant"])
    # over all entries with grad mode off, two zeros give zeros_like(input) whatever the
    # gradient: an inf one (log(0) after it) included
    x = torch.tensor([0.0, 0.0, 3.0], dtype=torch.float64, requires_grad=True)
    torch.log(torch.prod(x)).backward()
    rec("two_zeros_inf_gradient", x.grad)


@program
def zero_base_pow_second_order(torch, rec):
    # 0.0 ** t and zeros ** t: pow_backward_exponent's 0 where the base is 0 and t >= 0 (-inf
    # where t < 0), differentiated again with respect to t and to the power itself
    t = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5], dtype=torch.float64, requires_grad=True)
    for name, base in (("number", 0.0), ("tensor", torch.zeros(5, dtype=torch.float64))):
        y = base ** t
        g = torch.autograd.grad(y.sum(), [t, y], create_graph=True)
        rec(name, [[v.detach(), v.requires_grad] for v in g]
            + [torch.autograd.grad(g[0].sum(), [t, y], allow_unused=True)])


@program
def maximum_and_minimum_of_signed_zeros(torch, rec):
    # on a tie PyTorch's maximum and minimum give the first operand: -0.0 against 0.0 stays
    # -0.0 (numpy's gives the second), which 1 / x tells apart; the derivative splits the tie
    a = torch.tensor([-0.0, 0.0, 1.0, float("nan")], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.0, -0.0, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    for name in ("maximum", "minimum"):
        out = getattr(torch, name)(a, b)
        rec(name, [out, 1 / out, getattr(torch, name)(b, a)])
        g = torch.autograd.grad((1 / out).sum(), [a, b], create_graph=True)
        rec(name + "_grads", [[v.detach() for v in g],
                              torch.autograd.grad(g[0].sum() + g[1].sum(), [a, b])])


@program
def prod_over_all_entries_with_several_zeros(torch, rec):
    # prod_backward over all entries: with grad mode off (a plain backward) an operand with two
    # or more zeros gets zeros_like(input), where the exclusive products meet nan (log(-1))
    a = torch.tensor([-1.0, 1.0, 1.0], dtype=torch.float64, requires_grad=True)
    torch.prod(torch.log(a)).sum().backward()
    rec("plain", a.grad)
    # prod over a named dim (ProdBackward1) has no such branch, nor has create_graph=True,
    # whose exclusive products are differentiated again
    a = torch.tensor([-1.0, 1.0, 1.0], dtype=torch.float64, requires_grad=True)
    torch.prod(torch.log(a), 0).sum().backward()
    rec("dim", a.grad)
    g, = torch.autograd.grad(torch.prod(torch.log(a)), a, create_graph=True)
    rec("create_graph", [g.detach(), g.requires_grad])
    b = torch.tensor([2.0, 0.0, 0.0, 3.0], dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(torch.prod(b), b, create_graph=True)
    rec("second", [g.detach(), torch.autograd.grad(g[1], b)])


@program
def pow_self_derivative_masked_after_the_product(torch, rec):
    # pow_backward_self is where(y == 0, 0, grad * y x^(y-1)): its derivative in grad is
    # y x^(y-1) * where(y == 0, 0, .), so 0 * 0^-1 = nan at x == y == 0 in a second derivative
    # with respect to a tensor after the pow (sin(sin(a ** a)) at a = 0)
    a = torch.tensor([0.0, 1.0, -1.0, 0.5], dtype=torch.float64, requires_grad=True)
    t1 = a ** a
    t2 = torch.sin(t1)
    g = torch.autograd.grad(torch.sin(t2).sum(), [a, t2], create_graph=True)
    rec("first", [v.detach() for v in g])
    rec("second", torch.autograd.grad(g[0].sum() + g[1].sum(), [a, t2]))


@program
def abs_of_log_second_derivative_at_zero(torch, rec):
    # abs's derivative grad * sgn(x) differentiates sgn to an efficient zero tensor, which
    # log's backward passes on as zero: only div's term reaches x, inf at x = 0
    x = torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64, requires_grad=True)
    t0 = torch.log(x)
    g = torch.autograd.grad(torch.abs(t0).sum(), [x, t0], create_graph=True)
    rec("first", [v.detach() for v in g])
    rec("second", [v.detach().clone() for v in torch.autograd.grad(g[0].sum(), [x, t0])])


@program
def operand_shape_errors(torch, rec):
    """Out-of-place elementwise ops on operands that do not broadcast: PyTorch's RuntimeError
    naming the two sizes and the axis (not numpy's ValueError), under grad mode and without."""
    a, b, c = (2, 3), (4, 3), (2, 1, 3)
    cases = [("add", lambda x, y: x + y, a, b), ("mul", torch.mul, a, (5,)),
             ("sub scalar", lambda x, y: x - 2 * y, (3,), (2,)), ("div", torch.div, (4, 3), a),
             ("pow", torch.pow, a, b), ("maximum", torch.maximum, a, b),
             ("atan2", torch.atan2, a, b), ("eq", torch.eq, a, b),
             ("gt", lambda x, y: x > y, a, b),
             ("logical_and", torch.logical_and, a, b), ("isclose", torch.isclose, a, b),
             ("where", lambda x, y: torch.where(x > 0, x, y), a, b),
             ("where cond", lambda x, y: torch.where(y > 0, x, x), a, b),
             ("addcmul", lambda x, y: torch.addcmul(x, x, y), a, b),
             ("lerp", lambda x, y: torch.lerp(x, y, 0.5), a, b),
             ("clamp", lambda x, y: torch.clamp(x, y), a, b),
             ("broadcasts", lambda x, y: x + y, c, b)]
    for name, fn, s, t in cases:
        for grad in (False, True):
            x = torch.ones(s, requires_grad=grad) * 1 if grad else torch.ones(s)
            try:
                out = fn(x, torch.ones(t))
                rec(f"{name} {grad}", list(out.shape))
            except RuntimeError as e:
                rec(f"{name} {grad}", str(e))
    torch.ones(2, 3) * torch.ones(3, 2)


# --- the math PyTorch programs reach for (logaddexp, hypot, xlogy, ..., finfo) ---------------

def _outcome(fn):
    """fn's result, or [type, message] of the error it raises."""
    try:
        return fn()
    except Exception as e:  # the message is what the program observes
        return [type(e).__name__, _message(e)]


def _first_and_second(torch, rec, name, f, *args):
    """Value, node, first derivatives and (create_graph=True) second derivatives of f(*args)."""
    out = f(*args)
    rec(name, out)
    g = torch.autograd.grad(out.sum(), args, create_graph=True)
    rec(name + " d", [v.detach() for v in g])
    rec(name + " d requires_grad", [v.requires_grad for v in g])
    g = [v for v in g if v.requires_grad]
    if g:
        rec(name + " dd", [v if v is None else v.detach() for v in torch.autograd.grad(
            sum(v.sum() for v in g), args, allow_unused=True)])


@program
def more_math_values_names_and_derivatives(torch, rec):
    def leaf(values):
        return torch.tensor(values, dtype=torch.float64, requires_grad=True)
    x, y = leaf([0.3, -0.7, 1.2, 2.5]), leaf([0.5, 0.2, -1.1, 2.5])
    p = leaf([0.2, 0.5, 0.9, 0.05])
    for name, f, args in [
            ("logaddexp", torch.logaddexp, (x, y)), ("logaddexp2", torch.logaddexp2, (x, y)),
            ("hypot", torch.hypot, (x, y)), ("xlogy", torch.xlogy, (x, p)),
            ("erfc", torch.erfc, (x,)), ("logit", torch.logit, (p,)),
            ("logit eps", lambda t: torch.logit(t, 0.1), (p,)),
            ("deg2rad", torch.deg2rad, (x,)), ("rad2deg", torch.rad2deg, (x,)),
            ("sinc", torch.sinc, (x,)),
            ("fmax", torch.fmax, (x, y)), ("fmin", torch.fmin, (x, y)),
            ("frac", torch.frac, (x,)), ("arcsinh", torch.arcsinh, (x,)),
            ("arctanh", lambda t: torch.arctanh(t / 3), (x,)),
            ("arccosh", lambda t: torch.arccosh(t + 2), (x,)),
            ("fix", torch.fix, (x,)), ("nansum", torch.nansum, (x,)),
            ("nanmean", torch.nanmean, (x,)), ("kron", torch.kron, (x, y)),
            ("dist", torch.dist, (x, y)), ("dist 3", lambda a, b: torch.dist(a, b, 3), (x, y)),
            ("cosine_similarity", lambda a, b: torch.cosine_similarity(
                a.reshape(2, 2), b.reshape(2, 2)), (x, y)),
            ("pairwise_distance", lambda a, b: torch.nn.functional.pairwise_distance(
                a.reshape(2, 2), b.reshape(2, 2)), (x, y)),
            ("cross", lambda a, b: torch.cross(a[:3], b[:3], dim=0), (x, y)),
            ("method", lambda a, b: a.hypot(b) + a.logaddexp(b) + a.xlogy(b * b), (x, y))]:
        _first_and_second(torch, rec, name, f, *args)


@program
def more_math_special_points(torch, rec):
    """Ties, NaN, zeros and domain ends: PyTorch's values and derivatives there."""
    def grads(name, f, *values):
        ts = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
        out = f(*ts)
        rec(name, out)
        rec(name + " d", list(torch.autograd.grad(out.sum(), ts)))
    nan = math.nan
    grads("fmax", torch.fmax, [1., nan, 1., nan, 2.], [1., 1., nan, nan, 3.])
    grads("fmin", torch.fmin, [1., nan, 1., nan, 2.], [1., 1., nan, nan, 3.])
    grads("copysign", torch.copysign, [0., -0., 2., -3.], [-1., 1., -0., 0.])
    grads("copysign scalar", lambda t: torch.copysign(t, -1.0), [0., -2., 3.])
    grads("sinc", torch.sinc, [0., 1., -0.5, 1e-9])
    grads("logit eps", lambda t: torch.logit(t, 0.25), [0.1, 0.25, 0.5, 0.75, 0.9])
    grads("logit ends", torch.logit, [0., 1., 0.5])
    grads("xlogy zeros", torch.xlogy, [0., 0., 2., 0.], [-1., 2., 0., nan])
    grads("xlogy scalar self", lambda t: torch.xlogy(2.0, t), [0.5, 3.])
    grads("xlogy scalar other", lambda t: torch.xlogy(t, 3.0), [0., 3.])
    grads("logaddexp tie", torch.logaddexp, [1., -3.], [1., -3.])
    grads("hypot", torch.hypot, [3., -5., 1e200], [4., 12., 1e200])
    grads("nansum", lambda t: torch.nansum(t, 1), [[1., nan], [nan, nan]])
    grads("nanmean", lambda t: torch.nanmean(t, 1, keepdim=True), [[1., nan, 3.], [2., 4., 4.]])
    grads("dist at zero", torch.dist, [1., 2.], [1., 2.])
    grads("dist 1", lambda a, b: torch.dist(a, b, 1), [1., 2., 0.], [1., 3., 2.])
    grads("dist inf tie", lambda a, b: torch.dist(a, b, math.inf), [1., 2.], [0., 1.])
    grads("cosine at zero", lambda a, b: torch.cosine_similarity(a, b, 0), [0., 0.], [1., 2.])
    grads("pairwise equal", torch.pairwise_distance, [[1., 2.]], [[1., 2.]])
    x = torch.tensor([[1., 3., 3., 2., 5., 5.], [nan, 1., 0., nan, 2., -1.]],
                     dtype=torch.float64, requires_grad=True)
    for name in ("cummax", "cummin"):
        values, indices = getattr(torch, name)(x, 1)
        rec(name, [values, indices]), rec(name + " type", type(values).__name__)
        rec(name + " d", torch.autograd.grad((values * torch.arange(6.)).sum(), x))
    rec("cummax 0-d", list(torch.cummax(torch.tensor(3.), 0)))
    rec("cummin int", list(torch.cummin(torch.tensor([3, 1, 2, 1]), 0)))
    h = torch.heaviside(x.detach(), torch.tensor(0.5, dtype=torch.float64))
    rec("heaviside", h)
    h = torch.heaviside(x, torch.tensor(0.5, dtype=torch.float64))
    rec("heaviside grad", [h.requires_grad, type(h.grad_fn).__name__])


@program
def more_math_dtypes_and_errors(torch, rec):
    i, b = torch.tensor([1, 2]), torch.tensor([True, False])
    f16, f = torch.tensor([1., 2.], dtype=torch.float16), torch.tensor([2., 0.5])
    for name, fn in [("logaddexp", torch.logaddexp), ("logaddexp2", torch.logaddexp2),
                     ("hypot", torch.hypot), ("fmax", torch.fmax), ("fmin", torch.fmin),
                     ("copysign", torch.copysign), ("xlogy", torch.xlogy),
                     ("heaviside", torch.heaviside), ("kron", torch.kron),
                     ("dist", torch.dist)]:
        for ka, a in (("i", i), ("f16", f16), ("f", f)):
            for kb, c in (("i", i), ("f", f)):
                rec(f"{name} {ka} {kb}", _outcome(lambda: fn(a, c)))
    for name, fn in [("erfc", torch.erfc), ("logit", torch.logit), ("deg2rad", torch.deg2rad),
                     ("rad2deg", torch.rad2deg), ("frac", torch.frac), ("sinc", torch.sinc),
                     ("nansum", torch.nansum), ("nanmean", torch.nanmean), ("fix", torch.fix),
                     ("trunc", torch.trunc), ("floor", torch.floor), ("ceil", torch.ceil),
                     ("round", torch.round), ("round method", lambda t: t.round()),
                     ("positive", torch.positive), ("arccos", torch.arccos),
                     ("is_signed", torch.is_signed)]:
        for k, a in (("i", i), ("b", b), ("f16", f16)):
            rec(f"{name} {k}", _outcome(lambda: fn(a)))
    rec("cos_sim int", _outcome(lambda: torch.cosine_similarity(i[None], i[None])))
    rec("cos_sim mixed", torch.cosine_similarity(i[None], f[None]))
    rec("cos_sim shapes", _outcome(lambda: torch.cosine_similarity(torch.ones(2, 3),
                                                                 torch.ones(2, 4))))
    rec("cross no 3", _outcome(lambda: torch.cross(torch.ones(2, 2), torch.ones(2, 2))))
    rec("cross len", _outcome(lambda: torch.cross(torch.ones(2, 3), torch.ones(2, 3), dim=0)))
    rec("cross ndim", _outcome(lambda: torch.cross(torch.ones(3), torch.ones(2, 3), dim=-1)))
    rec("cross broadcast", torch.cross(torch.ones(1, 3), torch.arange(12.).reshape(4, 3), dim=1))
    rec("cross bad broadcast", _outcome(lambda: torch.cross(torch.ones(2, 3), torch.ones(4, 3),
                                                          dim=1)))
    a, c = torch.tensor([[1., 2., 3.]], requires_grad=True), torch.arange(6.).reshape(2, 3)
    rec("linalg.cross", torch.linalg.cross(a, c))
    rec("linalg.cross d", torch.autograd.grad(torch.linalg.cross(a, c).sum(), a))
    rec("linalg.cross len", _outcome(lambda: torch.linalg.cross(torch.ones(3, 2),
                                                                torch.ones(3, 2))))
    rec("heaviside mixed", _outcome(lambda: torch.heaviside(f, i)))
    rec("logaddexp shapes", _outcome(lambda: torch.logaddexp(torch.ones(2), torch.ones(3))))
    rec("broadcast_shapes", [torch.broadcast_shapes((2, 1), (3,), 1),
                             type(torch.broadcast_shapes((2, 1))).__name__,
                             torch.broadcast_shapes()])
    rec("broadcast_shapes bad", _outcome(lambda: torch.broadcast_shapes((2, 3), (4, 3))))
    rec("is_nonzero", [torch.is_nonzero(torch.tensor([0.])), torch.tensor(3).is_nonzero(),
                       _outcome(lambda: torch.is_nonzero(torch.tensor([1, 2]))),
                       _outcome(lambda: torch.is_nonzero(torch.tensor([])))])
    rec("is_same_size", [torch.is_same_size(f, i), f.is_same_size(torch.ones(2, 1))])
    rec("is_signed", [torch.tensor([1], dtype=torch.uint8).is_signed(), f.is_signed(),
                      i.is_signed(), b.is_signed()])
    for d in (torch.float16, torch.float32, torch.float64, torch.complex64):
        fi = torch.finfo(d)
        rec(f"finfo {d}", [fi.eps, fi.max, fi.min, fi.tiny, fi.smallest_normal, fi.resolution,
                           fi.bits, fi.dtype, repr(fi)])
    rec("finfo default", torch.finfo() == torch.finfo(torch.float32))
    for d in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        ii = torch.iinfo(d)
        rec(f"iinfo {d}", [ii.bits, ii.max, ii.min, ii.dtype, repr(ii)])
    rec("finfo int", _outcome(lambda: torch.finfo(torch.int32)))
    rec("iinfo float", _outcome(lambda: torch.iinfo(torch.float32)))
    rec("iinfo bool", _outcome(lambda: torch.iinfo(torch.bool)))


@program
def more_shape_functions(torch, rec):
    x = torch.arange(1., 7.).reshape(2, 3).requires_grad_()
    v = torch.tensor([1., -2.], requires_grad=True)
    s = torch.tensor(4., requires_grad=True)
    w = torch.arange(6.)
    for name, f in [("atleast_1d", lambda: torch.atleast_1d(s * 1)),
                    ("atleast_2d", lambda: torch.atleast_2d(v * 1)),
                    ("atleast_2d 0-d", lambda: torch.atleast_2d(s * 1)),
                    ("atleast_3d", lambda: torch.atleast_3d(v * 1)),
                    ("atleast_3d 2-d", lambda: torch.atleast_3d(x * 1)),
                    ("atleast_3d 0-d", lambda: torch.atleast_3d(s * 1)),
                    ("column_stack", lambda: torch.column_stack([x[0], x.t(), x[1] * 2])),
                    ("dstack", lambda: torch.dstack([x, x * 2])),
                    ("fliplr", lambda: torch.fliplr(x)), ("flipud", lambda: x.flipud()),
                    ("block_diag", lambda: torch.block_diag(x, v, s)),
                    ("cartesian_prod", lambda: torch.cartesian_prod(v, v * 3, v)),
                    ("diagflat", lambda: torch.diagflat(x, -1)),
                    ("diag_embed", lambda: torch.diag_embed(x, 1)),
                    ("diag_embed dims", lambda: x.diag_embed(-1, 0, 2)),
                    ("kron 2-d", lambda: torch.kron(x, v[None])),
                    ("cummax method", lambda: x.cummax(0).values)]:
        out = f()
        rec(name, out)
        grads = torch.autograd.grad((out * torch.arange(out.numel(), dtype=out.dtype).reshape(
            out.shape)).sum(), (x, v, s), allow_unused=True)
        rec(name + " d", list(grads))
    rec("atleast several", torch.atleast_1d(s, v))
    rec("atleast list", torch.atleast_2d([s]))
    rec("atleast same", [torch.atleast_1d(v) is v, torch.atleast_2d(x) is x])
    rec("block_diag dtypes", torch.block_diag(torch.tensor(2), torch.ones(2, dtype=torch.int32),
                                              torch.ones(1, 2, dtype=torch.float64)))
    rec("cartesian one", torch.cartesian_prod(w) is w)
    for name, fn in [("fliplr 1-d", lambda: torch.fliplr(w)),
                     ("flipud 0-d", lambda: torch.flipud(torch.tensor(1.))),
                     ("block_diag 3-d", lambda: torch.block_diag(torch.ones(2, 2, 2))),
                     ("cartesian 2-d", lambda: torch.cartesian_prod(x)),
                     ("cartesian dtypes", lambda: torch.cartesian_prod(w, torch.arange(2))),
                     ("diag_embed same", lambda: torch.diag_embed(x, 0, 1, 1))]:
        rec(name, _outcome(fn))


@program
def module_level_inplace_functions(torch, rec):
    """torch.abs_(t), torch.clamp_(t, ...), ...: t.abs_(), ... (t is returned, its version bumped,
    its node PyTorch's)."""
    x = torch.tensor([-1.5, -0.25, 0.5, 2.], requires_grad=True)
    p = torch.tensor([0.1, 0.3, 0.5, 0.8], requires_grad=True)
    for name, args, src in [
            ("abs_", (), x), ("neg_", (), x), ("negative_", (), x), ("exp_", (), x),
            ("sin_", (), x), ("arctan_", (), x), ("erf_", (), x),
            ("erfc_", (), x), ("expm1_", (), x), ("relu_", (), x), ("sigmoid_", (), x),
            ("tanh_", (), x), ("trunc_", (), x), ("fix_", (), x), ("frac_", (), x),
            ("floor_", (), x), ("round_", (), x), ("square_", (), x), ("sinc_", (), x),
            ("deg2rad_", (), x), ("rad2deg_", (), x), ("clamp_", (-1., 1.), x),
            ("clip_", (None, 0.), x), ("clamp_min_", (0.,), x), ("clamp_max_", (0.,), x),
            ("nan_to_num_", (), x), ("fill_", (3.,), x), ("zero_", (), x),
            ("xlogy_", (2.,), x), ("log_", (), p), ("logit_", (), p), ("sqrt_", (), p),
            ("rsqrt_", (), p), ("reciprocal_", (), p), ("arccos_", (), p),
            ("arcsin_", (), p), ("log1p_", (), p), ("log2_", (), p),
            ("log10_", (), p), ("exp2_", (), p), ("cos_", (), p), ("cosh_", (), p),
            ("sinh_", (), p), ("tan_", (), p), ("ceil_", (), p), ("acos_", (), p),
            ("asin_", (), p), ("atan_", (), p)]:
        t = src[0] * 1 if isinstance(src, tuple) else src * 1
        version = t._version
        out = getattr(torch, name)(t, *args)
        rec(name, [out is t, t._version - version, out])
        rec(name + " d", torch.autograd.grad(out.sum(), src[0] if isinstance(src, tuple)
                                             else src, allow_unused=True))
    leaf = torch.ones(2, requires_grad=True)
    rec("leaf", _outcome(lambda: torch.exp_(leaf)))
    d = torch.ones(2)
    rec("detach_", [torch.detach_(d) is d])
