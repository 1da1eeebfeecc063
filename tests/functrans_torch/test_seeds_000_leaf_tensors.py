"""Seed 000 (Chinese): "PyTorch 中叶子张量的真正含义及其梯度" — leaf tensors, requires_grad
inheritance, grad retention and its warning, retain_grad, what .grad is, retain_graph and
accumulation, create_graph, autograd.grad and the second derivative for PINNs.

Every code snippet of the text, as written (the text omits `import torch` after the first
snippet: "所有代码片段都应该自包含,除了我首次包含的导入"), with assertions of what the text
says it shows."""

import warnings

import pytest

import functrans.torch as torch
from functrans.torch._engine import CREATE_GRAPH_WARNING
from functrans.torch._graph import ERR_BACKWARD_TWICE
from functrans.torch._tensor import NON_LEAF_GRAD_WARNING

LEAF_TENSORS = """
import torch
a = torch.tensor([3.], requires_grad=True)
b = a * a
c = torch.tensor([5.])
d = c * c
assert a.requires_grad is True and a.is_leaf is True
assert b.requires_grad is True and b.is_leaf is False
assert c.requires_grad is False and c.is_leaf is True
assert d.requires_grad is False and d.is_leaf is True # sic!
del a, b, c, d
"""

INHERITANCE = """
a = torch.tensor([5.], requires_grad=True)
b = torch.tensor([5.], requires_grad=True)
c = torch.tensor([5.], requires_grad=False)
d = torch.sin(a * b * c)
assert d.requires_grad == any((x.requires_grad for x in (a, b, c)))
"""

GRAD_RETENTION = """
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.backward()
assert a.grad is not None
assert b.grad is None # generates a warning
"""

RETAIN_GRAD = """
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.retain_grad() # <- the difference
b.backward()
assert a.grad is not None
assert b.grad is not None
"""

MYSTERIES_OF_GRAD = """
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.retain_grad()
b.backward()
assert isinstance(a.grad, torch.Tensor)
assert a.grad.requires_grad is False and a.grad.retains_grad is False and a.grad.is_leaf is True
assert b.grad.requires_grad is False and b.grad.retains_grad is False and b.grad.is_leaf is True
"""

BACKWARD_TWICE = '''
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.retain_grad()
b.backward()
try:
    b.backward()
except RuntimeError:
    """
    RuntimeError: Trying to backward through the graph a second time (or
    directly access saved tensors after they have already been freed). Saved
    intermediate values of the graph are freed when you call .backward() or
    autograd.grad(). Specify retain_graph=True if you need to backward through
    the graph a second time or if you need to access saved tensors after
    calling backward.
    """
'''

RETAIN_GRAPH = """
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.retain_grad()
b.backward(retain_graph=True)
print(a.grad) # prints tensor([6.])
b.backward(retain_graph=True)
print(a.grad) # prints tensor([12.])
b.backward(retain_graph=False)
print(a.grad) # prints tensor([18.])
# b.backward(retain_graph=False) # <- here we would get an error, because in
# the previous call we did not retain the graph.
"""

CREATE_GRAPH = """
a = torch.tensor([5.], requires_grad=True)
b = a * a
b.retain_grad()
b.backward(create_graph=True)
# Here an interesting thing happens: now a.grad will require grad!
assert a.grad.requires_grad is True
assert a.grad.is_leaf is False
# On the other hand, the grad of b does not require grad, as previously.
assert b.grad.requires_grad is False
assert b.grad.is_leaf is True
"""

AUTOGRAD_GRAD = """
from torch.autograd import grad
a = torch.tensor([3.], requires_grad=True)
b = a * a * a
db_da = grad(b, a, create_graph=True)[0]
assert db_da.requires_grad is True
"""

SECOND_DERIVATIVE = """
d2b_da2 = grad(db_da, a, create_graph=True)[0]
# Side note: the grad function returns a tuple and the first element of it is what we need.
assert d2b_da2.item() == 18
assert d2b_da2.requires_grad is True
"""


def _ns():
    return {"torch": torch}


def test_leaf_tensors(snippet):
    snippet(LEAF_TENSORS)


def test_computed_tensor_without_grad_is_a_leaf(snippet):
    ns = snippet(LEAF_TENSORS.replace("del a, b, c, d", ""))
    # "d.is_leaf 为真 ... 所有 requires_grad 设置为 False 的张量都被认为是叶子张量"
    assert ns["d"].grad_fn is None and ns["b"].grad_fn is not None


def test_requires_grad_is_inherited(snippet):
    ns = snippet(INHERITANCE, _ns())
    assert ns["d"].requires_grad is True
    ns = snippet(INHERITANCE.replace("[5.], requires_grad=True", "[5.], requires_grad=False"),
                 _ns())
    assert ns["d"].requires_grad is False


def test_grad_of_non_leaf_is_none_with_the_warning(snippet):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        snippet(GRAD_RETENTION, _ns())
    messages = [str(w.message) for w in caught if w.category is UserWarning]
    assert messages == [NON_LEAF_GRAD_WARNING]
    # the text quotes the message (its "informations" is older PyTorch's spelling; 2.x says
    # "information", and the "(Triggered internally at ...)" tail names a C++ source line)
    for phrase in ["The .grad attribute of a Tensor that is not a leaf Tensor is being accessed.",
                   "Its .grad attribute won't be populated during autograd.backward().",
                   "If you indeed want the .grad field to be populated for a non-leaf Tensor, use "
                   ".retain_grad() on the non-leaf Tensor.",
                   "If you access the non-leaf Tensor by mistake, make sure you access the leaf "
                   "Tensor instead.",
                   "See github.com/pytorch/pytorch/pull/30531 for more information"]:
        assert phrase in messages[0]


def test_retain_grad_populates_non_leaf_grad(snippet):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning once b retains its grad
        ns = snippet(RETAIN_GRAD, _ns())
    assert ns["b"].grad.tolist() == [1.0]
    assert ns["a"].grad.tolist() == [6.0]


def test_the_grad_is_a_leaf_tensor_not_requiring_grad(snippet):
    snippet(MYSTERIES_OF_GRAD, _ns())


def test_second_backward_raises_the_quoted_error(snippet):
    ns = snippet(BACKWARD_TWICE, _ns())  # the snippet catches the RuntimeError itself
    with pytest.raises(RuntimeError) as e:
        ns["b"].backward()
    assert str(e.value) == ERR_BACKWARD_TWICE
    quoted = ("Trying to backward through the graph a second time (or directly access saved "
              "tensors after they have already been freed). Saved intermediate values of the "
              "graph are freed when you call .backward() or autograd.grad(). Specify "
              "retain_graph=True if you need to backward through the graph a second time or if "
              "you need to access saved tensors after calling backward.")
    assert str(e.value) == quoted


def test_retain_graph_and_accumulation_6_12_18(snippet, capsys):
    ns = snippet(RETAIN_GRAPH, _ns())
    assert capsys.readouterr().out.splitlines() == ["tensor([6.])", "tensor([12.])",
                                                     "tensor([18.])"]
    # "here we would get an error, because in the previous call we did not retain the graph"
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        ns["b"].backward(retain_graph=False)


def test_create_graph_makes_the_grad_require_grad(snippet):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ns = snippet(CREATE_GRAPH, _ns())
    # side note 2: PyTorch's warning about backward(create_graph=True)
    assert [str(w.message) for w in caught] == [CREATE_GRAPH_WARNING]
    assert "create a reference cycle between the parameter and its gradient" in \
        CREATE_GRAPH_WARNING
    assert ns["a"].grad.tolist() == [10.0]
    # a.grad is a graph member: differentiate it again, d(2a)/da = 2
    (g,) = torch.autograd.grad(ns["a"].grad, ns["a"])
    assert g.tolist() == [2.0]


def test_create_graph_implies_retain_graph(snippet):
    # side note 1: "if retain_graph is None: retain_graph = create_graph"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns = snippet(CREATE_GRAPH, _ns())
        ns["b"].backward(create_graph=True)  # the graph was retained: no error
    assert ns["a"].grad.tolist() == [20.0]


def test_autograd_grad_and_the_second_derivative_18(snippet):
    ns = snippet(AUTOGRAD_GRAD, _ns())
    assert ns["db_da"].tolist() == [27.0]
    ns = snippet(SECOND_DERIVATIVE, ns)
    assert ns["d2b_da2"].tolist() == [18.0]
