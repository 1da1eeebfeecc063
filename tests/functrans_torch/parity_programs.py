"""Programs run under both PyTorch and functrans.torch, and what they observably do.

Each program takes the torch module and a recorder `rec(name, value)`; `observe` runs it and
returns a JSON-able record of everything recorded (tensor values, dtypes, shapes, flags,
grad_fn names), the warnings raised and the error the program ended with, if any. The parity
tests compare functrans.torch's record with PyTorch's: live when torch is installed, and always
with the records in parity_fixtures.json (written by running this file under torch==2.13.0:
`python tests/functrans_torch/parity_programs.py`, or
`python tests/functrans_torch/parity_programs.py NAME...` to record only the programs named).
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "parity_fixtures.json")
PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


# --- observing -------------------------------------------------------------------------------

def _is_tensor(torch, x):
    return isinstance(x, torch.Tensor)


def describe(torch, x):
    """A JSON-able description of a recorded value."""
    if _is_tensor(torch, x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn = x.grad_fn
        return {"tensor": x.detach().tolist(), "dtype": str(x.dtype), "shape": list(x.shape),
                "requires_grad": x.requires_grad, "is_leaf": x.is_leaf,
                "grad_fn": None if fn is None else type(fn).__name__}
    if isinstance(x, tuple | list):
        return [describe(torch, y) for y in x]
    if x is None or isinstance(x, bool | int | str):
        return x
    if isinstance(x, float):
        return {"float": x}
    if hasattr(x, "name") and callable(getattr(x, "name")):  # a grad_fn node
        return {"node": type(x).__name__}
    return {"repr": repr(x)}


_TRIGGERED = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?\s*$", re.S)


def _message(text):
    return _TRIGGERED.sub("", str(text)).strip()


def observe(torch, fn) -> dict:
    record = {}

    def rec(name, value):
        record[name] = describe(torch, value)

    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn(torch, rec)
        except Exception as e:  # the program's final error is part of what it does
            error = [type(e).__name__, _message(e)]
    warns = [[w.category.__name__, _message(w.message)] for w in caught
             if w.category in (UserWarning, RuntimeWarning)]
    return {"values": record, "warnings": warns, "error": error}


def _close(a, b, path, problems, rtol):
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            problems.append(f"{path}: keys {sorted(a)} != {sorted(b)}")
            return
        for k in a:
            _close(a[k], b[k], f"{path}.{k}", problems, rtol)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            problems.append(f"{path}: length {len(a)} != {len(b)}: {a} vs {b}")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]", problems, rtol)
        return
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
            problems.append(f"{path}: {a!r} != {b!r}")
            return
        if math.isnan(a) and math.isnan(b):
            return
        if not math.isclose(a, b, rel_tol=rtol, abs_tol=rtol * 1e-3):
            problems.append(f"{path}: {a!r} != {b!r}")
        return
    if a != b:
        problems.append(f"{path}: {a!r} != {b!r}")


# PyTorch gives these once per process (TORCH_WARN_ONCE): whether a live run shows them depends
# on what ran before in the process
ONCE_WARNINGS = ("Using backward() with create_graph=True",
                 "Converting a tensor with requires_grad=True to a scalar",
                 "The use of `x.T` on tensors of dimension other than 2",
                 "Tensor.T is deprecated on 0-D tensors",
                 "torch.meshgrid: in an upcoming release")


def _without_once(obs):
    return {**obs, "warnings": [w for w in obs["warnings"]
                                if not w[1].startswith(ONCE_WARNINGS)]}


def differences(got: dict, want: dict, rtol=2e-6, once_warnings=True) -> list[str]:
    """What differs between two observations (floats compared to `rtol`); with
    `once_warnings=False`, PyTorch's once-per-process warnings are left out."""
    if not once_warnings:
        got, want = _without_once(got), _without_once(want)
    problems = []
    _close(got, want, "", problems, rtol)
    return problems


# --- the programs ----------------------------------------------------------------------------
# Inputs are fixed numbers (random tensors have their own parity tests: test_generator.py).

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
def setitem_leaf_view_message(torch, rec):
    a = torch.tensor([1., 2.], requires_grad=True)
    a[0] = 5.


@program
def leaf_slice_inplace_message(torch, rec):
    a = torch.tensor([1., 2.], requires_grad=True)
    a[1:].mul_(2)


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


def main(names=()):
    """Record every program, or with `names` only those (the other records are kept)."""
    import torch
    torch.set_num_threads(1)
    if names:
        unknown = sorted(set(names) - set(PROGRAMS))
        if unknown:
            raise SystemExit(f"no such programs: {unknown}")
        with open(FIXTURES) as f:
            fixtures = json.load(f)
        if fixtures["torch_version"] != torch.__version__:
            raise SystemExit(f"fixtures come from torch {fixtures['torch_version']}, this is "
                             f"{torch.__version__}: re-record them all")
        for name in names:
            fixtures["programs"][name] = observe(torch, PROGRAMS[name])
    else:
        fixtures = {"torch_version": torch.__version__,
                    "programs": {name: observe(torch, fn) for name, fn in PROGRAMS.items()}}
    with open(FIXTURES, "w") as f:
        json.dump(fixtures, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(names or PROGRAMS)} program records to {FIXTURES}")


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
