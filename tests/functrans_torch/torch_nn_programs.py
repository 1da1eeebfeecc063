"""torch.nn programs run under both PyTorch and functrans.torch, observed as in parity_programs.

PROGRAMS use fixed numbers only (weights are loaded through `load_state_dict`), so every one must
match PyTorch now. SEEDED programs draw their weights after `torch.manual_seed`: they match once
functrans.torch's CPU generator gives PyTorch's stream (see test_nn_parity.py).
The records in torch_nn_fixtures.json were written by running this file under torch==2.13.0:
`python tests/functrans_torch/torch_nn_programs.py`.
"""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict

from parity_programs import _message, observe

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_nn_fixtures.json")
def registries():
    """Two registries, fixed programs and seeded ones, and the decorators that fill them."""
    programs, seeded_programs = {}, {}

    def program(fn):
        programs[fn.__name__] = fn
        return fn

    def seeded(fn):
        seeded_programs[fn.__name__] = fn
        return fn

    return programs, seeded_programs, program, seeded


def write_fixtures(path, programs, seeded_programs):
    """Observe every program under the installed torch and write the records to `path`."""
    import torch
    torch.set_num_threads(1)
    fixtures = {"torch_version": torch.__version__,
                "programs": {name: observe(torch, fn) for name, fn in programs.items()},
                "seeded": {name: observe(torch, fn) for name, fn in seeded_programs.items()}}
    with open(path, "w") as f:
        json.dump(fixtures, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(programs) + len(seeded_programs)} program records to {path}")


PROGRAMS, SEEDED, program, seeded = registries()


def attempt(rec, name, fn):
    """Run fn; record its result, or the error it raised (type and message)."""
    try:
        rec(name, fn())
    except Exception as e:
        rec(name, [type(e).__name__, _message(e)])


def fixed(torch, *shape, dtype=None, scale=1.0):
    """A tensor of the given shape filled with sin(1), sin(2), ... times scale."""
    n = math.prod(shape)
    values = [scale * math.sin(i + 1) for i in range(n)]
    return torch.tensor(values, dtype=dtype or torch.float32).reshape(shape)


def load_fixed(torch, module, scale=0.5):
    """Every entry of module's state_dict replaced by fixed numbers (through load_state_dict)."""
    state = OrderedDict()
    for k, (name, v) in enumerate(module.state_dict().items()):
        state[name] = fixed(torch, *v.shape, dtype=v.dtype, scale=scale) + 0.01 * k
    return module.load_state_dict(state)


def _net(torch):
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
            self.head = nn.Linear(4, 2, bias=False)
            self.scale = nn.Parameter(torch.tensor([1.5, -0.5]))
            self.register_buffer("running", torch.zeros(2))
            self.register_buffer("cache", torch.ones(1), persistent=False)
            self.note = "plain attribute"

        def forward(self, x):
            return self.head(self.body(x)) * self.scale + self.running

    return Net()


# --- Module ----------------------------------------------------------------------------------

@program
def module_traversal(torch, rec):
    net = _net(torch)
    rec("named_parameters", [n for n, _ in net.named_parameters()])
    rec("named_parameters_shallow", [n for n, _ in net.named_parameters(recurse=False)])
    rec("named_parameters_prefix", [n for n, _ in net.named_parameters(prefix="model")])
    rec("named_buffers", [n for n, _ in net.named_buffers()])
    rec("named_modules", [n for n, _ in net.named_modules()])
    rec("module_types", [type(m).__name__ for m in net.modules()])
    rec("named_children", [n for n, _ in net.named_children()])
    rec("parameter_shapes", [list(p.shape) for p in net.parameters()])
    rec("buffers", list(net.buffers()))
    rec("state_dict_keys", list(net.state_dict().keys()))
    rec("state_dict_flags", [[v.requires_grad, v.is_leaf] for v in net.state_dict().values()])
    rec("keep_vars", [v.requires_grad for v in net.state_dict(keep_vars=True).values()])
    rec("repr", repr(net))
    rec("dir", [k for k in ("body", "head", "scale", "running", "cache", "note", "forward")
                if k in dir(net)])
    rec("getattr", [type(net.scale).__name__, type(net.running).__name__, net.note])
    attempt(rec, "missing_attribute", lambda: net.nothing)
    shared = torch.nn.Linear(2, 2)
    seq = torch.nn.Sequential(shared, torch.nn.ReLU(), shared)
    rec("shared_once", [n for n, _ in seq.named_parameters()])
    rec("shared_all", [n for n, _ in seq.named_parameters(remove_duplicate=False)])
    rec("shared_modules", [n for n, _ in seq.named_modules()])
    rec("shared_modules_all", [n for n, _ in seq.named_modules(remove_duplicate=False)])
    rec("shared_state_dict", list(seq.state_dict().keys()))


@program
def module_registration_rules(torch, rec):
    nn = torch.nn
    net = _net(torch)
    net.scale = None  # a parameter slot set to None stays a parameter slot
    rec("after_none", [n for n, _ in net.named_parameters()])
    attempt(rec, "tensor_as_parameter", lambda: setattr(net, "scale", torch.ones(2)))
    attempt(rec, "int_as_module", lambda: setattr(net, "head", 3))
    attempt(rec, "str_as_buffer", lambda: setattr(net, "running", "x"))
    net.running = torch.ones(2)  # a tensor assigned to a buffer's name replaces the buffer
    rec("buffer_replaced", list(net.named_buffers()))
    net.head = nn.Identity()
    rec("module_replaced", [n for n, _ in net.named_modules()])
    net.note = nn.Parameter(torch.zeros(1))  # a plain attribute becomes a parameter
    rec("note_parameter", [n for n, _ in net.named_parameters()])
    del net.note
    rec("after_del", [n for n, _ in net.named_parameters()])
    attempt(rec, "register_dotted", lambda: net.register_parameter("a.b", None))
    attempt(rec, "register_empty", lambda: net.register_buffer("", None))
    attempt(rec, "register_existing", lambda: net.register_parameter("forward", None))
    attempt(rec, "register_non_parameter",
            lambda: net.register_parameter("w", torch.zeros(1)))
    attempt(rec, "register_non_leaf", lambda: net.register_parameter(
        "w", nn.Parameter(torch.ones(1)) * 2))
    attempt(rec, "register_non_tensor_buffer", lambda: net.register_buffer("b", [1.0]))
    attempt(rec, "add_non_module", lambda: net.add_module("m", "no"))
    attempt(rec, "add_dotted_module", lambda: net.add_module("m.n", nn.ReLU()))
    attempt(rec, "add_int_name", lambda: net.add_module(3, nn.ReLU()))
    net.register_module("extra", nn.ReLU())
    rec("registered", [n for n, _ in net.named_children()])

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(torch.ones(1))

    attempt(rec, "before_init", Early)
    attempt(rec, "unexpected_kwarg", lambda: nn.Module(foo=1))
    attempt(rec, "no_forward", lambda: nn.Module()(torch.ones(1)))
    rec("submodule", type(net.get_submodule("body.0")).__name__)
    rec("get_parameter", list(net.get_parameter("body.0.bias").shape))


@program
def state_dict_round_trip(torch, rec):
    net = _net(torch)
    result = load_fixed(torch, net)
    rec("result", repr(result))
    rec("result_fields", [result.missing_keys, result.unexpected_keys])
    rec("state", list(net.state_dict().items()))
    x = fixed(torch, 2, 3)
    rec("forward", net(x))
    other = _net(torch)
    other.load_state_dict(net.state_dict())
    rec("copied_forward", other(x))
    rec("identity_kept", [p is q for p, q in zip(other.parameters(), other.parameters())])
    state = net.state_dict()
    state["body.0.weight"].add_(1.0)  # the detached entries share the parameters' storage
    rec("shares_storage", net.body[0].weight)


@program
def state_dict_errors(torch, rec):
    net = _net(torch)
    state = net.state_dict()
    del state["head.weight"]
    state["body.5.weight"] = torch.zeros(1)
    state["extra"] = torch.zeros(1)
    attempt(rec, "strict", lambda: net.load_state_dict(state))
    result = net.load_state_dict(state, strict=False)
    rec("not_strict", repr(result))
    rec("not_strict_fields", [result.missing_keys, result.unexpected_keys])
    bad = net.state_dict()
    bad["body.0.weight"] = torch.zeros(2, 2)
    attempt(rec, "size_mismatch", lambda: net.load_state_dict(bad))
    bad = net.state_dict()
    bad["scale"] = [1.0, 2.0]
    attempt(rec, "not_a_tensor", lambda: net.load_state_dict(bad))
    attempt(rec, "not_a_mapping", lambda: net.load_state_dict([1, 2]))
    both = net.state_dict()
    del both["scale"]
    both["spare"] = torch.ones(1)
    attempt(rec, "missing_and_unexpected", lambda: net.load_state_dict(both))


@program
def module_modes_and_grads(torch, rec):
    net = _net(torch)
    load_fixed(torch, net)
    rec("training", [m.training for m in net.modules()])
    rec("eval_returns_self", net.eval() is net)
    rec("eval", [m.training for m in net.modules()])
    net.train()
    rec("train", [m.training for m in net.modules()])
    attempt(rec, "train_not_bool", lambda: net.train("yes"))
    out = net(fixed(torch, 2, 3)).sum()
    out.backward()
    rec("grads", [p.grad for p in net.parameters()])
    net.zero_grad(set_to_none=False)
    rec("zeroed", [p.grad for p in net.parameters()])
    net.zero_grad()
    rec("none", [p.grad is None for p in net.parameters()])
    net.requires_grad_(False)
    rec("frozen", [p.requires_grad for p in net.parameters()])
    rec("frozen_output", net(fixed(torch, 1, 3)))
    net.requires_grad_()
    visited = []
    net.apply(lambda m: visited.append(type(m).__name__))
    rec("apply_order", visited)


@program
def module_dtype_conversion(torch, rec):
    net = _net(torch)
    load_fixed(torch, net)
    params = list(net.parameters())
    net(fixed(torch, 1, 3)).sum().backward()
    rec("double_returns_self", net.double() is net)
    rec("same_objects", [p is q for p, q in zip(params, net.parameters())])
    rec("double", [str(v.dtype) for v in net.state_dict().values()])
    rec("grad_dtypes", [str(p.grad.dtype) for p in net.parameters()])
    rec("double_forward", net(fixed(torch, 1, 3, dtype=torch.float64)))
    net.float()
    rec("float", [str(v.dtype) for v in net.state_dict().values()])
    net.to(torch.float64)
    rec("to_dtype", [str(v.dtype) for v in net.state_dict().values()])
    net.to("cpu", dtype=torch.float32)
    rec("to_device_dtype", [str(v.dtype) for v in net.state_dict().values()])
    net.to(torch.zeros(1, dtype=torch.float64))
    rec("to_tensor", [str(v.dtype) for v in net.state_dict().values()])
    attempt(rec, "to_int", lambda: net.to(torch.int64))
    rec("cpu", net.cpu() is net)
    lin = torch.nn.Linear(2, 2, dtype=torch.float64)
    rec("linear_dtype", [str(p.dtype) for p in lin.parameters()])


@program
def forward_hooks(torch, rec):
    nn = torch.nn
    lin = nn.Linear(2, 2)
    load_fixed(torch, lin)
    seen = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    h2 = lin.register_forward_hook(lambda m, args, out: out + 1)
    h3 = lin.register_forward_hook(lambda m, args, out: seen.append(args[0]))
    h4 = lin.register_forward_pre_hook(lambda m, args: seen.append("first"), prepend=True)
    x = torch.tensor([[1.0, -1.0]])
    rec("hooked", lin(x))
    rec("seen", seen)
    h1.remove(), h2.remove(), h3.remove(), h4.remove()
    rec("unhooked", lin(x))

    def kw_pre(m, args, kwargs):
        return (args[0] + 1,), kwargs

    def kw_post(m, args, kwargs, out):
        return out * 10

    with lin.register_forward_pre_hook(kw_pre, with_kwargs=True), \
            lin.register_forward_hook(kw_post, with_kwargs=True):
        rec("kwargs_hooked", lin(x))
    rec("context_removed", lin(x))


# --- containers ------------------------------------------------------------------------------

@program
def sequential_container(torch, rec):
    nn = torch.nn
    seq = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    rec("len", len(seq))
    rec("item", repr(seq[0]))
    rec("negative", repr(seq[-1]))
    rec("slice", repr(seq[1:]))
    rec("slice_type", type(seq[:2]).__name__)
    attempt(rec, "out_of_range", lambda: seq[3])
    rec("iter", [type(m).__name__ for m in seq])
    seq.append(nn.ReLU())
    seq.insert(1, nn.Identity())
    seq.extend([nn.Sigmoid()])
    rec("grown", repr(seq))
    del seq[1]
    rec("renumbered", [n for n, _ in seq.named_children()])
    seq[0] = nn.Linear(2, 3, bias=False)
    rec("replaced", repr(seq[0]))
    named = nn.Sequential(OrderedDict([("inp", nn.Linear(2, 4)), ("act", nn.GELU()),
                                       ("out", nn.Linear(4, 1))]))
    rec("named", repr(named))
    rec("named_keys", list(named.state_dict().keys()))
    rec("named_attribute", repr(named.act))
    load_fixed(torch, named)
    rec("named_forward", named(fixed(torch, 3, 2)))
    rec("empty", repr(nn.Sequential()))
    rec("nested", repr(nn.Sequential(nn.Sequential(nn.ReLU()), nn.Tanh())))


@program
def module_list_and_dict(torch, rec):
    nn = torch.nn
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    layers.append(nn.Tanh())
    rec("repr", repr(layers))
    rec("len", len(layers))
    rec("slice", repr(layers[1:3]))
    rec("keys", list(layers.state_dict().keys()))
    layers.insert(0, nn.ReLU())
    rec("inserted", [type(m).__name__ for m in layers])
    del layers[0]
    rec("deleted", [n for n, _ in layers.named_children()])
    layers.extend([nn.Sigmoid(), nn.Sigmoid()])
    rec("extended", repr(layers))
    attempt(rec, "extend_non_iterable", lambda: layers.extend(3))
    attempt(rec, "call", lambda: layers(torch.ones(1)))
    rec("empty", repr(nn.ModuleList()))
    d = nn.ModuleDict({"b": nn.Linear(1, 1), "a": nn.ReLU()})
    d["c"] = nn.Tanh()
    rec("dict_repr", repr(d))
    rec("dict_keys", list(d.keys()))
    rec("dict_state", list(d.state_dict().keys()))
    rec("dict_contains", ["a" in d, "z" in d])
    rec("dict_pop", repr(d.pop("a")))
    d.update([("e", nn.ELU())])
    rec("dict_updated", list(d))
    attempt(rec, "dict_bad_update", lambda: d.update([("x",)]))


@program
def parameter_containers(torch, rec):
    nn = torch.nn
    plist = nn.ParameterList([nn.Parameter(torch.ones(2)), torch.zeros(3, 2)])
    plist.append(torch.ones(1, dtype=torch.float64))
    rec("list_repr", repr(plist))
    rec("list_names", [n for n, _ in plist.named_parameters()])
    rec("list_types", [type(p).__name__ for p in plist])
    rec("list_len", len(plist))
    rec("list_slice", repr(plist[1:]))
    pdict = nn.ParameterDict({"b": torch.ones(2), "a": nn.Parameter(torch.zeros(1))})
    pdict["c"] = torch.ones(2, 2)
    rec("dict_repr", repr(pdict))
    rec("dict_names", [n for n, _ in pdict.named_parameters()])
    rec("dict_keys", list(pdict.keys()))

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([nn.Parameter(torch.ones(1)) for _ in range(2)])

    rec("nested_keys", list(Holder().state_dict().keys()))


# --- parameters and layers -------------------------------------------------------------------

@program
def parameter_behaviour(torch, rec):
    nn = torch.nn
    t = torch.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    rec("repr", repr(p))
    rec("flags", [p.requires_grad, p.is_leaf, p.grad_fn is None, isinstance(p, torch.Tensor)])
    t.add_(1.0)  # the parameter holds t's storage
    rec("shares", p)
    rec("frozen", repr(nn.Parameter(torch.ones(1), requires_grad=False)))
    rec("empty", repr(nn.Parameter()))
    q = p * 2
    rec("op_type", type(q).__name__)
    attempt(rec, "integer", lambda: nn.Parameter(torch.tensor([1, 2])))
    import copy
    c = copy.deepcopy(p)
    rec("deepcopy", [type(c).__name__, c is p, c.requires_grad])


@program
def linear_layers(torch, rec):
    nn = torch.nn
    lin = nn.Linear(3, 2)
    rec("repr", repr(lin))
    rec("repr_no_bias", repr(nn.Linear(3, 2, bias=False)))
    rec("bias_none", nn.Linear(3, 2, bias=False).bias is None)
    rec("shapes", [list(p.shape) for p in lin.parameters()])
    load_fixed(torch, lin)
    x = fixed(torch, 4, 3, scale=2.0).requires_grad_()
    y = lin(x)
    rec("forward", y)
    y.pow(2).sum().backward()
    rec("grads", [lin.weight.grad, lin.bias.grad, x.grad])
    rec("batched", lin(fixed(torch, 2, 2, 3)))
    rec("vector", lin(fixed(torch, 3)))
    rec("identity", nn.Identity(54, unused="x")(x) is x)
    rec("flatten", nn.Flatten()(fixed(torch, 2, 3, 4)).shape)
    rec("flatten_range", nn.Flatten(0, 1)(fixed(torch, 2, 3, 4)).shape)
    rec("unflatten", nn.Unflatten(1, (2, 2))(fixed(torch, 3, 4)).shape)
    rec("reprs", [repr(nn.Flatten()), repr(nn.Unflatten(1, (2, 2))), repr(nn.Identity())])
    bil = nn.Bilinear(3, 2, 4).double()
    load_fixed(torch, bil)
    a = fixed(torch, 5, 3, dtype=torch.float64).requires_grad_()
    b = fixed(torch, 5, 2, dtype=torch.float64, scale=-2.0).requires_grad_()
    y = bil(a, b)
    (y * fixed(torch, 5, 4, dtype=torch.float64)).sum().backward()
    rec("bilinear", [repr(bil), y, a.grad, b.grad, bil.weight.grad, bil.bias.grad])
    rec("bilinear_unbatched", bil(a[0], b[0]))
    rec("bilinear_no_bias", repr(nn.Bilinear(1, 2, 3, bias=False)))


_ACTIVATIONS = [
    ("Tanh", ()), ("ReLU", ()), ("Sigmoid", ()), ("GELU", ()), ("GELU", ("tanh",)),
    ("SiLU", ()), ("Softplus", ()), ("Softplus", (2.0, 1.0)), ("ELU", ()), ("ELU", (0.5,)),
    ("CELU", (2.0,)), ("SELU", ()), ("LeakyReLU", ()), ("LeakyReLU", (0.2,)), ("Mish", ()),
    ("Hardtanh", ()), ("Hardtanh", (-2.0, 0.5)), ("ReLU6", ()), ("Softsign", ()),
    ("Tanhshrink", ()), ("LogSigmoid", ()), ("Hardswish", ()), ("Hardsigmoid", ()),
    ("Softmax", (1,)), ("LogSoftmax", (1,)), ("Softmax", (0,)),
]


@program
def activation_modules(torch, rec):
    nn = torch.nn
    # float64: a saturated activation's float32 derivative (1 - tanh^2 near 1) keeps few
    # correct digits in either library
    base = fixed(torch, 3, 4, scale=4.0, dtype=torch.float64)
    for name, args in _ACTIVATIONS:
        module = getattr(nn, name)(*args)
        x = base.clone().requires_grad_()
        y = module(x)
        (y * fixed(torch, 3, 4, dtype=torch.float64)).sum().backward()
        key = name + "".join(f"_{a}" for a in args)
        rec(key, [repr(module), y, x.grad])
    rec("inplace_reprs", [repr(nn.ReLU(inplace=True)), repr(nn.ELU(inplace=True)),
                          repr(nn.LeakyReLU(0.1, True)), repr(nn.ReLU6(True)),
                          repr(nn.Hardtanh(inplace=True)), repr(nn.SiLU(True))])
    x = base.clone()
    y = nn.ReLU(inplace=True)(x)
    rec("inplace", [y is x, x])
    x = base.clone()
    nn.LeakyReLU(0.1, inplace=True)(x)
    rec("inplace_leaky", x)
    attempt(rec, "hardtanh_bounds", lambda: nn.Hardtanh(1.0, -1.0))


_LOSS_INPUTS = {
    "MSELoss": "real", "L1Loss": "real", "HuberLoss": "real", "SmoothL1Loss": "real",
    "BCELoss": "prob", "BCEWithLogitsLoss": "logit",
}


@program
def loss_modules(torch, rec):
    nn = torch.nn
    f64 = torch.float64  # float32 derivatives near saturation keep few digits in either library
    target_real = fixed(torch, 3, 4, scale=1.5, dtype=f64)
    target_prob = (fixed(torch, 3, 4, dtype=f64) + 1) / 2
    for name, kind in _LOSS_INPUTS.items():
        for reduction in ("mean", "sum", "none"):
            extra = {"delta": 0.7} if name == "HuberLoss" else (
                {"beta": 0.5} if name == "SmoothL1Loss" else {})
            loss_fn = getattr(nn, name)(reduction=reduction, **extra)
            raw = fixed(torch, 3, 4, scale=2.0, dtype=f64) + 0.3
            x = (torch.sigmoid(raw) if kind == "prob" else raw).detach().requires_grad_()
            t = target_real if kind == "real" else target_prob
            loss = loss_fn(x, t)
            (loss * fixed(torch, *loss.shape, dtype=f64)).sum().backward()
            rec(f"{name}_{reduction}", [repr(loss_fn), loss, x.grad])
    x = fixed(torch, 3, 4, scale=2.0, dtype=f64).requires_grad_()
    pos = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 2.0, 0.5, 3.0], dtype=f64))
    loss = pos(x, target_prob)
    loss.backward()
    rec("pos_weight", [loss, x.grad, [n for n, _ in pos.named_buffers()]])
    rec("smooth_beta_zero", nn.SmoothL1Loss(beta=0.0)(x, target_real))
    rec("reduction_legacy", nn.MSELoss(size_average=False).reduction)
    attempt(rec, "bad_reduction", lambda: nn.MSELoss(reduction="avg")(x, target_real))


@program
def classification_losses(torch, rec):
    nn = torch.nn
    logits = fixed(torch, 4, 3, scale=3.0)
    target = torch.tensor([0, 2, 1, 2])
    probs = torch.softmax(fixed(torch, 4, 3, scale=-1.0), 1)
    weight = torch.tensor([0.5, 2.0, 1.0])
    cases = {
        "plain": {}, "weight": {"weight": weight}, "ignore": {"ignore_index": 2},
        "smooth": {"label_smoothing": 0.1},
        "smooth_weight_ignore": {"label_smoothing": 0.2, "weight": weight, "ignore_index": 0},
    }
    for case, kwargs in cases.items():
        for reduction in ("mean", "sum", "none"):
            loss_fn = nn.CrossEntropyLoss(reduction=reduction, **kwargs)
            x = logits.clone().requires_grad_()
            loss = loss_fn(x, target)
            (loss * fixed(torch, *loss.shape)).sum().backward()
            rec(f"ce_{case}_{reduction}", [loss, x.grad])
    for case, kwargs in {"plain": {}, "smooth": {"label_smoothing": 0.1},
                         "weight": {"weight": weight}}.items():
        x = logits.clone().requires_grad_()
        loss = nn.CrossEntropyLoss(**kwargs)(x, probs)
        loss.backward()
        rec(f"ce_probs_{case}", [loss, x.grad])
    x = torch.log_softmax(logits, 1).detach().requires_grad_()
    loss = nn.NLLLoss(weight=weight)(x, target)
    loss.backward()
    rec("nll", [loss, x.grad])
    rec("nll_ignore", nn.NLLLoss(ignore_index=1, reduction="sum")(x, target))
    rec("buffers", [n for n, _ in nn.CrossEntropyLoss(weight=weight).named_buffers()])
    rec("repr", [repr(nn.CrossEntropyLoss()), repr(nn.NLLLoss())])


# --- init and utils --------------------------------------------------------------------------

@program
def deterministic_init(torch, rec):
    init = torch.nn.init
    for name in ("linear", "conv2d", "sigmoid", "tanh", "relu", "selu"):
        rec(f"gain_{name}", init.calculate_gain(name))
    rec("gain_leaky", [init.calculate_gain("leaky_relu"), init.calculate_gain("leaky_relu", 0.2),
                       init.calculate_gain("leaky_relu", math.sqrt(5))])
    attempt(rec, "gain_bad", lambda: init.calculate_gain("softmax"))
    attempt(rec, "gain_bad_param", lambda: init.calculate_gain("leaky_relu", "x"))
    for shape in ((3, 4), (5, 2, 3), (2, 3, 4, 5)):
        rec(f"fans_{shape}", list(init._calculate_fan_in_and_fan_out(torch.empty(shape))))
    attempt(rec, "fans_1d", lambda: init._calculate_fan_in_and_fan_out(torch.empty(3)))
    w = torch.empty(3, 5)
    rec("eye", init.eye_(w))
    rec("eye_tall", init.eye_(torch.empty(4, 2)))
    attempt(rec, "eye_3d", lambda: init.eye_(torch.empty(2, 2, 2)))
    rec("zeros", init.zeros_(torch.empty(2, 2)))
    rec("ones", init.ones_(torch.empty(2, 2)))
    p = torch.nn.Parameter(torch.empty(2, 3))
    rec("constant_param", init.constant_(p, 0.25))
    attempt(rec, "kaiming_mode", lambda: init.kaiming_uniform_(torch.empty(2, 2), mode="fan"))
    rec("kaiming_empty", init.kaiming_uniform_(torch.empty(0, 3)))
    attempt(rec, "orthogonal_1d", lambda: init.orthogonal_(torch.empty(3)))


@program
def gradient_utils(torch, rec):
    nn = torch.nn
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    load_fixed(torch, net)
    x = fixed(torch, 5, 3, dtype=torch.float64)

    def fresh_grads():
        net.zero_grad()
        (net(x) ** 2).sum().backward()
        return [p.grad.clone() for p in net.parameters()]

    rec("grads", fresh_grads())
    for norm_type in (2.0, 1, float("inf"), 3.0):
        fresh_grads()
        total = nn.utils.clip_grad_norm_(net.parameters(), 0.5, norm_type=norm_type)
        rec(f"clip_norm_{norm_type}", [total, [p.grad for p in net.parameters()]])
    fresh_grads()
    total = nn.utils.clip_grad_norm_(net.parameters(), 100.0)
    rec("no_clip", [total, [p.grad for p in net.parameters()]])
    fresh_grads()
    nn.utils.clip_grad_value_(net.parameters(), 0.1)
    rec("clip_value", [p.grad for p in net.parameters()])
    single = nn.Parameter(torch.tensor([3.0, 4.0]))
    single.grad = torch.tensor([3.0, 4.0])  # float32: 5 and its clipping are exact
    rec("single_tensor", [nn.utils.clip_grad_norm_(single, 1.0), single.grad])
    bad = nn.Parameter(torch.tensor([1.0]))
    bad.grad = torch.tensor([float("inf")])
    attempt(rec, "nonfinite", lambda: nn.utils.clip_grad_norm_([bad], 1.0,
                                                               error_if_nonfinite=True))
    vec = nn.utils.parameters_to_vector(net.parameters())
    rec("to_vector", vec)
    nn.utils.vector_to_parameters(vec.detach() * 2, net.parameters())
    rec("from_vector", [p for p in net.parameters()])
    attempt(rec, "from_list", lambda: nn.utils.vector_to_parameters([1.0], net.parameters()))


# --- a PINN ----------------------------------------------------------------------------------

def pinn_residual(torch, net, x, t, nu=0.01 / math.pi):
    """Burgers' residual u_t + u u_x - nu u_xx at (x, t), by autograd.grad(create_graph=True)."""
    u = net(torch.cat([x, t], dim=1))
    ones = torch.ones_like(u)
    u_x, u_t = torch.autograd.grad(u, [x, t], grad_outputs=ones, create_graph=True)
    u_xx, = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)
    return u, u_x, u_t, u_xx, u_t + u * u_x - nu * u_xx


def pinn_net(torch, width=20, depth=3):
    nn = torch.nn
    layers = [nn.Linear(2, width), nn.Tanh()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.Tanh()]
    return nn.Sequential(*layers, nn.Linear(width, 1))


def _pinn_burgers(torch, rec, dtype):
    for dtype in (dtype,):
        net = pinn_net(torch).to(dtype)
        load_fixed(torch, net, scale=0.4)
        x = fixed(torch, 8, 1, dtype=dtype).requires_grad_()
        t = (fixed(torch, 8, 1, dtype=dtype, scale=-0.5) + 0.5).requires_grad_()
        u, u_x, u_t, u_xx, f = pinn_residual(torch, net, x, t)
        loss = (f ** 2).mean() + ((u - torch.sin(math.pi * x)) ** 2).mean()
        loss.backward()
        name = str(dtype).split(".")[-1]
        rec(f"derivatives_{name}", [u, u_x, u_t, u_xx])
        rec(f"loss_{name}", loss)
        rec(f"param_grads_{name}", [p.grad for p in net.parameters()])
        rec(f"input_grads_{name}", [x.grad, t.grad])


@program
def pinn_burgers_float64(torch, rec):
    _pinn_burgers(torch, rec, torch.float64)


@program
def pinn_burgers_float32(torch, rec):
    _pinn_burgers(torch, rec, torch.float32)


# float32 programs whose derivatives sum and cancel: PyTorch's kernels and numpy round the
# sums differently, so values agree to float32 rounding of the summands, not of the result
TOLERANCES = {"pinn_burgers_float32": 1e-3, "pinn_burgers_float64": 1e-10}


# --- seeded: PyTorch's values once the generator is PyTorch's ---------------------------------

@seeded
def seeded_layers(torch, rec):
    for seed in (0, 1, 1234):
        torch.manual_seed(seed)
        net = pinn_net(torch, width=8, depth=2)
        rec(f"pinn_{seed}", list(net.state_dict().items()))
        rec(f"linear64_{seed}",
            list(torch.nn.Linear(3, 5, dtype=torch.float64).state_dict().items()))


@seeded
def seeded_init(torch, rec):
    init = torch.nn.init
    for seed in (0, 7):
        for name, fn in (("uniform", lambda w: init.uniform_(w, -0.5, 2.0)),
                         ("normal", lambda w: init.normal_(w, 1.0, 0.5)),
                         ("xavier_uniform", lambda w: init.xavier_uniform_(w, gain=2.0)),
                         ("xavier_normal", init.xavier_normal_),
                         ("kaiming_uniform", lambda w: init.kaiming_uniform_(
                             w, nonlinearity="relu")),
                         ("kaiming_normal", lambda w: init.kaiming_normal_(w, mode="fan_out")),
                         ("trunc_normal", init.trunc_normal_),
                         ("trunc_normal_narrow", lambda w: init.trunc_normal_(w, 0.0, 1.0,
                                                                              -0.1, 0.2)),
                         ("orthogonal", init.orthogonal_),
                         ("orthogonal_wide", lambda w: init.orthogonal_(w.t(), gain=1.5))):
            torch.manual_seed(seed)
            rec(f"{name}_{seed}", fn(torch.empty(6, 4)))


@program
def inplace_activation_functions(torch, rec):
    """F.relu_, F.elu_, ... write into their input and return it; values and the gradient
    through them (their node names, EluBackward1 and the like, are left out: the shim records
    the out-of-place node)."""
    F = torch.nn.functional
    for name, args in (("relu_", ()), ("elu_", (0.5,)), ("celu_", (2.0,)), ("selu_", ()),
                       ("leaky_relu_", (0.1,)), ("hardtanh_", (-0.5, 1.5))):
        x = torch.tensor([-1.5, -0.2, 0.3, 2.0], dtype=torch.float64, requires_grad=True)
        y = x * 2
        z = getattr(F, name)(y, *args)
        z.sum().backward()
        rec(name, [z is y, y.detach(), x.grad])


@program
def layer_norm_softmin_threshold_normalize_one_hot(torch, rec):
    """F.layer_norm and nn.LayerNorm (with and without the affine parameters), F.softmin and
    nn.Softmin, F.threshold and nn.Threshold, F.normalize, F.one_hot: values, node names,
    first and second derivatives, module reprs and state, and the refusals."""
    F = torch.nn.functional
    x = torch.tensor([[-1.5, -0.2, 0.3], [2.0, 0.7, -0.4]], dtype=torch.float64,
                     requires_grad=True)
    w = torch.tensor([1.5, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
    weights = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    for name, fn in (("layer_norm", lambda: F.layer_norm(x, (3,))),
                     ("layer_norm_affine", lambda: F.layer_norm(x, [3], w, b)),
                     ("layer_norm_all", lambda: F.layer_norm(x, (2, 3), eps=1e-3)),
                     ("layer_norm_weight", lambda: F.layer_norm(x, (3,), weight=w)),
                     ("softmin", lambda: F.softmin(x, 1)),
                     ("threshold", lambda: F.threshold(x, 0.1, 5.0)),
                     ("normalize", lambda: F.normalize(x)),
                     ("normalize_p1_dim0", lambda: F.normalize(x, p=1.0, dim=0))):
        y = fn()
        g = torch.autograd.grad((y * weights).sum(), [x, w, b], allow_unused=True,
                                create_graph=True)
        # the gradients' own nodes are left out: PyTorch's double-backward nodes
        # (NativeLayerNormBackwardBackward0) are the shim's derivative program's last op
        rec(name, [y, y.grad_fn, [None if t is None else t.detach() for t in g]])
        if name != "threshold":  # PyTorch's threshold gradient requires grad; its value is 0
            rec(f"{name} second", torch.autograd.grad(g[0].pow(2).sum(), x)[0])
    ln = torch.nn.LayerNorm(3)
    rec("LayerNorm", [repr(ln), list(ln.state_dict().items()), ln(x.detach().float())])
    attempt(rec, "LayerNorm float64 input", lambda: ln(x.detach()))
    ln2 = torch.nn.LayerNorm([2, 3], eps=1e-3, elementwise_affine=False)
    rec("LayerNorm no affine", [repr(ln2), list(ln2.state_dict().items()),
                                ln2(x.detach())])
    ln3 = torch.nn.LayerNorm(3, bias=False, dtype=torch.float64)
    rec("LayerNorm no bias", [repr(ln3), list(ln3.state_dict().items()), ln3(x.detach())])
    rec("Softmin", [repr(torch.nn.Softmin(1)), torch.nn.Softmin(dim=0)(x.detach())])
    th = torch.nn.Threshold(0.1, 20.0)
    rec("Threshold", [repr(th), repr(torch.nn.Threshold(0.1, 2, True)), th(x.detach())])
    y = x.detach() * 1
    rec("threshold_", [F.threshold_(y, 0.0, -1.0) is y, y])
    rec("one_hot", [F.one_hot(torch.tensor([0, 2, 1])),
                    F.one_hot(torch.tensor([[1], [0]]), 4)])
    attempt(rec, "one_hot too small", lambda: F.one_hot(torch.tensor([0, 3]), 2))
    attempt(rec, "one_hot negative", lambda: F.one_hot(torch.tensor([-1])))
    attempt(rec, "one_hot float", lambda: F.one_hot(torch.tensor([1.0])))
    attempt(rec, "layer_norm shape", lambda: F.layer_norm(x, (2,)))


@seeded
def seeded_dropout(torch, rec):
    """F.dropout and nn.Dropout: the mask from PyTorch's generator, the gradient through it,
    p = 0 and evaluation passing the input itself, p = 1, in place, and the refusals."""
    F = torch.nn.functional
    torch.manual_seed(3)
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).requires_grad_()
    y = F.dropout(x, 0.3)
    y.sum().backward()
    rec("dropout", [y, y.grad_fn, x.grad])
    m = torch.nn.Dropout(0.5)
    z = torch.ones(2, 5, dtype=torch.float64)
    rec("module", [repr(m), m(z), m(z)])
    m.eval()
    rec("eval", [m(z) is z, F.dropout(z, 0.0) is z, F.dropout(z, 0.5, training=False) is z])
    rec("p=1", F.dropout(z, 1.0))
    w = torch.ones(6)
    rec("inplace", [F.dropout(w, 0.5, inplace=True) is w, w])
    attempt(rec, "p=1.5", lambda: F.dropout(z, 1.5))
    attempt(rec, "module p=-0.1", lambda: torch.nn.Dropout(-0.1))


def main():
    write_fixtures(FIXTURES, PROGRAMS, SEEDED)


if __name__ == "__main__":
    main()
