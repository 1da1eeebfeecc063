"""define() refuses a row it cannot register as written: a name taken, a fact the jit passes do
not read, a rule kind no transform looks up (such as the `module=` define once took)."""

import pytest

from functrans.core.avals import ShapedArray
from functrans.primitives.registry import CONVENTION_RULE_KINDS, REGISTRY, define


def _abstract(x):
    return ShapedArray(x.shape, x.dtype)


def test_a_name_is_defined_once():
    with pytest.raises(ValueError, match="'sin' is defined twice"):
        define("sin", impl=lambda x: x, abstract=_abstract)


def test_unknown_facts_are_refused():
    with pytest.raises(ValueError, match="unknown facts \\['idempotent'\\]"):
        define("test_registry_fact", impl=lambda x: x, abstract=_abstract,
               facts=dict(idempotent=True))
    assert "test_registry_fact" not in REGISTRY


@pytest.mark.parametrize("kind", ["module", "torch_vjp"])
def test_unknown_rule_kinds_are_refused(kind):
    with pytest.raises(ValueError, match=f"unknown rule kinds \\['{kind}'\\]"):
        define("test_registry_kind", impl=lambda x: x, abstract=_abstract, **{kind: "x"})
    assert "test_registry_kind" not in REGISTRY


def test_a_convention_rule_is_registered_beside_jvp():
    assert CONVENTION_RULE_KINDS == ("torch_jvp", "torch_zeros_jvp", "torch_nan_jvp")
    rows = [p for p in REGISTRY.values() if "torch_jvp" in p.rules]
    assert rows and all("jvp" in p.rules for p in rows)
    # a branch of PyTorch's rule is stated beside the whole of it
    branches = [p for p in REGISTRY.values() if "torch_zeros_jvp" in p.rules]
    assert branches and all("torch_jvp" in p.rules for p in branches)
