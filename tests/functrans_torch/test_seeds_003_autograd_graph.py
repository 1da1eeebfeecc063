"""Seed 003 (Chinese): "PyTorch 的 Autograd" — computation graphs, grad_fn names, leaf gradients in
a small model (w1, w2, w3 grads 28, 8, 10), and changing a leaf in place through .data or under
no_grad.

The snippets as written. Where the text shows printed output as comments, the tests compare
the printed lines (object addresses aside)."""

import re
import warnings

import pytest

import functrans.torch as torch

EXP = """
import torch
a = torch.tensor(2.0, requires_grad=True)
b = a.exp()
print(b)
# tensor(7.3891, grad_fn=<ExpBackward>)
"""

MODEL = """
input = torch.ones([2, 2], requires_grad=False)
w1 = torch.tensor(2.0, requires_grad=True)
w2 = torch.tensor(3.0, requires_grad=True)
w3 = torch.tensor(4.0, requires_grad=True)

l1 = input * w1
l2 = l1 + w2
l3 = l1 * w3
l4 = l2 * l3
loss = l4.mean()


print(w1.data, w1.grad, w1.grad_fn)
# tensor(2.) None None

print(l1.data, l1.grad, l1.grad_fn)
# tensor([[2., 2.],
#         [2., 2.]]) None <MulBackward0 object at 0x000001EBE79E6AC8>

print(loss.data, loss.grad, loss.grad_fn)
# tensor(40.) None <MeanBackward0 object at 0x000001EBE79D8208>
"""

MODEL_BACKWARD = """
loss.backward()

print(w1.grad, w2.grad, w3.grad)
# tensor(28.) tensor(8.) tensor(10.)
print(l1.grad, l2.grad, l3.grad, l4.grad, loss.grad)
# None None None None None
"""

INPLACE_DATA = """
# 方法一
a = torch.tensor([10., 5., 2., 3.], requires_grad=True)
print(a, a.is_leaf, id(a))
# tensor([10.,  5.,  2.,  3.], requires_grad=True) True 2501274822696

a.data.fill_(10.)
# 或者 a.detach().fill_(10.)
print(a, a.is_leaf, id(a))
# tensor([10., 10., 10., 10.], requires_grad=True) True 2501274822696

loss = (a*a).mean()
loss.backward()
print(a.grad)
# tensor([5., 5., 5., 5.])
"""

INPLACE_NO_GRAD = """
# 方法二
a = torch.tensor([10., 5., 2., 3.], requires_grad=True)
print(a, a.is_leaf)
# tensor([10.,  5.,  2.,  3.], requires_grad=True) True

with torch.no_grad():
    a[:] = 10.
print(a, a.is_leaf)
# tensor([10., 10., 10., 10.], requires_grad=True) True

loss = (a*a).mean()
loss.backward()
print(a.grad)
# tensor([5., 5., 5., 5.])
"""


def _addresses(text):
    return re.sub(r" at 0x[0-9a-fA-F]+>", " at 0x...>", text)


def test_exp_prints_value_and_grad_fn(snippet, capsys):
    snippet(EXP)
    # the text shows PyTorch < 1.8's node name, ExpBackward; PyTorch 2.x names it ExpBackward0
    assert capsys.readouterr().out == "tensor(7.3891, grad_fn=<ExpBackward0>)\n"


def test_model_forward_prints(snippet, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        snippet(MODEL, {"torch": torch})
    out = _addresses(capsys.readouterr().out).splitlines()
    assert out == ["tensor(2.) None None",
                   "tensor([[2., 2.],",
                   "        [2., 2.]]) None <MulBackward0 object at 0x...>",
                   "tensor(40.) None <MeanBackward0 object at 0x...>"]
    # PyTorch 2.x warns when .grad of a non-leaf (l1, loss) is read
    assert len([w for w in caught if "not a leaf Tensor" in str(w.message)]) == 2


def test_model_leaf_grads_28_8_10(snippet, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns = snippet(MODEL, {"torch": torch})
        capsys.readouterr()
        snippet(MODEL_BACKWARD, ns)
    assert capsys.readouterr().out.splitlines() == ["tensor(28.) tensor(8.) tensor(10.)",
                                                     "None None None None None"]


def test_model_intermediate_values(snippet):
    # the text's hand computation: l1 = 2, l2 = 5, l3 = 8, l4 = 40, loss = 40
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns = snippet(MODEL, {"torch": torch})
    for name, v in [("l1", 2.0), ("l2", 5.0), ("l3", 8.0), ("l4", 40.0)]:
        assert ns[name].tolist() == [[v, v], [v, v]]
    assert ns["loss"].item() == 40.0
    assert [type(ns[n].grad_fn).__name__ for n in ("l1", "l2", "l3", "l4", "loss")] == \
        ["MulBackward0", "AddBackward0", "MulBackward0", "MulBackward0", "MeanBackward0"]
    assert ns["w1"].is_leaf and not ns["l1"].is_leaf and ns["input"].is_leaf


def test_inplace_on_leaf_through_data(snippet, capsys):
    ns = snippet(INPLACE_DATA, {"torch": torch})
    out = capsys.readouterr().out.splitlines()
    ident = str(id(ns["a"]))
    assert out == [f"tensor([10.,  5.,  2.,  3.], requires_grad=True) True {ident}",
                   f"tensor([10., 10., 10., 10.], requires_grad=True) True {ident}",
                   "tensor([5., 5., 5., 5.])"]


def test_inplace_on_leaf_through_detach(snippet, capsys):
    snippet(INPLACE_DATA.replace("a.data.fill_(10.)", "a.detach().fill_(10.)"),
            {"torch": torch})
    assert capsys.readouterr().out.splitlines()[-1] == "tensor([5., 5., 5., 5.])"


def test_inplace_on_leaf_under_no_grad(snippet, capsys):
    snippet(INPLACE_NO_GRAD, {"torch": torch})
    assert capsys.readouterr().out.splitlines() == [
        "tensor([10.,  5.,  2.,  3.], requires_grad=True) True",
        "tensor([10., 10., 10., 10.], requires_grad=True) True",
        "tensor([5., 5., 5., 5.])"]


def test_inplace_on_leaf_with_grad_raises():
    # section 4: an in-place change of a leaf that requires grad is refused outside no_grad
    a = torch.tensor([10., 5., 2., 3.], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation."):
        a.fill_(10.)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a[:] = 10.
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a += 1
    assert a.tolist() == [10., 5., 2., 3.] and a._version == 0
