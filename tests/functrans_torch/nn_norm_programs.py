"""torch.nn normalisation and lookup programs (batch_norm, group_norm, instance_norm, rms_norm,
embedding, prelu and their modules) run under both PyTorch and functrans.torch, observed as in
parity_programs: values, gradients of the input and the parameters, running statistics after a
few training steps, evaluation outputs, grad_fn names, state_dict keys, reprs and errors.

PROGRAMS use fixed numbers only (weights loaded through `load_state_dict`); SEEDED programs draw
their weights after `torch.manual_seed`. The records in nn_norm_fixtures.json were written by
running this file under torch==2.13.0: `python tests/functrans_torch/nn_norm_programs.py`.
"""

from __future__ import annotations

import math
import os

from torch_nn_programs import attempt, fixed, load_fixed, registries, write_fixtures

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_norm_fixtures.json")
PROGRAMS, SEEDED, program, seeded = registries()
TOLERANCES = {"batchnorm_float32": 1e-4}


def _weights(torch, shape):
    """Fixed weights for a loss sum(y * weights): a pattern unrelated to `fixed`'s sines (a
    loss weighted by the input's own pattern has a zero input gradient under normalisation)."""
    n = math.prod(shape)
    return ((torch.arange(n, dtype=torch.float64) * 7 % 11 - 5) / 4).reshape(shape)


def _grads(torch, y, inputs):
    """The gradients of sum(y * weights) with respect to inputs (None where unused)."""
    loss = (y * _weights(torch, y.shape)).sum()
    return list(torch.autograd.grad(loss, inputs, allow_unused=True))


# --- batch normalisation -----------------------------------------------------------------

@program
def batch_norm_functional(torch, rec):
    """F.batch_norm in training (batch statistics; running statistics moved with the unbiased
    variance, untouched versions) and in evaluation (running statistics), with and without
    weight and bias: values, node names, first and second derivatives, and the refusals."""
    F = torch.nn.functional
    x = fixed(torch, 4, 3, 2, dtype=torch.float64, scale=2.0).requires_grad_()
    w = torch.tensor([1.5, -0.5, 2.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
    rm = torch.tensor([0.5, -0.2, 0.1], dtype=torch.float64)
    rv = torch.tensor([1.5, 0.7, 2.0], dtype=torch.float64)
    for name, fn in (("train", lambda: F.batch_norm(x, rm, rv, w, b, True, 0.3, 1e-3)),
                     ("train no stats", lambda: F.batch_norm(x, None, None, w, b, True)),
                     ("train weight only", lambda: F.batch_norm(x, rm, rv, w, training=True)),
                     ("eval", lambda: F.batch_norm(x, rm, rv, w, b)),
                     ("eval plain", lambda: F.batch_norm(x, rm, rv, eps=0.1))):
        y = fn()
        g = torch.autograd.grad((y * _weights(torch, y.shape)).sum(), [x, w, b],
                                allow_unused=True, create_graph=True)
        rec(name, [y, y.grad_fn, [None if t is None else t.detach() for t in g],
                   rm, rv, rm._version, rv._version])
        if name != "eval plain":  # PyTorch's input gradient there is constant, yet requires
            # grad (its backward saves the input); the shim's does not
            rec(f"{name} second", torch.autograd.grad(g[0].pow(2).sum(), [x, w],
                                                      allow_unused=True))
    x2 = fixed(torch, 5, 2, dtype=torch.float64)
    rm2, rv2 = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    y2 = F.batch_norm(x2, rm2, rv2, training=True)
    rec("2d input", [y2, rm2, rv2])
    attempt(rec, "one value per channel",
            lambda: F.batch_norm(torch.ones(1, 3), torch.zeros(3), torch.ones(3), training=True))
    ones = lambda n: torch.ones(n, dtype=torch.float64)  # noqa: E731
    attempt(rec, "weight size", lambda: F.batch_norm(x, rm, rv, ones(2)))
    attempt(rec, "bias size", lambda: F.batch_norm(x, rm, rv, None, ones(4)))
    attempt(rec, "running_var size",
            lambda: F.batch_norm(x, rm, torch.ones(2, dtype=torch.float64)))
    attempt(rec, "eval without stats", lambda: F.batch_norm(x, None, None))
    attempt(rec, "one stat", lambda: F.batch_norm(x, rm, None, training=True))
    attempt(rec, "eps zero", lambda: F.batch_norm(x, rm, rv, training=True, eps=0.0))
    attempt(rec, "eps negative", lambda: F.batch_norm(x, rm, rv, eps=-1.0))
    attempt(rec, "mixed dtype", lambda: F.batch_norm(x, torch.zeros(3), torch.ones(3)))
    attempt(rec, "mixed dtype float input",
            lambda: F.batch_norm(x.float(), rm, rv, training=True))


def _train_steps(torch, m, inputs):
    """Each input through m in training, the loss's gradients accumulated; what changed."""
    seen = []
    for x in inputs:
        y = m(x)
        (y * _weights(torch, y.shape).to(y.dtype)).sum().backward()
        seen.append([y, y.grad_fn, [b.clone() for b in m.buffers()]])
    return seen


@program
def batchnorm_modules(torch, rec):
    """nn.BatchNorm1d/2d/3d: reprs, state_dict keys and values, a few training steps (running
    statistics with momentum 0.1 and with momentum None, the cumulative average; batch count),
    parameter gradients, evaluation with the running statistics, track_running_stats=False and
    affine=False, and the refusals (wrong rank, one value per channel)."""
    nn = torch.nn
    for name, m, shape in (
            ("BatchNorm1d", nn.BatchNorm1d(3, dtype=torch.float64), (4, 3)),
            ("BatchNorm1d 3D", nn.BatchNorm1d(3, momentum=None, dtype=torch.float64),
             (2, 3, 4)),
            ("BatchNorm2d", nn.BatchNorm2d(2, eps=1e-3, dtype=torch.float64), (2, 2, 3, 2)),
            ("BatchNorm3d", nn.BatchNorm3d(2, momentum=0.5, dtype=torch.float64),
             (2, 2, 2, 1, 2)),
            ("no stats", nn.BatchNorm1d(3, track_running_stats=False, dtype=torch.float64),
             (4, 3)),
            ("no affine", nn.BatchNorm2d(2, affine=False, dtype=torch.float64),
             (2, 2, 2, 2)),
            ("no bias", nn.BatchNorm1d(3, bias=False, dtype=torch.float64), (3, 3, 2))):
        rec(f"{name} repr", [repr(m), list(m.state_dict().keys())])
        rec(f"{name} fresh state", list(m.state_dict().values()))
        if m.affine:
            load_fixed(torch, m, scale=0.7)
            with torch.no_grad():  # keep the buffers PyTorch starts with
                if m.track_running_stats:
                    m.running_mean.zero_()
                    m.running_var.fill_(1)
                    m.num_batches_tracked.zero_()
        inputs = [fixed(torch, *shape, dtype=torch.float64, scale=s) + k
                  for k, s in enumerate((1.0, 2.5, 0.5))]
        rec(f"{name} steps", _train_steps(torch, m, inputs))
        rec(f"{name} grads", [None if p.grad is None else p.grad for p in m.parameters()])
        rec(f"{name} state", list(m.state_dict().items()))
        m.eval()
        y = m(inputs[0] * 0.5)
        rec(f"{name} eval", [y, y.grad_fn])
    attempt(rec, "BatchNorm2d on 2D", lambda: nn.BatchNorm2d(3)(torch.ones(2, 3)))
    attempt(rec, "BatchNorm1d on 4D", lambda: nn.BatchNorm1d(3)(torch.ones(2, 3, 1, 1)))
    attempt(rec, "BatchNorm3d on 4D", lambda: nn.BatchNorm3d(3)(torch.ones(2, 3, 1, 1)))
    attempt(rec, "one value per channel", lambda: nn.BatchNorm1d(3)(torch.ones(1, 3)))
    single = nn.BatchNorm1d(3).eval()
    rec("eval one sample", single(torch.tensor([[1.0, 2.0, 3.0]])))
    m = nn.BatchNorm1d(2, dtype=torch.float64)
    sd = m.state_dict()
    sd["running_mean"] = torch.tensor([1.0, 2.0], dtype=torch.float64)
    sd["num_batches_tracked"] = torch.tensor(7)
    m.load_state_dict(sd)
    m.train()
    m(fixed(torch, 3, 2, dtype=torch.float64))
    rec("loaded then trained", list(m.state_dict().items()))


@program
def batchnorm_float32(torch, rec):
    """nn.BatchNorm2d in the default float32: training steps, gradients, evaluation."""
    m = torch.nn.BatchNorm2d(3)
    load_fixed(torch, m, scale=0.9)
    with torch.no_grad():
        m.running_mean.zero_()
        m.running_var.fill_(1)
        m.num_batches_tracked.zero_()
    x = (fixed(torch, 2, 3, 2, 2, scale=3.0) + 1).requires_grad_()
    rec("steps", _train_steps(torch, m, [x, x * 2 - 1]))
    rec("grads", [x.grad, m.weight.grad, m.bias.grad])
    m.eval()
    rec("eval", m(x.detach()))


# --- group and instance normalisation -----------------------------------------------------

@program
def group_and_instance_norm(torch, rec):
    """F.group_norm and nn.GroupNorm, F.instance_norm and nn.InstanceNorm1d/2d/3d: values, node
    names, first and second derivatives, running statistics of instance norm, reprs, state
    and the refusals."""
    F, nn = torch.nn.functional, torch.nn
    x = fixed(torch, 2, 4, 3, dtype=torch.float64, scale=2.0).requires_grad_()
    w = torch.tensor([1.5, -0.5, 2.0, 0.7], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.1, 0.2, 0.3, -0.4], dtype=torch.float64, requires_grad=True)
    rm = torch.tensor([0.5, -0.2, 0.1, 0.0], dtype=torch.float64)
    rv = torch.tensor([1.5, 0.7, 2.0, 1.0], dtype=torch.float64)
    for name, fn in (("group_norm 2", lambda: F.group_norm(x, 2, w, b)),
                     ("group_norm 1", lambda: F.group_norm(x, 1, eps=1e-3)),
                     ("group_norm 4 weight", lambda: F.group_norm(x, 4, w)),
                     ("instance_norm", lambda: F.instance_norm(x)),
                     ("instance_norm affine stats",
                      lambda: F.instance_norm(x, rm, rv, w, b, momentum=0.2)),
                     ("instance_norm running",
                      lambda: F.instance_norm(x, rm, rv, w, b, use_input_stats=False))):
        y = fn()
        g = torch.autograd.grad((y * _weights(torch, y.shape)).sum(), [x, w, b],
                                allow_unused=True, create_graph=True)
        rec(name, [y, y.grad_fn, [None if t is None else t.detach() for t in g], rm, rv])
        rec(f"{name} second", torch.autograd.grad(g[0].pow(2).sum(), x))
    x4 = fixed(torch, 2, 4, 2, 3, dtype=torch.float64)
    rec("group_norm 4D", F.group_norm(x4, 2))
    gn = nn.GroupNorm(2, 4, dtype=torch.float64)
    load_fixed(torch, gn)
    y = gn(x4)
    y.sum().backward()
    rec("GroupNorm", [repr(gn), list(gn.state_dict().keys()), y, gn.weight.grad, gn.bias.grad])
    rec("GroupNorm plain", [repr(nn.GroupNorm(1, 3, affine=False, eps=1e-3)),
                            list(nn.GroupNorm(1, 3, affine=False).state_dict().keys())])
    i1 = nn.InstanceNorm1d(4, dtype=torch.float64)
    rec("InstanceNorm1d", [repr(i1), list(i1.state_dict().keys()), i1(x.detach()),
                           i1(x.detach()[0])])
    i2 = nn.InstanceNorm2d(4, affine=True, track_running_stats=True, dtype=torch.float64)
    load_fixed(torch, i2)
    with torch.no_grad():
        i2.running_mean.zero_()
        i2.running_var.fill_(1)
    y = i2(x4)
    rec("InstanceNorm2d train", [repr(i2), list(i2.state_dict().items()), y, y.grad_fn])
    i2.eval()
    rec("InstanceNorm2d eval", i2(x4))
    i3 = nn.InstanceNorm3d(2, dtype=torch.float64)
    rec("InstanceNorm3d", [repr(i3), i3(fixed(torch, 2, 2, 2, 1, 3, dtype=torch.float64)),
                           i3(fixed(torch, 2, 2, 1, 3, dtype=torch.float64))])
    attempt(rec, "InstanceNorm3d rank", lambda: i3(torch.ones(2, 3)))
    attempt(rec, "GroupNorm channels", lambda: nn.GroupNorm(3, 4))
    attempt(rec, "group_norm channels", lambda: F.group_norm(x, 3))
    attempt(rec, "group_norm 1D", lambda: F.group_norm(torch.ones(3), 1))
    attempt(rec, "group_norm one value", lambda: F.group_norm(torch.ones(1, 2), 2))
    attempt(rec, "group_norm weight",
            lambda: F.group_norm(x, 2, torch.ones(3, dtype=torch.float64)))
    attempt(rec, "instance_norm one value", lambda: F.instance_norm(torch.ones(2, 3, 1)))
    attempt(rec, "InstanceNorm1d rank", lambda: nn.InstanceNorm1d(3)(torch.ones(2, 3, 4, 5)))
    attempt(rec, "InstanceNorm2d rank", lambda: nn.InstanceNorm2d(3)(torch.ones(2, 3)))
    attempt(rec, "InstanceNorm1d affine channels",
            lambda: nn.InstanceNorm1d(3, affine=True)(torch.ones(2, 4, 5)))
    rec("InstanceNorm1d other channels", nn.InstanceNorm1d(3)(
        fixed(torch, 2, 4, 5, dtype=torch.float64)))


@program
def rms_norm_functional_and_module(torch, rec):
    """F.rms_norm and nn.RMSNorm: values, node names, first and second derivatives, the default
    eps in float32 and float64, reprs and state, a weight of another dtype (PyTorch's warning)
    and the shape refusal."""
    F, nn = torch.nn.functional, torch.nn
    x = fixed(torch, 2, 3, 2, dtype=torch.float64, scale=2.0).requires_grad_()
    w = torch.tensor([[1.5, -0.5], [2.0, 0.7], [0.3, 1.1]], dtype=torch.float64,
                     requires_grad=True)
    for name, fn in (("last axis", lambda: F.rms_norm(x, [2], w[0], 1e-3)),
                     ("two axes", lambda: F.rms_norm(x, (3, 2), w)),
                     ("no weight", lambda: F.rms_norm(x, [2]))):
        y = fn()
        g = torch.autograd.grad((y * _weights(torch, y.shape)).sum(), [x, w],
                                allow_unused=True, create_graph=True)
        rec(name, [y, y.grad_fn, [None if t is None else t.detach() for t in g]])
        rec(f"{name} second", torch.autograd.grad(g[0].pow(2).sum(), x))
    tiny = torch.tensor([[1e-4, -2e-4], [0.0, 0.0]])
    rec("default eps", [F.rms_norm(tiny, [2]), F.rms_norm(tiny.double(), [2])])
    m = nn.RMSNorm([3, 2], dtype=torch.float64)
    load_fixed(torch, m)
    rec("RMSNorm", [repr(m), list(m.state_dict().items()), m(x.detach())])
    rec("RMSNorm plain", [repr(nn.RMSNorm(2, eps=1e-3, elementwise_affine=False)),
                          list(nn.RMSNorm(2, elementwise_affine=False).state_dict().keys())])
    rec("weight dtype", F.rms_norm(x.detach(), [2], torch.ones(2)))
    attempt(rec, "shape", lambda: F.rms_norm(x, (3, 3)))
    attempt(rec, "int shape", lambda: F.rms_norm(x, 2))


# --- embedding and prelu ---------------------------------------------------------------------

@program
def embedding_functional(torch, rec):
    """F.embedding: rows picked, the weight's gradient (rows picked twice summed, padding_idx
    getting none, scale_grad_by_freq), max_norm renormalising the picked rows in place, int32
    indices, and the refusals (index dtype, out of range, padding_idx, weight rank)."""
    F = torch.nn.functional
    w0 = fixed(torch, 5, 3, dtype=torch.float64, scale=2.0)
    idx = torch.tensor([[1, 2, 1], [4, 0, 1]])
    for name, kw in (("plain", {}), ("padding", {"padding_idx": 1}),
                     ("padding negative", {"padding_idx": -1}),
                     ("scale_grad_by_freq", {"scale_grad_by_freq": True}),
                     ("scale and padding", {"scale_grad_by_freq": True, "padding_idx": 0}),
                     ("max_norm", {"max_norm": 1.0}),
                     ("max_norm p1", {"max_norm": 1.5, "norm_type": 1.0})):
        w = w0.clone().requires_grad_()
        y = F.embedding(idx, w, **kw)
        g = torch.autograd.grad((y * _weights(torch, y.shape)).sum(), w, create_graph=True)[0]
        rec(name, [y, y.grad_fn, g.detach(), w.detach(), w._version])
    w = w0.clone().requires_grad_()
    y = F.embedding(torch.tensor([3, 3, 0], dtype=torch.int32), w)
    y.sum().backward()
    rec("int32", [y, w.grad])
    rec("scalar index", F.embedding(torch.tensor(2), w0))
    rec("empty index", F.embedding(torch.tensor([], dtype=torch.int64), w0))
    attempt(rec, "float index", lambda: F.embedding(torch.tensor([1.0]), w0))
    attempt(rec, "bool index", lambda: F.embedding(torch.tensor([True]), w0))
    attempt(rec, "out of range", lambda: F.embedding(torch.tensor([5]), w0))
    attempt(rec, "negative index", lambda: F.embedding(torch.tensor([-1]), w0))
    attempt(rec, "padding_idx range", lambda: F.embedding(idx, w0, padding_idx=5))
    attempt(rec, "padding_idx negative range", lambda: F.embedding(idx, w0, padding_idx=-6))
    attempt(rec, "weight 1-D", lambda: F.embedding(idx, torch.ones(5)))


@program
def embedding_module(torch, rec):
    """nn.Embedding with loaded weights: repr, state_dict, gradients (padding row none),
    from_pretrained frozen and not, an optimiser step, and the refusals."""
    nn = torch.nn
    e = nn.Embedding(6, 3, padding_idx=2, dtype=torch.float64)
    load_fixed(torch, e)
    idx = torch.tensor([[2, 5, 0], [1, 2, 5]])
    y = e(idx)
    (y * _weights(torch, y.shape)).sum().backward()
    rec("padding", [repr(e), list(e.state_dict().keys()), y, y.grad_fn, e.weight.grad])
    opt = torch.optim.SGD(e.parameters(), lr=0.5)
    opt.step()
    rec("after step", e.weight)
    rec("reprs", [repr(nn.Embedding(4, 2, padding_idx=-1)),
                  repr(nn.Embedding(4, 2, max_norm=2.0, norm_type=3.0,
                                    scale_grad_by_freq=True, sparse=True))])
    rows = fixed(torch, 3, 2, dtype=torch.float64)
    frozen = nn.Embedding.from_pretrained(rows)
    rec("from_pretrained", [repr(frozen), frozen.weight.requires_grad,
                            frozen(torch.tensor([2, 0])), frozen(torch.tensor([1])).grad_fn])
    free = nn.Embedding.from_pretrained(rows, freeze=False, padding_idx=0)
    z = free(torch.tensor([0, 1, 1]))
    z.sum().backward()
    rec("from_pretrained free", [free.weight.requires_grad, z, free.weight.grad,
                                 free.weight.detach()])
    capped = nn.Embedding.from_pretrained(rows.clone(), max_norm=1.0)
    rec("max_norm module", [capped(torch.tensor([0, 2])), capped.weight])
    attempt(rec, "from_pretrained 1-D", lambda: nn.Embedding.from_pretrained(torch.ones(3)))
    attempt(rec, "padding_idx range", lambda: nn.Embedding(3, 2, padding_idx=3))
    attempt(rec, "weight shape", lambda: nn.Embedding(3, 2, _weight=torch.ones(2, 2)))
    attempt(rec, "index range", lambda: e(torch.tensor([6])))


@seeded
def seeded_embedding(torch, rec):
    """nn.Embedding's N(0, 1) weights from PyTorch's generator, the padding row zeroed."""
    torch.manual_seed(0)
    e = torch.nn.Embedding(5, 3, padding_idx=1)
    rec("weight", [e.weight, e.weight.requires_grad])
    rec("lookup", e(torch.tensor([1, 4])))


@program
def prelu_functional_and_module(torch, rec):
    """F.prelu with one slope and one per channel, nn.PReLU: values, gradients of the input
    and the slopes, node names, repr and state, and the refusals."""
    F, nn = torch.nn.functional, torch.nn
    x = fixed(torch, 2, 3, 2, dtype=torch.float64, scale=2.0).requires_grad_()
    for name, w in (("one slope", torch.tensor([0.25], dtype=torch.float64)),
                    ("per channel", torch.tensor([0.1, -0.3, 2.0], dtype=torch.float64))):
        w.requires_grad_()
        y = F.prelu(x, w)
        g = torch.autograd.grad((y * _weights(torch, y.shape)).sum(), [x, w])
        rec(name, [y, y.grad_fn, list(g)])
    rec("0-d input", [F.prelu(torch.tensor(-2.0), torch.tensor([0.25])),
                      F.prelu(torch.tensor([-2.0, 3.0]), torch.tensor([0.5]))])
    m = nn.PReLU(3, init=0.1)
    rec("PReLU", [repr(m), repr(nn.PReLU()), list(m.state_dict().items()),
                  m(torch.tensor([[-1.0, 2.0, -3.0]]))])
    attempt(rec, "channels", lambda: F.prelu(x, torch.ones(2, dtype=torch.float64)))
    attempt(rec, "2-D weight", lambda: F.prelu(x, torch.ones(1, 3, dtype=torch.float64)))


@program
def small_model_training(torch, rec):
    """Embedding (mean over each sequence) -> BatchNorm1d -> PReLU -> Linear, trained by Adam
    for a few steps: the losses, the parameters and buffers after them, the model in eval."""
    nn = torch.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(7, 4, padding_idx=0)
            self.norm = nn.BatchNorm1d(4)
            self.act = nn.PReLU()
            self.out = nn.Linear(4, 3)

        def forward(self, idx):
            h = self.embed(idx).mean(1)
            return self.out(self.act(self.norm(h)))

    model = Model().double()
    load_fixed(torch, model)
    with torch.no_grad():
        model.norm.running_mean.zero_()
        model.norm.running_var.fill_(1)
        model.norm.num_batches_tracked.zero_()
    rec("state_dict keys", list(model.state_dict().keys()))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    batches = [torch.tensor([[1, 2, 0], [3, 4, 5], [6, 1, 1], [2, 0, 0]]),
               torch.tensor([[5, 5, 2], [1, 0, 0], [4, 6, 3], [3, 3, 1]])]
    target = torch.tensor([0, 2, 1, 1])
    losses = []
    for step in range(4):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(batches[step % 2]), target)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    rec("losses", losses)
    rec("state", list(model.state_dict().items()))
    model.eval()
    rec("eval", model(batches[0]))


def main():
    write_fixtures(FIXTURES, PROGRAMS, SEEDED)


if __name__ == "__main__":
    main()
