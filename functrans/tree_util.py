"""Pytrees: nested tuples, lists, dicts (sorted keys), None and registered nodes, with arrays
or scalars at the leaves. Transforms flatten their arguments and results through these."""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Any, Callable, NamedTuple

__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_map",
           "tree_leaves", "tree_structure", "treedef_is_leaf", "tree_flatten_with_path",
           "keystr", "tree_reduce", "tree_all"]


class _NodeType(NamedTuple):
    flatten: Callable[[Any], tuple[list, Any]]
    unflatten: Callable[[Any, list], Any]


_registry: dict[type, _NodeType] = {}


def register_pytree_node(cls: type, flatten_fn, unflatten_fn) -> None:
    """Make `cls` a pytree node: flatten_fn(x) -> (children, aux); unflatten_fn(aux, children)."""
    _registry[cls] = _NodeType(flatten_fn, unflatten_fn)


register_pytree_node(tuple, lambda t: (list(t), None), lambda _, c: tuple(c))
register_pytree_node(list, lambda l: (list(l), None), lambda _, c: list(c))
register_pytree_node(dict, lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
                     lambda keys, c: dict(zip(keys, c)))
register_pytree_node(OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, c: OrderedDict(zip(keys, c)))
register_pytree_node(type(None), lambda _: ([], None), lambda _, c: None)


class PyTreeDef:
    """The structure of a pytree with its leaves removed. Hashable, so it can key caches."""

    __slots__ = ("node_type", "node_data", "children", "num_leaves", "_hash")

    def __init__(self, node_type, node_data, children: tuple):
        self.node_type = node_type
        self.node_data = node_data
        self.children = children
        self.num_leaves = 1 if node_type is None else sum([c.num_leaves for c in children])
        self._hash = hash((node_type, node_data, children))

    def __eq__(self, other):
        return (isinstance(other, PyTreeDef) and self._hash == other._hash
                and self.node_type == other.node_type and self.node_data == other.node_data
                and self.children == other.children)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        if self.node_type is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in
                                   zip(self.node_data, self.children)) + "}"
        if self.node_type is type(None):
            return "None"
        return f"{self.node_type.__name__}({inner})"


_LEAF = PyTreeDef(None, None, ())


def _node_type_of(x):
    t = type(x)
    if t in _registry:
        return t, _registry[t]
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
        return t, _NodeType(lambda nt: (list(nt), None), lambda _, c, t=t: t(*c))
    return None, None


def tree_flatten(tree, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """Leaves of `tree` in order, and its structure."""
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


# module-level recursion (not a closure calling itself, which is a reference cycle left for
# the garbage collector on every call)
def _flatten(x, is_leaf, leaves: list) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    node = _registry.get(t)
    if node is None:
        t, node = _node_type_of(x)  # a namedtuple, or a leaf
        if node is None:
            leaves.append(x)
            return _LEAF
    children, data = node.flatten(x)
    return PyTreeDef(t, data, tuple([_flatten(c, is_leaf, leaves) for c in children]))


def tree_flatten_with_path(tree, is_leaf=None) -> tuple[list, PyTreeDef]:
    """Like tree_flatten, but each leaf comes as (path, leaf); a path is a tuple of keys
    written as in Python (`[0]`, `['w']`, `.x`), joined by `keystr`, for error messages."""
    paths: list = []

    def rec(x, path):
        if is_leaf is not None and is_leaf(x):
            paths.append(path)
            return
        t, node = _node_type_of(x)
        if node is None:
            paths.append(path)
            return
        children, data = node.flatten(x)
        if t is dict or t is OrderedDict:
            keys = [f"[{k!r}]" for k in data]
        elif hasattr(x, "_fields") and isinstance(x, tuple):
            keys = [f".{name}" for name in x._fields]
        else:
            keys = [f"[{i}]" for i in range(len(children))]
        for k, c in zip(keys, children):
            rec(c, (*path, k))

    leaves, treedef = tree_flatten(tree, is_leaf)
    rec(tree, ())
    return list(zip(paths, leaves)), treedef


def keystr(path) -> str:
    """A path from tree_flatten_with_path as text: `[1]['w']`."""
    return "".join(path)


def tree_unflatten(treedef: PyTreeDef, leaves) -> Any:
    """Rebuild a pytree of structure `treedef` from `leaves`."""
    leaves = list(leaves)
    if len(leaves) < treedef.num_leaves:
        raise ValueError(f"tree_unflatten: too few leaves ({len(leaves)}) for structure "
                         f"{treedef}, which has {treedef.num_leaves}")
    it = iter(leaves)
    out = _unflatten(treedef, it)
    if next(it, _sentinel) is not _sentinel:
        raise ValueError(f"tree_unflatten: too many leaves ({len(leaves)}) for structure "
                         f"{treedef}, which has {treedef.num_leaves}")
    return out


def _unflatten(td: PyTreeDef, it):
    if td.node_type is None:
        return next(it)
    children = [_unflatten(c, it) for c in td.children]
    t = td.node_type
    node = _registry.get(t)
    if node is None:  # namedtuple
        return t(*children)
    return node.unflatten(td.node_data, children)


_sentinel = object()


def tree_leaves(tree, is_leaf=None) -> list:
    """The leaves of `tree`, in tree_flatten's order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    """The PyTreeDef of `tree` (its structure, without the leaves)."""
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` describes a single leaf."""
    return treedef.node_type is None


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    """Apply `f` to corresponding leaves of `tree` and of each tree in `rest`."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} and {r_def}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_reduce(function: Callable, tree, initializer: Any = _sentinel, is_leaf=None):
    """functools.reduce of `function` over the leaves of `tree` (from `initializer`, if given).

    >>> tree_reduce(lambda a, b: a + b, {"a": 1, "b": (2, 3)})
    6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _sentinel:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree, is_leaf=None) -> bool:
    """Whether every leaf of `tree` is true.

    >>> tree_all({"a": True, "b": (1, 2.0)}), tree_all([True, (0,)])
    (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


def broadcast_prefix(prefix, tree, is_leaf=None) -> list:
    """Leaves of `prefix` repeated over the subtrees of `tree` they cover (for in_axes etc.)."""
    out: list = []

    def rec(p, t):
        if p is None or _node_type_of(p)[1] is None or (is_leaf and is_leaf(p)):
            out.extend([p] * len(tree_leaves(t)))
            return
        pt, pnode = _node_type_of(p)
        tt, tnode = _node_type_of(t)
        if pt is not tt:
            raise ValueError(f"prefix structure {tree_structure(prefix)} does not match "
                             f"{tree_structure(tree)}")
        pc, pd = pnode.flatten(p)
        tc, td = tnode.flatten(t)
        if pd != td or len(pc) != len(tc):
            raise ValueError(f"prefix structure {tree_structure(prefix)} does not match "
                             f"{tree_structure(tree)}")
        for a, b in zip(pc, tc):
            rec(a, b)

    rec(prefix, tree)
    return out

