"""Parity programs by topic: in-place operations, views and their version counters.

Registered in parity_observe.PROGRAMS; parity_programs.py gathers them and records the
fixtures."""

from __future__ import annotations

from parity_observe import program


@program
def inplace_on_leaf_errors(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    rec("version", x._version)
    x.add_(1)


@program
def inplace_under_no_grad(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    with torch.no_grad():
        x.mul_(3)
        x += 1
        x[0] = 10.
    rec("x", x), rec("version", x._version)
    (x * x).sum().backward()
    rec("grad", x.grad)


@program
def inplace_rebases_history(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    y.add_(1)
    rec("y", y), rec("version", y._version)
    y.mul_(y.detach())
    rec("y2", y)
    y.sum().backward()
    rec("grad", x.grad)


@program
def inplace_on_non_leaf_then_backward(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    z = x * 1
    s = z.sin()
    z.add_(1)
    s.sum().backward()


@program
def inplace_on_output_saved_for_backward(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    s = (x * 1).exp()
    s.add_(1)
    s.sum().backward()


@program
def inplace_on_detached_alias(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    z = x.detach()
    s = x * z
    z.add_(1)
    rec("x_changed", x)
    s.sum().backward()


@program
def inplace_through_data_is_invisible(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    s = x * x
    x.data.mul_(2)
    rec("versions", [x._version, x.data._version])
    s.sum().backward()
    rec("grad", x.grad)


@program
def exp_saves_its_result_not_its_input(torch, rec):
    z = torch.tensor(2., requires_grad=True)
    s = z.exp()
    with torch.no_grad():
        z.add_(1)
    s.backward()
    rec("grad", z.grad)


@program
def inplace_mul_keeps_old_value_for_backward(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 4.], requires_grad=True)
    y = x * 1
    y.mul_(w)
    y.sum().backward()
    rec("x_grad", x.grad), rec("w_grad", w.grad)


@program
def setitem_with_grad(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    v = torch.tensor(5., requires_grad=True)
    y = x * 2
    y[1] = v * 3
    rec("y", y)
    y.sum().backward()
    rec("x_grad", x.grad), rec("v_grad", v.grad)


@program
def copy_and_fill_with_grad(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = torch.zeros(2)
    y.copy_(x * 3)
    rec("y", y)
    z = x * 1
    z.fill_(4.)
    rec("z", z)
    (y.sum() + z.sum()).backward()
    rec("grad", x.grad)


@program
def view_errors(torch, rec):
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
    rec("reshape", x.t().reshape(6))
    x.t().view(6)


@program
def expand_errors(torch, rec):
    torch.tensor([1., 2.]).expand(3, 3)


@program
def inplace_dtype_error(torch, rec):
    x = torch.tensor([1, 2])
    x += 1
    rec("x", x)
    x /= 2


@program
def leaf_view_inplace(torch, rec):
    x = torch.tensor([1., 2.], requires_grad=True)
    x[0].mul_(2)


@program
def inplace_on_views(torch, rec):
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    out = torch.zeros(3)
    for i in range(3):
        out[i] = x[i] ** 2
    rec("out", out)
    z = torch.empty(2, 3)
    z[0] = x
    z[1, :] = x * 3
    z[:, 0] += 1
    z[1].mul_(z[0])
    z.t()[2].sub_(x[0])
    rec("z", z), rec("z_version", z._version)
    (out.sum() + z.sum()).backward()
    rec("grad", x.grad)
    y = x * 1
    first, rest = y[0], y[1:]
    y.mul_(2)
    rest.add_(first)
    rec("first", first), rec("rest", rest), rec("y", y)
    x.grad = None
    (first * rest.sum()).backward()
    rec("grad2", x.grad)
    w = x.detach().clone()
    w.view(3)[1:].fill_(7.)
    rec("w", w)
    x[1:].zero_()


@program
def setitem_leaf_view_message(torch, rec):
    a = torch.tensor([1., 2.], requires_grad=True)
    a[0] = 5.


@program
def leaf_slice_inplace_message(torch, rec):
    a = torch.tensor([1., 2.], requires_grad=True)
    a[1:].mul_(2)


@program
def inplace_view_ops(torch, rec):
    x = torch.ones(2, 1, 3, requires_grad=True)
    y = x * torch.arange(6.).reshape(2, 1, 3)
    v0 = y._version
    y.squeeze_()
    rec("sq", y), rec("version", y._version - v0)
    y.t_()
    rec("t", y)
    y.unsqueeze_(0)
    rec("unsq", y)
    y.transpose_(0, 2)
    rec("tr", y)
    y.squeeze_(1)
    rec("sq1", y)
    z = x * 1
    z.squeeze_((1,))
    rec("sq_tuple", z)
    (y * torch.arange(6.).reshape(y.shape)).sum().backward()
    rec("g", x.grad)
    w = x * 2
    u = w[0]
    u.unsqueeze_(0)
    rec("view_unsq", [u, u._base is w])
    u.mul_(3)
    rec("base_after", w), rec("u_after", u)
    w.sum().backward()
    rec("g2", x.grad)
    rec("inference", [x.is_inference(), torch.is_inference(w)])
    plain = torch.ones(1, 2)
    plain.squeeze_().t_()
    rec("plain", plain)
    x.squeeze_()


@program
def retain_grad_follows_inplace(torch, rec):
    seen = []
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: seen.append(("before", g)))
    y.retain_grad()
    y.mul_(3)
    y.register_hook(lambda g: seen.append(("after", g)))
    (y * torch.tensor([1., 10.])).sum().backward()
    rec("y.grad", y.grad), rec("x.grad", x.grad), rec("retains", y.retains_grad)
    x.grad = None
    b = x * 1
    b.retain_grad()
    b[0].mul_(2)
    (b * torch.tensor([3., 4.])).sum().backward()
    rec("b.grad", b.grad), rec("x.grad2", x.grad)
    x.grad = None
    b = x * 1
    v = b.view(2, 1)
    v.retain_grad()
    b.add_(1)
    rec("v.grad_fn", v.grad_fn)
    (v * 2).sum().backward()
    rec("v.grad", v.grad), rec("x.grad3", x.grad)
    x.grad = None
    b = x * 1
    c = b[:1]
    c.retain_grad()
    c.mul_(5)
    b.sum().backward()
    rec("c.grad", c.grad), rec("x.grad4", x.grad)
    s = (x * 1).unsqueeze(0)
    s.retain_grad()
    s.squeeze_(0)
    (s * torch.tensor([1., 2.])).sum().backward()
    rec("s.grad", s.grad)
    rec("seen", [[k, g] for k, g in seen])


@program
def inplace_on_diagonal_and_multi_output_views(torch, rec):
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    b = x * 1
    d = b.diagonal()
    rec("d", d), rec("is_view", d._base is b)
    d.zero_()
    rec("b", b)
    b.sum().backward()
    rec("gx", x.grad)
    x.grad = None
    b = x * 1
    b.diagonal(1).mul_(3)
    b.diagonal(-1).add_(1)
    (b * b).sum().backward()
    rec("b2", b), rec("gx2", x.grad)
    for k, make in enumerate([lambda t: t.unbind(0)[1], lambda t: t.split(1, dim=1)[2],
                              lambda t: t.chunk(3, 1)[0], lambda t: t.split([1, 2], 1)[1]]):
        try:
            make(x * 1).mul_(2)
        except RuntimeError as e:
            rec(f"err{k}", str(e))
    with torch.no_grad():
        n = x[0]
        u = (x * 1).unbind(0)[0]
    rec("no_grad_view", [n.requires_grad, n.is_leaf, n.grad_fn])
    (n * 2).sum().backward()
    rec("n.grad", n.grad), rec("x.grad_untouched", x.grad)
    u.mul_(2)
    rec("u", u)
    n.mul_(2)


@program
def inplace_operand_shape_errors(torch, rec):
    """An elementwise in-place op whose operands do not broadcast to self: PyTorch's
    RuntimeError naming the two sizes (or the output shape), under grad mode and without."""
    cases = {"add_": ((2, 3), [(4, 3)]), "sub_": ((2, 3), [(2, 3, 1)]), "mul_": ((2, 3), [(5,)]),
             "div_": ((2, 1), [(2, 3)]), "pow_": ((), [(4, 3)]),
             "clamp_": ((2, 3), [(2, 3), (4, 3)]), "addcmul_": ((2, 3), [(4, 1), (1, 3)]),
             "addcdiv_": ((2, 3), [(3,), (5, 3)]), "__iadd__": ((2, 3), [(3, 2)])}
    for name, (shape, operands) in cases.items():
        for grad in (False, True):
            x = torch.ones(shape, requires_grad=grad) * 1 if grad else torch.ones(shape)
            try:
                getattr(x, name)(*[torch.ones(s) for s in operands])
                rec(f"{name}{grad}", "no error")
            except RuntimeError as e:
                rec(f"{name}{grad}", str(e))
    mask = torch.ones(4, 3, dtype=torch.bool)
    torch.ones(2, 3).masked_fill_(mask, 1.0)


@program
def inplace_forms_of_the_elementwise_functions(torch, rec):
    """x.fmod_(2), x.eq_(y), x.lerp_(e, w) and the other elementwise functions' in-place
    methods: values, dtype, node and the gradient through the overwritten tensor (a
    comparison's is zero; logical_and_ and the like keep the old history, as PyTorch does)."""
    other = torch.tensor([0.3, 0.5])
    cases = [("remainder_", (2.,)), ("fmod_", (other,)), ("square_", ()), ("tan_", ()),
             ("reciprocal_", ()), ("arcsin_", ()), ("acos_", ()), ("atan_", ()), ("sinh_", ()),
             ("cosh_", ()), ("exp2_", ()), ("expm1_", ()),
             ("log2_", ()), ("log10_", ()), ("log1p_", ()), ("rsqrt_", ()), ("erf_", ()),
             ("floor_", ()), ("ceil_", ()), ("round_", ()), ("trunc_", ()), ("sign_", ()),
             ("atan2_", (other,)), ("arctan2_", (other,)), ("lerp_", (other, 0.3)),
             ("lerp_", (other, other)), ("subtract_", (other,)), ("multiply_", (3.,)),
             ("divide_", (other,)), ("true_divide_", (2.,)), ("negative_", ()),
             ("absolute_", ()), ("eq_", (other,)), ("ne_", (0.2,)), ("lt_", (other,)),
             ("le_", (0.2,)), ("gt_", (other,)), ("ge_", (0.2,)), ("greater_", (other,)),
             ("less_equal_", (0.5,)), ("not_equal_", (other,)), ("logical_not_", ()),
             ("logical_and_", (other,)), ("logical_or_", (other,)), ("logical_xor_", (other,)),
             ("cumsum_", (0,)), ("cumprod_", (0,))]
    for k, (name, args) in enumerate(cases):
        x = torch.tensor([0.4, 0.2], requires_grad=True)
        y = x * 0.5
        getattr(y, name)(*args)
        rec(f"{k} {name}", [y, y.dtype, y.grad_fn])
        y.sum().backward()
        rec(f"{k} {name} grad", x.grad)
    for name in ("asinh_", "acosh_", "atanh_"):  # PyTorch has no derivative for these three
        x = torch.tensor([0.4, 1.2]) if name == "acosh_" else torch.tensor([0.4, 0.2])
        getattr(x, name)()
        rec(name, x)
    t = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    for name in ("tril_", "triu_"):
        m = t * 1
        getattr(m, name)()
        rec(name, [m, m.grad_fn])
    i = torch.arange(4)
    for name, args in [("eq_", (1,)), ("floor_divide_", (2,)), ("remainder_", (3,)),
                       ("cumsum_", (0,)), ("lt_", (torch.tensor([2, 2, 2, 2]),))]:
        z = i.clone()
        getattr(z, name)(*args)
        rec(f"int {name}", [z, z.dtype])
    for name, args in [("sqrt_", ()), ("eq_", (torch.ones(3, 4),)), ("tril_", ()),
                       ("fmod_", (torch.ones(5),))]:
        try:
            getattr(torch.ones(4), name)(*args)
            rec(f"error {name}", "no error")
        except RuntimeError as e:
            rec(f"error {name}", str(e))
    torch.arange(3).sqrt_()
