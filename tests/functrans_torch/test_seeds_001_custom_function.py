# ruff: noqa: E501  (the tutorial snippets stay verbatim)
"""Seed 001 (Chinese): "pytorch 自动微分以及自定义 torch.autograd.Function 教程" — backward with a
gradient argument, custom autograd.Function (separate and combined forward/setup_context, ctx
methods, set_materialize_grads, double backward), gradcheck, and the Legendre-polynomial
training loop with its printed losses.

Every snippet as written. The Function examples use `Function` unqualified, i.e. after
`from torch.autograd import Function`, which each test adds."""

import math
import re
import warnings

import numpy as np
import pytest

import functrans.torch as torch

Q_SETUP = """
import torch

a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
"""

Q_DEF = """
Q = 3*a**3 - b**2
"""

Q_BACKWARD = """
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
"""

Q_CHECK = """
# 检查收集的梯度是否正确
print(9*a**2 == a.grad)
print(-2*b == b.grad)
"""

Q_WHOLE = """
import torch

# 创建两个张量 a 和 b,并启用 requires_grad=True 以便自动求导可以追踪它们的操作
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)

# 定义张量 Q,它是通过 a 和 b 的操作生成的。公式为:Q = 3a^3 - b^2
Q = 3*a**3 - b**2

# 定义一个外部梯度 external_grad,用于模拟在反向传播时传递的梯度值
external_grad = torch.tensor([1., 1.])

# 通过调用 backward 方法计算 Q 对 a 和 b 的梯度,并将外部梯度传递给 backward
Q.backward(gradient=external_grad)

# 检查收集到的梯度是否正确
# 对 a 的梯度应该为 9a^2
print(9*a**2 == a.grad)
# 对 b 的梯度应该为 -2b
print(-2*b == b.grad)
"""

LINEAR_SEPARATE = """
# 继承自 Function
class LinearFunction(Function):

    # 注意 forward、setup_context 和 backward 是 @staticmethod
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    # inputs 是传递给 forward 的所有输入的元组。
    # output 是 forward() 的输出。
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    # 此函数只有一个输出,因此它只接收一个梯度
    @staticmethod
    def backward(ctx, grad_output):
        # 在 backward 的顶部解包 saved_tensors 并将所有输入的梯度初始化为 None 是非常方便的。
        # 由于额外的尾随 None 会被忽略,即使函数有可选输入,return 语句也很简单。
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None

        # 这些 needs_input_grad 检查是可选的,它们只用于提高效率。
        # 如果你希望让代码更简单,可以跳过它们。
        # 返回不需要梯度的输入的梯度不是错误。
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)

        return grad_input, grad_weight, grad_bias
"""

LINEAR_ALIASES = """
# 选项 1:别名
linear = LinearFunction.apply

# 选项 2:将其包装在函数中,以支持默认参数和关键字参数。
def linear(input, weight, bias=None):
    return LinearFunction.apply(input, weight, bias)
"""

MUL_CONSTANT = """
class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        # ctx 是一个上下文对象,可以用来存储反向传播计算所需的信息
        tensor, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        # 我们返回的梯度数量与输入参数的数量相同。
        # 对于前向传播的非 Tensor 参数,其梯度必须为 None。
        return grad_output * ctx.constant, None
"""

MUL_CONSTANT_NO_MATERIALIZE = """
class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        tensor, constant = inputs
        ctx.set_materialize_grads(False)
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        # 在这里我们必须处理 None 的 grad_output Tensor。在这种情况下,
        # 我们可以跳过不必要的计算,直接返回 None。
        if grad_output is None:
            return None, None

        # 我们返回的梯度数量与输入参数的数量相同。
        # 对于前向传播的非 Tensor 参数,其梯度必须为 None。
        return grad_output * ctx.constant, None
"""

MY_CUBE = """
class MyCube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        # 我们希望为反向传播保存 dx。为了做到这一点,它必须作为输出返回。
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
        # 为了使 autograd.Function 支持高阶梯度,我们必须添加 `dx` 的梯度贡献,
        # 即 grad_dx * 6 * x。
        result = grad_output * dx + grad_dx * 6 * x
        return result
"""

MY_CUBE_WRAPPER = """
def my_cube(x):
    result, dx = MyCube.apply(x)
    return result
"""

GRADCHECK = """
from torch.autograd import gradcheck

# gradcheck 接受一个包含张量的元组作为输入,检查你的梯度在这些张量上评估的结果
# 是否足够接近数值近似,并且在所有条件都符合时返回 True。
input = (torch.randn(20,20,dtype=torch.double,requires_grad=True), torch.randn(30,20,dtype=torch.double,requires_grad=True))
test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
print(test)
"""

LINEAR_COMBINED = """
class LinearFunction(Function):
    @staticmethod
    # ctx 是 forward 的第一个参数
    def forward(ctx, input, weight, bias=None):
        # 前向传播可以使用 ctx。
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None

        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)

        return grad_input, grad_weight, grad_bias
"""

LEGENDRE = '''
import torch
import math

class LegendrePolynomial3(torch.autograd.Function):
    """
    我们可以通过子类化 torch.autograd.Function 并实现前向和后向传递的函数,
    来实现自定义的自动求导功能,这些操作都作用于张量上。
    """

    @staticmethod
    def forward(ctx, input):
        """
        在前向传递中,我们接收一个包含输入的张量,并返回一个包含输出的张量。
        ctx 是一个上下文对象,可用于存储后向计算的信息。你可以使用 ctx.save_for_backward 方法缓存任意对象,
        以便在后向传递中使用。
        """
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        """
        在后向传递中,我们接收一个包含相对于输出的损失梯度的张量,
        并且我们需要计算相对于输入的损失梯度。
        """
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)

dtype = torch.float
device = torch.device("cpu")
# device = torch.device("cuda:0")  # 取消注释以在 GPU 上运行

# 创建张量以保存输入和输出。
# 默认情况下,requires_grad=False,表示我们不需要在后向传递中计算这些张量的梯度。
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

# 为权重创建随机张量。对于此示例,我们需要 4 个权重:y = a + b * P3(c + d * x),这些权重需要初始化得不太远
# 离正确的结果,以确保收敛。设置 requires_grad=True 表示我们希望在后向传递中计算这些张量的梯度。
a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

learning_rate = 5e-6
for t in range(2000):
    # 要应用我们的函数,我们使用 Function.apply 方法。我们将其别名为 'P3'。
    P3 = LegendrePolynomial3.apply

    # 前向传递:使用操作计算预测的 y;我们使用自定义自动求导操作计算 P3。
    y_pred = a + b * P3(c + d * x)

    # 计算并打印损失
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())

    # 使用自动求导计算后向传递。
    loss.backward()

    # 使用梯度下降法更新权重
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        # 更新权重后手动将梯度清零
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'结果: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
'''

# the output the text shows for the loop ("运行以上代码可以看到 loss 在不断降低")
LEGENDRE_OUTPUT = """\
99 209.95834350585938
199 144.66018676757812
299 100.70249938964844
399 71.03519439697266
499 50.978511810302734
599 37.403133392333984
699 28.206867218017578
799 21.97318458557129
899 17.7457275390625
999 14.877889633178711
1099 12.93176555633545
1199 11.610918045043945
1299 10.71425724029541
1399 10.10548210144043
1499 9.692105293273926
1599 9.411375999450684
1699 9.220745086669922
1799 9.091285705566406
1899 9.003361701965332
1999 8.943641662597656
Result: y = -6.71270206087371e-10 + -2.208526849746704 * P3(-3.392665037793563e-10 + 0.2554861009120941 x)
"""


def _ns():
    from functrans.torch.autograd import Function
    return {"torch": torch, "Function": Function}


# --- 1. backward with a gradient argument -----------------------------------------------------

def test_q_backward_with_external_grad(snippet, capsys):
    ns = snippet(Q_SETUP)
    ns = snippet(Q_DEF, ns)
    ns = snippet(Q_BACKWARD, ns)
    ns = snippet(Q_CHECK, ns)
    assert capsys.readouterr().out.splitlines() == ["tensor([True, True])",
                                                     "tensor([True, True])"]
    assert ns["a"].grad.tolist() == [36.0, 81.0]  # 9 a^2
    assert ns["b"].grad.tolist() == [-12.0, -8.0]  # -2 b


def test_q_whole_program(snippet, capsys):
    snippet(Q_WHOLE)
    assert capsys.readouterr().out == "tensor([True, True])\ntensor([True, True])\n"


def test_q_sum_backward_is_the_same(snippet):
    # "我们也可以将 Q 聚合为标量,然后隐式调用 backward(),比如 Q.sum().backward()"
    ns = snippet(Q_SETUP + Q_DEF + "Q.sum().backward()\n")
    assert ns["a"].grad.tolist() == [36.0, 81.0]
    assert ns["b"].grad.tolist() == [-12.0, -8.0]


def test_q_backward_without_gradient_raises(snippet):
    ns = snippet(Q_SETUP + Q_DEF)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        ns["Q"].backward()


# --- 2. custom Function -----------------------------------------------------------------------

def _linear_inputs(bias=True):
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = torch.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    b = torch.tensor(rng.standard_normal(5), requires_grad=True) if bias else None
    return x, w, b


def _check_linear(linear):
    x, w, b = _linear_inputs()
    out = linear(x, w, b)
    assert type(out.grad_fn).__name__ == "LinearFunctionBackward"
    np.testing.assert_allclose(out.detach().numpy(),
                               x.detach().numpy() @ w.detach().numpy().T + b.detach().numpy())
    g = np.arange(20.0).reshape(4, 5)
    out.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), g @ w.detach().numpy())
    np.testing.assert_allclose(w.grad.numpy(), g.T @ x.detach().numpy())
    np.testing.assert_allclose(b.grad.numpy(), g.sum(0))


def test_linear_function_separate_setup_context(snippet):
    ns = snippet(LINEAR_SEPARATE + LINEAR_ALIASES, _ns())
    _check_linear(ns["linear"])
    # option 1, the alias, is the same function
    ns1 = snippet(LINEAR_SEPARATE + "linear = LinearFunction.apply\n", _ns())
    _check_linear(ns1["linear"])


def test_linear_function_without_bias(snippet):
    ns = snippet(LINEAR_SEPARATE + LINEAR_ALIASES, _ns())
    x, w, _ = _linear_inputs(bias=False)
    out = ns["linear"](x, w)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((4, 5)) @ w.detach().numpy())


def test_needs_input_grad_skips_inputs_without_grad(snippet):
    ns = snippet(LINEAR_SEPARATE + LINEAR_ALIASES, _ns())
    x, w, b = _linear_inputs()
    x.requires_grad_(False)
    ns["linear"](x, w, b).sum().backward()
    assert x.grad is None and w.grad is not None and b.grad is not None


def test_mul_constant_non_tensor_argument(snippet):
    ns = snippet(MUL_CONSTANT, _ns())
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = ns["MulConstant"].apply(x, 2.5)
    assert y.tolist() == [2.5, 5.0, 7.5]
    y.sum().backward()
    assert x.grad.tolist() == [2.5, 2.5, 2.5]


def test_mul_constant_without_materialized_grads(snippet):
    ns = snippet(MUL_CONSTANT_NO_MATERIALIZE, _ns())
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = ns["MulConstant"].apply(x, 2.5)
    (y * y).sum().backward()
    assert x.grad.tolist() == [2 * 2.5 * 2.5 * v for v in (1., 2., 3.)]
    # backward really does receive None for an output no gradient reached
    seen = []

    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.set_materialize_grads(False)
            return t * 2, t * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1 * 2

    first, _ = Two.apply(x)
    first.sum().backward()
    assert seen == [None]


def test_my_cube_double_backward(snippet):
    ns = snippet(MY_CUBE + MY_CUBE_WRAPPER, _ns())
    my_cube = ns["my_cube"]
    x = torch.tensor([1.0, 2.0, -3.0], dtype=torch.double, requires_grad=True)
    y = my_cube(x)
    assert y.tolist() == [1.0, 8.0, -27.0]
    (dy,) = torch.autograd.grad(y.sum(), x, create_graph=True)
    assert dy.tolist() == [3.0, 12.0, 27.0]  # 3 x^2
    assert dy.requires_grad
    (d2y,) = torch.autograd.grad(dy.sum(), x)
    assert d2y.tolist() == [6.0, 12.0, -18.0]  # 6 x, through grad_dx * 6 * x
    assert torch.autograd.gradcheck(my_cube, (x,))
    assert torch.autograd.gradgradcheck(my_cube, (x,))


def test_gradcheck_linear_prints_true(snippet, capsys):
    ns = snippet(LINEAR_SEPARATE + LINEAR_ALIASES, _ns())
    snippet(GRADCHECK, ns)
    assert capsys.readouterr().out == "True\n"


def test_gradcheck_detects_a_wrong_backward(snippet):
    ns = snippet(LINEAR_SEPARATE.replace("grad_output.mm(weight)", "grad_output.mm(weight) * 2")
                 + LINEAR_ALIASES, _ns())
    inputs = (torch.randn(3, 4, dtype=torch.double, requires_grad=True),
              torch.randn(2, 4, dtype=torch.double, requires_grad=True))
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to "
                                           "input 0"):
        torch.autograd.gradcheck(ns["linear"], inputs, eps=1e-6, atol=1e-4)
    assert torch.autograd.gradcheck(ns["linear"], inputs, eps=1e-6, atol=1e-4,
                                    raise_exception=False) is False


def test_linear_function_combined_forward(snippet):
    ns = snippet(LINEAR_COMBINED + LINEAR_ALIASES, _ns())
    _check_linear(ns["linear"])
    snippet(GRADCHECK.replace("print(test)", "assert test is True"), ns)


def test_once_differentiable_forbids_double_backward():
    from functrans.torch.autograd.function import once_differentiable

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = torch.tensor([1.5, -2.0], dtype=torch.double, requires_grad=True)
    y = Square.apply(x)
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    assert g.tolist() == [4 * 1.5 ** 3, 4 * (-2.0) ** 3]
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()


# --- 3. the Legendre polynomial training loop -------------------------------------------------

def _parse(text):
    lines = text.splitlines()
    losses = [(int(t), float(v)) for t, v in (ln.split() for ln in lines[:-1])]
    nums = [float(v) for v in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", lines[-1])]
    return losses, nums


def test_legendre_training_loop(snippet, capsys):
    snippet(LEGENDRE)
    out = capsys.readouterr().out
    losses, coeffs = _parse(out.replace("结果", "Result"))
    want_losses, want_coeffs = _parse(LEGENDRE_OUTPUT)
    assert [t for t, _ in losses] == [t for t, _ in want_losses]
    # float32 throughout, as in PyTorch. The losses agree to ~7 significant digits: sin, pow and
    # the 2000-element sums round their last float32 bit differently in numpy and in PyTorch's
    # vectorized CPU kernels (PyTorch itself differs between AVX2 and AVX-512 machines).
    for (_, got), (_, want) in zip(losses, want_losses):
        assert got == pytest.approx(want, rel=2e-6)
    assert losses[-1][1] < losses[0][1] / 20  # "loss 在不断降低"
    a, b, c, d = coeffs
    # b and d converge to the printed digits; a and c are float32 rounding noise around 0
    assert b == pytest.approx(want_coeffs[1], rel=1e-6)
    assert d == pytest.approx(want_coeffs[3], rel=1e-6)
    assert abs(a) < 1e-7 and abs(c) < 1e-7
    assert abs(want_coeffs[0]) < 1e-7 and abs(want_coeffs[2]) < 1e-7
    assert "结果: y = " in out


def test_legendre_uses_float32_by_default():
    x = torch.linspace(-math.pi, math.pi, 2000)
    assert x.dtype == torch.float32 and torch.float is torch.float32
    a = torch.full((), 0.3, requires_grad=True)
    assert a.dtype == torch.float32 and a.shape == torch.Size([])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (a * x).dtype == torch.float32
