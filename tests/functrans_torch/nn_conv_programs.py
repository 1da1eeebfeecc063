"""Convolution, pooling and padding programs (torch.nn.functional and torch.nn) run under both
PyTorch and functrans.torch, observed as in parity_programs: values, grad_fn names, gradients
of the input and of the parameters (fixed through load_state_dict), module reprs and PyTorch's
errors. SEEDED programs draw their weights after `torch.manual_seed`.
The records in nn_conv_fixtures.json were written by running this file under torch==2.13.0:
`python tests/functrans_torch/nn_conv_programs.py`.
"""

from __future__ import annotations

import os

from torch_nn_programs import attempt, fixed, load_fixed, registries, write_fixtures

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nn_conv_fixtures.json")
PROGRAMS, SEEDED, program, seeded = registries()


def _f64(torch, *shape, scale=1.0):
    return fixed(torch, *shape, dtype=torch.float64, scale=scale).requires_grad_()


def _run(torch, rec, name, fn, *tensors):
    """Record fn(*tensors), its node and the gradients of sum(out * cos-weights)."""
    y = fn(*tensors)
    w = torch.cos(torch.arange(y.numel(), dtype=y.dtype)).reshape(y.shape)
    grads = torch.autograd.grad((y * w).sum(), tensors)
    rec(name, [y, y.grad_fn, list(grads)])


# --- convolution ---------------------------------------------------------------------------

@program
def conv2d_functional(torch, rec):
    F = torch.nn.functional
    x = _f64(torch, 2, 4, 7, 6)
    w = _f64(torch, 6, 2, 3, 2, scale=0.5)
    b = _f64(torch, 6, scale=0.1)
    w4 = _f64(torch, 3, 4, 3, 3, scale=0.5)
    _run(torch, rec, "plain", lambda x, w: F.conv2d(x, w), x, w4)
    _run(torch, rec, "bias_stride_padding", lambda x, w, b: F.conv2d(
        x, w, b, stride=(2, 1), padding=(1, 2), groups=2), x, w, b)
    _run(torch, rec, "dilation_groups", lambda x, w: F.conv2d(
        x, w, None, 1, 1, (2, 1), 2), x, w)
    _run(torch, rec, "same_even_kernel", lambda x, w: F.conv2d(x, w, padding="same", groups=2),
         x, w)
    _run(torch, rec, "same_dilated", lambda x, w: F.conv2d(x, w, padding="same", dilation=2),
         x, w4)
    _run(torch, rec, "valid", lambda x, w: F.conv2d(x, w, padding="valid", stride=2), x, w4)
    _run(torch, rec, "unbatched", lambda x, w: F.conv2d(x, w, padding=1), x[0].detach()
         .requires_grad_(), w4)
    depthwise = _f64(torch, 4, 1, 2, 2)
    _run(torch, rec, "depthwise", lambda x, w: F.conv2d(x, w, groups=4, stride=2), x, depthwise)
    y = F.conv2d(x.detach().abs().float(), w4.detach().abs().float())  # sums without cancelling
    rec("float32", [y, y.dtype])


@program
def conv1d_functional(torch, rec):
    F = torch.nn.functional
    x = _f64(torch, 2, 3, 9)
    w = _f64(torch, 4, 3, 3, scale=0.5)
    b = _f64(torch, 4, scale=0.2)
    _run(torch, rec, "plain", lambda x, w, b: F.conv1d(x, w, b), x, w, b)
    _run(torch, rec, "strided_padded_dilated", lambda x, w: F.conv1d(
        x, w, stride=2, padding=2, dilation=2), x, w)
    _run(torch, rec, "same", lambda x, w: F.conv1d(x, w, padding="same"), x, w)
    _run(torch, rec, "groups", lambda x, w: F.conv1d(x, w, groups=3),
         x, _f64(torch, 6, 1, 2))
    _run(torch, rec, "unbatched", lambda x, w: F.conv1d(x, w), x[1].detach().requires_grad_(), w)


@program
def conv_second_derivatives(torch, rec):
    F = torch.nn.functional
    x = _f64(torch, 1, 2, 5, 5)
    w = _f64(torch, 2, 2, 2, 2, scale=0.5)
    y = F.conv2d(x, w, padding=1).pow(2).sum()
    gx, gw = torch.autograd.grad(y, (x, w), create_graph=True)
    rec("first", [gx.detach(), gw.detach()])
    rec("second", list(torch.autograd.grad((gx * gx).sum() + gw.sum(), (x, w))))


@program
def conv_modules(torch, rec):
    nn = torch.nn
    c2 = nn.Conv2d(3, 4, 3, padding=1)
    rec("reprs", [repr(c2), repr(nn.Conv2d(4, 6, (3, 5), stride=2, bias=False)),
                  repr(nn.Conv2d(4, 4, 3, padding="same", dilation=2, groups=2)),
                  repr(nn.Conv2d(2, 2, 3, padding="valid")),
                  repr(nn.Conv1d(2, 4, 3, stride=2, dilation=2, groups=2,
                                 padding_mode="reflect")),
                  repr(nn.Conv1d(1, 1, 1))])
    rec("state", [[k, list(v.shape)] for k, v in c2.state_dict().items()])
    rec("attributes", [c2.kernel_size, c2.stride, c2.padding, c2.dilation, c2.groups,
                       c2.padding_mode, c2.in_channels, c2.out_channels])
    x = fixed(torch, 2, 3, 6, 5, dtype=torch.float64).requires_grad_()
    for mode in ("zeros", "reflect", "replicate", "circular"):
        m = nn.Conv2d(3, 4, (3, 2), padding=(2, 1), padding_mode=mode, dtype=torch.float64)
        load_fixed(torch, m)
        y = m(x)
        y.pow(2).sum().backward()
        rec(f"conv2d_{mode}", [y, m.weight.grad, m.bias.grad, x.grad])
        x.grad = None
    c1 = nn.Conv1d(3, 2, 2, stride=2, padding=1, bias=False).double()
    load_fixed(torch, c1)
    x1 = fixed(torch, 2, 3, 7, dtype=torch.float64).requires_grad_()
    y = c1(x1)
    y.sum().backward()
    rec("conv1d", [y, y.grad_fn, c1.weight.grad, c1.bias, x1.grad])
    same = nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular").double()
    load_fixed(torch, same)
    rec("conv1d_same_circular", same(fixed(torch, 2, 6, dtype=torch.float64)))


@program
def conv_errors(torch, rec):
    F = torch.nn.functional
    x, w = fixed(torch, 2, 3, 8, 8), fixed(torch, 4, 3, 3, 3)
    for name, fn in (
            ("rank", lambda: F.conv2d(fixed(torch, 2, 3), w)),
            ("rank5", lambda: F.conv2d(fixed(torch, 1, 2, 3, 4, 4), w)),
            ("conv1d_rank", lambda: F.conv1d(x, fixed(torch, 4, 3, 3))),
            ("weight_rank", lambda: F.conv2d(x, fixed(torch, 4, 3, 3))),
            ("channels", lambda: F.conv2d(fixed(torch, 2, 5, 8, 8), w)),
            ("kernel_too_big", lambda: F.conv2d(fixed(torch, 2, 3, 2, 2), w)),
            ("same_strided", lambda: F.conv2d(x, w, stride=2, padding="same")),
            ("padding_string", lambda: F.conv2d(x, w, padding="full")),
            ("negative_padding", lambda: F.conv2d(x, w, padding=-1)),
            ("bias_size", lambda: F.conv2d(x, w, fixed(torch, 3))),
            ("groups_divide_weight", lambda: F.conv2d(fixed(torch, 2, 4, 8, 8),
                                                      fixed(torch, 3, 2, 3, 3), groups=2)),
            ("dtype", lambda: F.conv2d(x.double(), w)),
            ("bias_dtype", lambda: F.conv2d(x, w, fixed(torch, 4).double())),
            ("stride_zero", lambda: F.conv2d(x, w, stride=0)),
            ("dilation_zero", lambda: F.conv2d(x, w, dilation=0)),
            ("stride_length", lambda: F.conv2d(x, w, stride=(1, 1, 1))),
            ("module_in_channels", lambda: torch.nn.Conv2d(3, 4, 3, groups=2)),
            ("module_out_channels", lambda: torch.nn.Conv2d(4, 3, 3, groups=2)),
            ("module_groups", lambda: torch.nn.Conv2d(4, 4, 3, groups=0)),
            ("module_same_strided", lambda: torch.nn.Conv2d(4, 4, 3, padding="same",
                                                            stride=2)),
            ("module_wrong_channels", lambda: torch.nn.Conv2d(2, 4, 3)(x))):
        attempt(rec, name, fn)


# --- pooling -------------------------------------------------------------------------------

@program
def max_pooling(torch, rec):
    F, nn = torch.nn.functional, torch.nn
    x = _f64(torch, 2, 3, 7, 8)
    _run(torch, rec, "max2d", lambda x: F.max_pool2d(x, 2), x)
    _run(torch, rec, "max2d_padded_ceil", lambda x: F.max_pool2d(
        x, 3, 2, 1, ceil_mode=True), x)
    _run(torch, rec, "max2d_dilated", lambda x: F.max_pool2d(x, (2, 3), (1, 2), (1, 1), 2), x)
    _run(torch, rec, "max2d_unbatched", lambda x: F.max_pool2d(x, (3, 2), 1), x[0].detach()
         .requires_grad_())
    _run(torch, rec, "max1d", lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True),
         _f64(torch, 2, 3, 10))
    _run(torch, rec, "max1d_unbatched", lambda x: F.max_pool1d(x, 2), _f64(torch, 3, 9))
    y, idx = F.max_pool2d(x.detach(), 3, 2, 1, return_indices=True, ceil_mode=True)
    rec("indices2d", [y, idx])
    y, idx = F.max_pool1d(fixed(torch, 2, 9), 2, return_indices=True)
    rec("indices1d", [y, idx])
    ties = torch.tensor([[[[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 1.0, 3.0],
                           [5.0, 5.0, 2.0, 2.0], [5.0, 5.0, 2.0, 2.0]]]], requires_grad=True)
    out = F.max_pool2d(ties, 2)
    out.sum().backward()
    rec("ties_first_max", [out, ties.grad, F.max_pool2d(ties.detach(), 2,
                                                        return_indices=True)[1]])
    overlap = torch.tensor([[[2.0, 2.0, 2.0, 1.0, 2.0]]], requires_grad=True)
    F.max_pool1d(overlap, 2, 1).sum().backward()
    rec("ties_overlapping", overlap.grad)
    m = nn.MaxPool2d(3, 1, 1, ceil_mode=True)
    rec("modules", [repr(m), repr(nn.MaxPool2d(2)), repr(nn.MaxPool1d(3, stride=2)),
                    repr(nn.MaxPool2d((2, 3), return_indices=True)), m(x.detach())])
    mi = nn.MaxPool1d(2, return_indices=True)
    rec("module_indices", list(mi(fixed(torch, 1, 2, 6))))
    y = F.max_pool2d(x, 2)
    g, = torch.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    rec("second", torch.autograd.grad(g.pow(2).sum(), x))


@program
def average_pooling(torch, rec):
    F, nn = torch.nn.functional, torch.nn
    x = _f64(torch, 2, 3, 7, 8)
    _run(torch, rec, "avg2d", lambda x: F.avg_pool2d(x, 2), x)
    _run(torch, rec, "avg2d_padded_ceil", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
         x)
    _run(torch, rec, "avg2d_exclude_pad", lambda x: F.avg_pool2d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False), x)
    _run(torch, rec, "avg2d_divisor", lambda x: F.avg_pool2d(x, (2, 3), divisor_override=5), x)
    _run(torch, rec, "avg2d_unbatched", lambda x: F.avg_pool2d(x, 2, 1, 1),
         x[1].detach().requires_grad_())
    _run(torch, rec, "avg1d", lambda x: F.avg_pool1d(x, 3, 2, 1), _f64(torch, 2, 3, 10))
    _run(torch, rec, "avg1d_ceil_exclude", lambda x: F.avg_pool1d(
        x, 2, 2, 1, ceil_mode=True, count_include_pad=False), _f64(torch, 3, 7))
    rec("modules", [repr(nn.AvgPool2d(2)), repr(nn.AvgPool2d((2, 3), 1, 1)),
                    repr(nn.AvgPool1d(3, 2, 1, True, False)),
                    repr(nn.AvgPool2d(3, divisor_override=2)),
                    nn.AvgPool2d(3, 2, 1, count_include_pad=False)(x.detach()),
                    nn.AvgPool1d(2)(fixed(torch, 2, 5))])


@program
def adaptive_average_pooling(torch, rec):
    F, nn = torch.nn.functional, torch.nn
    x = _f64(torch, 2, 3, 7, 9)
    _run(torch, rec, "grid_3x4", lambda x: F.adaptive_avg_pool2d(x, (3, 4)), x)
    _run(torch, rec, "grid_5x5", lambda x: F.adaptive_avg_pool2d(x, 5), x)
    _run(torch, rec, "keep_width", lambda x: F.adaptive_avg_pool2d(x, (2, None)), x)
    _run(torch, rec, "global", lambda x: F.adaptive_avg_pool2d(x, 1), x)
    _run(torch, rec, "larger_than_input", lambda x: F.adaptive_avg_pool2d(x, (9, 10)), x)
    _run(torch, rec, "unbatched", lambda x: F.adaptive_avg_pool2d(x, 2), x[0].detach()
         .requires_grad_())
    _run(torch, rec, "one_d", lambda x: F.adaptive_avg_pool1d(x, 4), _f64(torch, 2, 3, 7))
    _run(torch, rec, "one_d_global", lambda x: F.adaptive_avg_pool1d(x, 1), _f64(torch, 3, 7))
    rec("modules", [repr(nn.AdaptiveAvgPool2d((3, None))), repr(nn.AdaptiveAvgPool2d(1)),
                    repr(nn.AdaptiveAvgPool1d(2)), nn.AdaptiveAvgPool2d((1, 2))(x.detach()),
                    nn.AdaptiveAvgPool1d(3)(fixed(torch, 2, 5))])


@program
def pooling_errors(torch, rec):
    F = torch.nn.functional
    x = fixed(torch, 2, 3, 8, 8)
    for name, fn in (
            ("max_pad", lambda: F.max_pool2d(x, 2, padding=2)),
            ("max_negative_pad", lambda: F.max_pool2d(x, 2, padding=-1)),
            ("max_too_small", lambda: F.max_pool2d(fixed(torch, 3, 2, 2), 3)),
            ("max_rank", lambda: F.max_pool2d(fixed(torch, 8, 8), 2)),
            ("max_rank5", lambda: F.max_pool2d(fixed(torch, 1, 2, 3, 4, 4), 2)),
            ("max_kernel_zero", lambda: F.max_pool2d(x, 0)),
            ("max_kernel_three", lambda: F.max_pool2d(x, (2, 2, 2))),
            ("max1d_rank", lambda: F.max_pool1d(fixed(torch, 8), 2)),
            ("max1d_pad", lambda: F.max_pool1d(fixed(torch, 2, 8), 2, padding=2)),
            ("max1d_kernel_zero", lambda: F.max_pool1d(fixed(torch, 2, 8), 0)),
            ("max1d_stride_zero", lambda: F.max_pool1d(fixed(torch, 2, 8), 2, 0)),
            ("max1d_too_small", lambda: F.max_pool1d(fixed(torch, 2, 2), 3)),
            ("avg_pad", lambda: F.avg_pool2d(x, 2, padding=2)),
            ("avg_too_small", lambda: F.avg_pool2d(fixed(torch, 3, 2, 2), 3)),
            ("avg_rank", lambda: F.avg_pool2d(fixed(torch, 8, 8), 2)),
            ("avg_rank5", lambda: F.avg_pool2d(fixed(torch, 1, 2, 3, 4, 4), 2)),
            ("avg_divisor_zero", lambda: F.avg_pool2d(x, 2, divisor_override=0)),
            ("avg_kernel_three", lambda: F.avg_pool2d(x, (2, 2, 2))),
            ("avg1d_rank", lambda: F.avg_pool1d(fixed(torch, 8), 2)),
            ("avg1d_too_small", lambda: F.avg_pool1d(fixed(torch, 2, 2), 3)),
            ("adaptive_rank", lambda: F.adaptive_avg_pool2d(fixed(torch, 8), 2)),
            ("adaptive_empty", lambda: F.adaptive_avg_pool2d(fixed(torch, 2, 0, 3), 2)),
            ("adaptive_size", lambda: F.adaptive_avg_pool2d(x, (2, 2, 2))),
            ("adaptive1d_rank", lambda: F.adaptive_avg_pool1d(fixed(torch, 8), 2))):
        attempt(rec, name, fn)


# --- pad -----------------------------------------------------------------------------------

@program
def padding(torch, rec):
    F = torch.nn.functional
    x = _f64(torch, 2, 3, 4, 5)
    _run(torch, rec, "constant", lambda x: F.pad(x, (1, 2)), x)
    _run(torch, rec, "constant_value_crop", lambda x: F.pad(x, (1, 2, -1, 0, 0, 1), value=0.5),
         x)
    _run(torch, rec, "reflect", lambda x: F.pad(x, (1, 2, 3, 0), mode="reflect"), x)
    _run(torch, rec, "replicate", lambda x: F.pad(x, (2, 1), mode="replicate"), x[0])
    _run(torch, rec, "circular", lambda x: F.pad(x, (1, 2, 2, 1), mode="circular"), x)
    _run(torch, rec, "reflect_1d", lambda x: F.pad(x, (2, 1), mode="reflect"),
         _f64(torch, 2, 3, 5))
    rec("integer", F.pad(torch.arange(6).reshape(2, 3), (1, 1), value=7))
    for name, fn in (
            ("odd", lambda: F.pad(x, (1,))),
            ("too_long", lambda: F.pad(x, (1,) * 10)),
            ("crop_too_much", lambda: F.pad(x, (-3, -3))),
            ("mode", lambda: F.pad(x, (1, 1), mode="wrap")),
            ("reflect_sizes", lambda: F.pad(x, (1, 1), mode="reflect")),
            ("reflect_too_wide", lambda: F.pad(x, (5, 1, 0, 0), mode="reflect")),
            ("reflect_value", lambda: F.pad(x, (1, 1, 1, 1), mode="reflect", value=2.0)),
            ("circular_wraps_twice", lambda: F.pad(x, (6, 1, 1, 1), mode="circular"))):
        attempt(rec, name, fn)


# --- a network -----------------------------------------------------------------------------

def lenet(torch):
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 10))


@program
def lenet_forward_backward(torch, rec):
    net = lenet(torch)
    rec("repr", repr(net))
    load_fixed(torch, net, scale=0.2)
    x = fixed(torch, 4, 1, 28, 28)
    target = torch.tensor([3, 1, 4, 1])
    loss = torch.nn.functional.cross_entropy(net(x), target)
    loss.backward()
    # float32 gradients are sums of thousands of products that cancel: PyTorch's and numpy's
    # roundings differ by 3e-7 (both that far from the float64 values), so only the loss and
    # the last layer's bias are compared in float32, the rest in float64
    rec("float32", [loss, net[7].bias.grad])
    net.zero_grad()
    net = net.double()
    x64 = x.double().requires_grad_()
    loss = torch.nn.functional.cross_entropy(net(x64), target)
    loss.backward()
    rec("loss", loss)
    rec("grads", [net[0].weight.grad, net[0].bias.grad, net[3].weight.grad[:2],
                  net[3].bias.grad, net[7].weight.grad[:, :8], net[7].bias.grad, x64.grad[0]])


# float32 sums of many products: PyTorch's kernels and numpy round them in different orders
# (the loss of lenet_forward_backward); everything else is float64 or sums without cancelling
TOLERANCES = {"lenet_forward_backward": 1e-5}


# --- seeded: PyTorch's initialisation --------------------------------------------------------

@seeded
def seeded_conv_init(torch, rec):
    for seed in (0, 5):
        torch.manual_seed(seed)
        rec(f"conv2d_{seed}", list(torch.nn.Conv2d(3, 4, (3, 2)).state_dict().items()))
        rec(f"conv1d_{seed}", list(torch.nn.Conv1d(4, 2, 3, groups=2,
                                                   bias=True).state_dict().items()))
        rec(f"lenet_{seed}", [v for _, v in lenet(torch).state_dict().items()][:2])


def main():
    write_fixtures(FIXTURES, PROGRAMS, SEEDED)


if __name__ == "__main__":
    main()
