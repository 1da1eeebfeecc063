# ruff: noqa: E501  (the tutorial snippets stay verbatim)
"""Seed 004 (English, machine-reworded): the same tutorial as seed 000.

Snippets that survived the rewording run verbatim. Four did not: the rewording turned code into
prose ("is not None" -> "is just not None", "try:"/"except" -> "attempt:"/"besides",
".item()" -> ".merchandise()"); those run as the original code (seed 000 has it), and each test
says which words were restored."""

import warnings

import pytest

import functrans.torch as torch
from functrans.torch._tensor import NON_LEAF_GRAD_WARNING

# --- verbatim ---------------------------------------------------------------------------------

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

MYSTERIES_OF_GRAD = """
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.retain_grad()
b.backward()
assert isinstance(a.grad, torch.Tensor)
assert a.grad.requires_grad is False and a.grad.retains_grad is False and a.grad.is_leaf is True
assert b.grad.requires_grad is False and b.grad.retains_grad is False and b.grad.is_leaf is True
"""

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
# b.backward(retain_graph=False) # <- right here we'd get an error, as a result of in
# the earlier name we didn't retain the graph.
"""

CREATE_GRAPH = """
a = torch.tensor([5.], requires_grad=True)
b = a * a
b.retain_grad()
b.backward(create_graph=True)
# Right here an fascinating factor occurs: now a.grad would require grad!
assert a.grad.requires_grad is True
assert a.grad.is_leaf is False
# Then again, the grad of b doesn't require grad, as beforehand.
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

# --- restored: the rewording broke these lines ------------------------------------------------

GRAD_RETENTION = """
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.backward()
assert a.grad is not None   # reworded as "is just not None"
assert b.grad is None # generates a warning
"""

RETAIN_GRAD = """
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.retain_grad() # <- the distinction
b.backward()
assert a.grad is not None   # reworded as "is just not None"
assert b.grad is not None   # reworded as "is just not None"
"""

BACKWARD_TWICE = '''
a = torch.tensor([3.], requires_grad=True)
b = a * a
b.retain_grad()
b.backward()
try:                        # reworded as "attempt:"
    b.backward()
except RuntimeError:        # reworded as "besides RuntimeError:"
    """
    RuntimeError: Attempting to backward by way of the graph a second time ...
    """
    caught = True
'''

SECOND_DERIVATIVE = """
d2b_da2 = grad(db_da, a, create_graph=True)[0]
# Aspect be aware: the grad operate returns a tuple and the primary component of it's what we'd like.
assert d2b_da2.item() == 18   # reworded as "d2b_da2.merchandise() == 18"
assert d2b_da2.requires_grad is True
"""


def _ns():
    return {"torch": torch}


def test_leaf_tensors(snippet):
    snippet(LEAF_TENSORS)


def test_requires_grad_inheritance(snippet):
    snippet(INHERITANCE, _ns())


def test_grad_retention_warns(snippet):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        snippet(GRAD_RETENTION, _ns())
    assert [str(w.message) for w in caught] == [NON_LEAF_GRAD_WARNING]


def test_retain_grad(snippet):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        snippet(RETAIN_GRAD, _ns())


def test_mysteries_of_grad(snippet):
    snippet(MYSTERIES_OF_GRAD, _ns())


def test_backward_twice_raises(snippet):
    ns = snippet(BACKWARD_TWICE, _ns())
    assert ns["caught"] is True


def test_retain_graph_prints_6_12_18(snippet, capsys):
    ns = snippet(RETAIN_GRAPH, _ns())
    assert capsys.readouterr().out.splitlines() == ["tensor([6.])", "tensor([12.])",
                                                     "tensor([18.])"]
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        ns["b"].backward(retain_graph=False)


def test_create_graph(snippet):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        snippet(CREATE_GRAPH, _ns())


def test_second_derivative_is_18(snippet):
    ns = snippet(AUTOGRAD_GRAD, _ns())
    ns = snippet(SECOND_DERIVATIVE, ns)
    assert ns["d2b_da2"].item() == 18
