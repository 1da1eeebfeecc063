"""Pytrees: flatten/unflatten round trips and JAX's conventions (sorted dict keys, None is an
empty node, namedtuples and registered classes are nodes)."""

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import functrans as ft
from functrans import tree_util as tu

Point = namedtuple("Point", "x y")


class Box:
    """A registered node carrying static data (`name`) beside its children."""

    def __init__(self, a, b, name="box"):
        self.a, self.b, self.name = a, b, name

    def __eq__(self, other):
        return isinstance(other, Box) and (self.a, self.b, self.name) == (other.a, other.b,
                                                                          other.name)

    def __repr__(self):  # the test ids: the same in every process (pytest-xdist compares them)
        return f"Box({self.a!r}, {self.b!r}, {self.name!r})"


tu.register_pytree_node(Box, lambda b: ([b.a, b.b], b.name),
                        lambda name, ch: Box(ch[0], ch[1], name))

TREES = [
    1.0,
    (),
    (1, 2),
    [1, [2, (3,)]],
    {"b": 1, "a": 2},
    None,
    (None, 1, [None]),
    Point(1, (2, 3)),
    Box(1, [2, 3], name="x"),
    {"z": Point(1, None), "a": [Box(2, 3), {"k": (4,)}]},
    OrderedDict([("b", 1), ("a", 2)]),
]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_flatten_unflatten_round_trip(tree):
    leaves, treedef = tu.tree_flatten(tree)
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == len(leaves)
    assert tu.tree_leaves(tree) == leaves
    assert tu.tree_structure(tree) == treedef
    assert hash(tu.tree_structure(tree)) == hash(treedef)


def test_leaf_order_follows_sorted_dict_keys_as_in_jax():
    tree = {"b": 1, "a": (2, None, [3, Point(4, 5)]), "c": Box(6, 7)}
    assert tu.tree_leaves(tree) == [2, 3, 4, 5, 1, 6, 7]


def test_none_is_an_empty_node_not_a_leaf():
    assert tu.tree_leaves(None) == []
    assert tu.tree_leaves([None, (None,)]) == []
    assert tu.tree_map(lambda x: x + 1, (1, None, 2)) == (2, None, 3)
    assert not tu.treedef_is_leaf(tu.tree_structure(None))
    assert tu.treedef_is_leaf(tu.tree_structure(np.ones(3)))


def test_ordered_dict_keeps_insertion_order():
    assert tu.tree_leaves(OrderedDict([("b", 1), ("a", 2)])) == [1, 2]


def test_structures_compare_by_shape_of_tree_and_node_data():
    s = tu.tree_structure
    assert s((1, 2)) == s((3, 4))
    assert s((1, 2)) != s([1, 2])
    assert s({"a": 1}) != s({"b": 1})
    assert s(Point(1, 2)) != s((1, 2))
    assert s(Box(1, 2, "p")) != s(Box(1, 2, "q"))  # aux data is part of the structure
    assert s(Box(1, 2, "p")) == s(Box(5, 6, "p"))


def test_tree_map_over_several_trees_and_is_leaf():
    a = {"x": (1, 2), "y": 3}
    b = {"x": (10, 20), "y": 30}
    assert tu.tree_map(lambda u, v: u + v, a, b) == {"x": (11, 22), "y": 33}
    assert tu.tree_map(len, {"p": (1, 2), "q": (3,)},
                       is_leaf=lambda t: isinstance(t, tuple)) == {"p": 2, "q": 1}
    with pytest.raises(ValueError, match="structures differ"):
        tu.tree_map(lambda u, v: u, (1, 2), [1, 2])


def test_unflatten_with_wrong_number_of_leaves_says_so():
    treedef = tu.tree_structure((1, (2, 3)))
    with pytest.raises(ValueError, match="too many leaves"):
        tu.tree_unflatten(treedef, [1, 2, 3, 4])
    with pytest.raises(ValueError, match="too few leaves"):
        tu.tree_unflatten(treedef, [1, 2])


def test_treedef_repr_reads_like_jax():
    assert repr(tu.tree_structure({"b": 1, "a": (2, None, [3])})) == \
        "{'a': (*, None, [*]), 'b': *}"
    assert repr(tu.tree_structure((1,))) == "(*,)"


def test_registered_nodes_pass_through_transforms():
    def loss(p):
        return p.a * p.a + 3.0 * p.b[0]

    g = ft.grad(loss)(Box(2.0, [1.0], name="params"))
    assert isinstance(g, Box) and g.name == "params"
    assert float(g.a) == 4.0 and float(g.b[0]) == 3.0

    g = ft.grad(lambda p: p.x * p.y)(Point(2.0, 5.0))
    assert isinstance(g, Point) and (float(g.x), float(g.y)) == (5.0, 2.0)


def test_tree_reduce_and_all():
    tree = {"a": 1, "b": (2, [3, None])}
    assert tu.tree_reduce(lambda x, y: x + y, tree) == 6
    assert tu.tree_reduce(lambda x, y: x + y, tree, 10) == 16
    assert tu.tree_all({"a": True, "b": (1, [2.0])}) and not tu.tree_all([True, (0,)])
    with pytest.raises(TypeError):  # functools.reduce's own error on no leaves, no initializer
        tu.tree_reduce(lambda x, y: x + y, {})


def test_jax_tree_short_names_are_the_tree_util_functions():
    from functrans import tree
    params = [{"w": np.ones(2), "b": 0.5}, {"w": np.arange(2.0), "b": -1.0}]
    doubled = tree.map(lambda x: 2 * x, params)
    assert tree.structure(doubled) == tu.tree_structure(params)
    assert [np.asarray(x).tolist() for x in tree.leaves(doubled)] == \
        [1.0, [2.0, 2.0], -2.0, [0.0, 2.0]]
    leaves, treedef = tree.flatten(params)
    assert tree.unflatten(treedef, leaves)[1]["b"] == -1.0
    assert tree.reduce(lambda x, y: x + np.sum(y), params, 0.0) == 0.5 + 2.0 - 1.0 + 1.0
    assert tree.all(tree.map(lambda x: np.all(np.asarray(x) > -2), params))
