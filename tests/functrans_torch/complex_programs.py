"""Programs for complex numbers in functrans.torch, PyTorch's conventions: complex dtypes and
promotion, tensors from complex data, torch.complex / polar, view_as_real / view_as_complex and
.real / .imag (views: writes go through, version counters), conj, angle, abs, sgn, gradients of
real losses of complex leaves (the conjugate Wirtinger convention), backward of complex outputs,
create_graph, autograd.Function, gradcheck / gradgradcheck, and PyTorch's errors.

test_complex.py compares functrans.torch's record of each program with PyTorch's: always with
the records in complex_fixtures.json, and live when torch is installed. Re-record with
torch==2.13.0 installed: `python tests/functrans_torch/complex_programs.py`.
"""

from __future__ import annotations

import os

from parity_programs import record_fixtures

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "complex_fixtures.json")
PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


def _attempt(rec, name, fn):
    """Record fn()'s result, or its error (type and first line of its message)."""
    try:
        rec(name, fn())
    except Exception as e:  # the error is what the program observes
        rec(name, [type(e).__name__, str(e).split("\n")[0]])


def _z(torch, values, dtype=None):
    return torch.tensor(values, dtype=dtype or torch.complex128, requires_grad=True)


Z = [1 + 1j, 2j, -0.5 + 0.25j, 1.5 - 0.75j]


@program
def dtypes_and_promotion(torch, rec):
    rec("aliases", [torch.cfloat is torch.complex64, torch.cdouble is torch.complex128])
    rec("from_data", [torch.tensor([1 + 2j, 3.0]), torch.tensor(2j), torch.tensor([[1, 2j]])])
    rec("as_complex", torch.tensor([1.0, 2.0]).to(torch.complex128))
    c64, c128 = torch.ones(2, dtype=torch.cfloat), torch.ones(2, dtype=torch.cdouble)
    f64, i64 = torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.int64)
    rec("promote", [str((c64 * f64).dtype), str((c64 + c128).dtype), str((i64 * 1j).dtype),
                    str((f64 * 1j).dtype), str((c64 * torch.tensor(2.0, dtype=torch.float64))
                                               .dtype), str((torch.ones(2) + 2j).dtype)])
    rec("result_type", [str(torch.result_type(c64, f64)), str(torch.promote_types(
        torch.float64, torch.complex64)), torch.can_cast(torch.complex64, torch.float64)])
    rec("flags", [c64.is_complex(), torch.is_complex(f64), c64.dtype.is_complex,
                  c64.is_floating_point(), c64.dtype.itemsize])
    rec("repr", [repr(torch.tensor([1.5 + 2j, -3 - 1e-5j])), repr(_z(torch, [1 + 2j]) * 2)])
    rec("requires_grad", torch.zeros(2, dtype=torch.cfloat, requires_grad=True))


@program
def complex_and_polar(torch, rec):
    re = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
    im = torch.tensor([0.5, 3.0, -1.0], dtype=torch.float64, requires_grad=True)
    z = torch.complex(re, im)
    rec("z", z)
    (z * z).abs().sum().backward()
    rec("grads", [re.grad, im.grad])
    r = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    t = torch.tensor([0.3, -2.0], dtype=torch.float64, requires_grad=True)
    p = torch.polar(r, t)
    rec("polar", p)
    (p.exp().imag.sum()).backward()
    rec("polar_grads", [r.grad, t.grad])
    _attempt(rec, "mixed_dtypes", lambda: torch.complex(re.float(), im))
    _attempt(rec, "ints", lambda: torch.complex(re.long(), im.long()))
    _attempt(rec, "polar_mixed", lambda: torch.polar(r.float(), t))


@program
def views_of_parts(torch, rec):
    x = _z(torch, Z)
    y = x * 2
    rec("parts", [y.real, y.imag, torch.real(y), torch.imag(y), torch.view_as_real(y)])
    rec("round_trip", torch.view_as_complex(torch.view_as_real(y)))
    rec("bases", [y.real._base is y, torch.view_as_real(y)._base is y, x.real._base is x])
    f = torch.tensor([1.0, -2.0], requires_grad=True)
    rec("real_of_real", [f.real is f, f.conj() is f, f.conj_physical() is f])
    _attempt(rec, "imag_of_real", lambda: f.imag)
    _attempt(rec, "view_as_real_of_real", lambda: torch.view_as_real(f))
    _attempt(rec, "last_dim", lambda: torch.view_as_complex(torch.zeros(3, 3)))
    _attempt(rec, "last_stride", lambda: torch.view_as_complex(torch.zeros(2, 3).t()))
    _attempt(rec, "even_strides", lambda: torch.view_as_complex(torch.zeros(2, 3)[:, :2]))
    _attempt(rec, "offset", lambda: torch.view_as_complex(torch.zeros(5)[1:].reshape(2, 2)))
    _attempt(rec, "int_tensor", lambda: torch.view_as_complex(torch.zeros(2, 2,
                                                                          dtype=torch.int64)))


@program
def writes_go_through(torch, rec):
    z = torch.zeros(3, dtype=torch.complex64)
    z.real = torch.tensor([1.0, 2.0, 3.0])
    rec("set_real", [z, z._version])
    z.imag.fill_(-1.5)
    rec("fill_imag", [z, z._version])
    v = torch.view_as_real(z)
    v[1, 0] = 7.0
    rec("through_view_as_real", [z, z._version, v._version])
    f = torch.zeros(2, 2)
    c = torch.view_as_complex(f)
    c.mul_(0)
    c += 1j
    rec("through_view_as_complex", [f, f._version, c])
    z.imag = torch.tensor(4.0)
    rec("set_imag_broadcast", z)


@program
def inplace_through_views_records(torch, rec):
    a = _z(torch, Z[:2])
    b = a * 1
    b.imag.mul_(3)
    rec("imag_mul", [b, b.grad_fn.name()])
    b.abs().sum().backward()
    rec("grad_imag_mul", a.grad)
    a2 = _z(torch, Z[:2])
    c = a2 * 1
    v = torch.view_as_real(c)
    v[0, 1] = 5.0
    rec("view_as_real_set", [c, c.grad_fn.name(), v.grad_fn.name()])
    (c * c).abs().sum().backward()
    rec("grad_view_as_real_set", a2.grad)
    a3 = _z(torch, Z[:2])
    d = a3 * 3
    d.real = a3.real * 2
    rec("set_real_from_graph", d)
    d.abs().pow(2).sum().backward()
    rec("grad_set_real", a3.grad)
    a4 = _z(torch, Z[:2])
    e = a4.exp()  # exp saves its output: writing into it breaks the backward, as in PyTorch
    e.imag = a4.real
    _attempt(rec, "saved_output_changed", lambda: e.abs().sum().backward())
    leaf = _z(torch, Z[:2])
    _attempt(rec, "leaf_view", lambda: leaf.real.mul_(2))
    _attempt(rec, "leaf_set", lambda: setattr(leaf, "imag", torch.zeros(2, dtype=torch.float64)))


def _grad_of(torch, f, values=Z):
    x = _z(torch, values)
    f(x).backward()
    return x.grad


LOSSES = {
    "abs": lambda t, x: x.abs().sum(),
    "abs_sq": lambda t, x: (x * x.conj()).real.sum(),
    "angle": lambda t, x: x.angle().sum(),
    "exp_log": lambda t, x: (x.exp() * x.log()).abs().sum(),
    "sqrt": lambda t, x: x.sqrt().imag.sum(),
    "pow": lambda t, x: (x ** 3 + x ** 0.5 + x ** (1 + 1j)).real.sum(),
    "div": lambda t, x: (1 / (x + 2) + x / (x.conj() + 3)).abs().sum(),
    "trig": lambda t, x: (x.sin() * x.cos() + x.tanh() + x.sigmoid()).real.sum(),
    "reciprocal": lambda t, x: x.reciprocal().imag.sum(),
    "sum_mean_prod": lambda t, x: (x.sum() * x.mean() + x.prod()).abs(),
    "cumsum": lambda t, x: x.cumsum(0).abs().sum(),
    "norm": lambda t, x: x.norm() + t.norm(x, 1),
    "vdot": lambda t, x: t.vdot(x, x.exp()).real,
    "sgn": lambda t, x: (x.sgn() * x.exp()).real.sum(),
    "conj": lambda t, x: (x.conj() * x.sin()).imag.sum() + x.conj_physical().real.sum(),
    "matmul": lambda t, x: (x.reshape(2, 2) @ x.reshape(2, 2).conj()).abs().sum(),
    "mv_dot": lambda t, x: (t.dot(x, x) + (x.reshape(2, 2) @ x[:2]).sum()).abs(),
    "real_weights": lambda t, x: (x * t.tensor([1.0, -2.0, 0.5, 3.0],
                                               dtype=t.float64)).abs().sum(),
    "parts": lambda t, x: (t.view_as_real(x) ** 3).sum() + (x.real * x.imag).sum(),
    "complex_of_parts": lambda t, x: t.complex(x.real.exp(), x.imag).abs().sum(),
    "polar_of_parts": lambda t, x: t.polar(x.abs(), x.angle() * 2).real.sum(),
    "index_cat": lambda t, x: t.cat([x[1:], x[:1] * 2j]).abs().pow(2).sum(),
}


@program
def gradients_of_real_losses(torch, rec):
    for name, loss in LOSSES.items():
        _attempt(rec, name, lambda: _grad_of(torch, lambda x: loss(torch, x)))


@program
def gradient_of_a_real_leaf(torch, rec):
    r = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    ((r * (1 + 2j)).exp().imag.sum()).backward()
    rec("through_complex", r.grad)
    r2 = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    (r2.to(torch.complex128) * 1j).abs().sum().backward()
    rec("to_complex", r2.grad)


@program
def backward_of_complex_outputs(torch, rec):
    x = _z(torch, Z)
    y = x.sin() * x
    y.backward(torch.tensor([1 - 2j, 0.5j, 1.0, -1 + 1j], dtype=torch.complex128))
    rec("holomorphic", x.grad)
    x2 = _z(torch, Z)
    (x2.conj() * x2.exp()).backward(torch.tensor([1j, 1.0, 2 - 1j, 0.5],
                                                 dtype=torch.complex128))
    rec("non_holomorphic", x2.grad)
    x3 = _z(torch, Z)
    g, = torch.autograd.grad(x3.abs() * 1j, x3, torch.ones(4, dtype=torch.complex128))
    rec("real_to_complex_output", g)
    _attempt(rec, "implicit", lambda: (x3 * 2).sum().backward())
    x4 = _z(torch, Z)
    _attempt(rec, "real_grad_for_complex",
             lambda: torch.autograd.grad(x4 * 2, x4, torch.ones(4, dtype=torch.float64)))


@program
def second_order(torch, rec):
    x = _z(torch, Z)
    loss = (x * x.exp()).abs().pow(2).sum()
    g, = torch.autograd.grad(loss, x, create_graph=True)
    rec("g", g)
    h, = torch.autograd.grad((g * g.conj()).real.sum(), x)
    rec("h", h)
    x2 = _z(torch, Z)
    y = x2.sin() * x2
    g2, = torch.autograd.grad(y, x2, torch.tensor([1 - 2j, 0.5j, 1.0, 2.0],
                                                  dtype=torch.complex128), create_graph=True)
    h2, = torch.autograd.grad(g2.abs().sum(), x2)
    rec("complex_output", [g2, h2])
    x3 = _z(torch, Z)
    (x3.angle() * x3.abs()).sum().backward(create_graph=True)
    gx = x3.grad
    x3.grad = None
    gx.real.sum().backward()
    rec("backward_create_graph", [gx, x3.grad])


@program
def custom_function(torch, rec):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2 * x.conj()  # PyTorch's convention: grad_out * conj(f'(z))

    x = _z(torch, Z)
    Square.apply(x).abs().sum().backward()
    rec("grad", x.grad)
    rec("gradcheck", torch.autograd.gradcheck(Square.apply, (_z(torch, Z[:2]),)))
    rec("gradgradcheck", torch.autograd.gradgradcheck(Square.apply, (_z(torch, Z[:2]),)))

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 2 * x  # JAX's convention: wrong here

    _attempt(rec, "gradcheck_wrong", lambda: torch.autograd.gradcheck(
        Wrong.apply, (_z(torch, Z[:2]),)))
    _attempt(rec, "gradcheck_wrong_real_output", lambda: torch.autograd.gradcheck(
        lambda x: Wrong.apply(x).abs(), (_z(torch, Z[:2]),)))
    rec("gradcheck_wrong_quiet", torch.autograd.gradcheck(
        Wrong.apply, (_z(torch, Z[:2]),), raise_exception=False))


@program
def gradcheck_complex(torch, rec):
    gc, ggc = torch.autograd.gradcheck, torch.autograd.gradgradcheck
    x = _z(torch, Z[:3])
    # polar at a negative modulus: PyTorch's own derivative disagrees with finite differences
    r = torch.tensor([0.5, 1.5, 1.0], dtype=torch.float64, requires_grad=True)
    rec("real_output", gc(lambda x: (x * x.exp()).abs(), (x,)))
    rec("complex_output", gc(lambda x: x.sin() * x.conj(), (x,)))
    rec("mixed_inputs", gc(lambda x, r: torch.complex(r, r * 2) * x, (x, r)))
    rec("two_outputs", gc(lambda x: (x.exp(), x.abs()), (x,)))
    rec("fast_mode", gc(lambda x: x.sqrt() * x.angle(), (x,), fast_mode=True))
    rec("gradgradcheck", ggc(lambda x: x * x.sin(), (x,)))
    rec("gradgradcheck_real", ggc(lambda x: (x * x.sin()).abs(), (x,)))
    rec("gradgradcheck_mixed", ggc(lambda x, r: torch.polar(r, r) * x, (x, r)))


@program
def random_complex(torch, rec):
    g = torch.Generator().manual_seed(0)
    rec("randn", torch.randn(3, dtype=torch.cfloat, generator=g))
    rec("randn_long", torch.randn(20, dtype=torch.cdouble, generator=g))
    rec("rand", torch.rand(2, 2, dtype=torch.cdouble, generator=g))


REFUSED_CALLS = {
    "max": lambda t, x: x.max(), "max_dim": lambda t, x: x.max(0), "min": lambda t, x: t.min(x),
    "amax": lambda t, x: x.amax(), "argmax": lambda t, x: x.argmax(),
    "sort": lambda t, x: x.sort(), "topk": lambda t, x: x.topk(1),
    "median": lambda t, x: x.median(), "clamp": lambda t, x: x.clamp(0, 1),
    "relu": lambda t, x: t.relu(x), "floor": lambda t, x: x.floor(),
    "round": lambda t, x: x.round(), "lt": lambda t, x: x < x, "ge": lambda t, x: t.ge(x, 1),
    "maximum": lambda t, x: t.maximum(x, x),
    "atan2": lambda t, x: t.atan2(x, x), "remainder": lambda t, x: x % 2,
    "erf": lambda t, x: x.erf(), "softmax": lambda t, x: x.softmax(0),
    "softmax_2d": lambda t, x: x.reshape(2, 2).softmax(0),
    "log_softmax": lambda t, x: t.log_softmax(x, -1), "abs_": lambda t, x: (x * 1).abs_(),
    "signbit": lambda t, x: x.signbit(), "cdist": lambda t, x: t.cdist(x[None], x[None]),
    "float": lambda t, x: float(x[0]), "int": lambda t, x: int(x[0].detach()),
    "view_as_real_of_conj": lambda t, x: t.view_as_real(x.conj()),
}


@program
def what_pytorch_refuses(torch, rec):
    for name, call in REFUSED_CALLS.items():
        _attempt(rec, name, lambda: call(torch, _z(torch, Z)))

    class RealIn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * (1 + 1j)  # a complex gradient for a real input

    r = torch.tensor([1.0, 2.0], requires_grad=True)
    _attempt(rec, "complex_grad_for_real_input", lambda: RealIn.apply(r).sum().backward())


@program
def filling_and_converting(torch, rec):
    g = torch.Generator().manual_seed(3)
    z = torch.zeros(5, dtype=torch.cfloat)
    rec("normal_", [z.normal_(generator=g), z._version])
    rec("normal_args", torch.zeros(3, dtype=torch.cdouble).normal_(1.0, 3.0, generator=g))
    rec("uniform_", torch.zeros(2, 2, dtype=torch.cdouble).uniform_(-1, 2, generator=g))
    rec("converting", [torch.tensor([1.0]).cfloat(), torch.tensor([1.0]).cdouble(),
                       torch.isreal(torch.tensor([1j, 2.0])), torch.tensor([1.0, 2.0]).isreal(),
                       complex(torch.tensor(1 + 2j)), torch.tensor([1 + 2j]).tolist()])


@program
def complex_refusals(torch, rec):
    x = _z(torch, Z)
    _attempt(rec, "sign", lambda: x.sign())
    _attempt(rec, "vdot_2d", lambda: torch.vdot(x.reshape(2, 2), x.reshape(2, 2)))
    _attempt(rec, "vdot_dtypes", lambda: torch.vdot(x, x.to(torch.complex64)))
    rec("real_angle", torch.tensor([1.0, -2.0, 0.0]).angle())
    rec("real_sgn", torch.tensor([1.0, -2.0, 0.0]).sgn())
    rec("parts_of_conj", [x.conj().real, x.conj().imag])
    rec("resolve", [x.conj().is_conj(), x.conj().resolve_conj().is_conj(), x.is_conj(),
                    x.conj().conj().is_conj(), x.is_neg(), x.resolve_neg() is x])


def main(names=()):
    """Record every program, or with `names` only those (the other records are kept)."""
    record_fixtures(FIXTURES, PROGRAMS, names)


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
