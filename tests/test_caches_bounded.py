"""Every cache in functrans is bounded: memoisation goes through `functrans.core.cache.LRUCache`
(a bound and a lock) or `functools.lru_cache` with a finite maxsize. A module-level mapping that
starts empty and fills at run time is a cache unless it is listed below with the reason its size
is bounded by something finite (the primitive table, a fixed set of names)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "functrans"

# module-level mappings that fill at run time but cannot grow without bound, and why
BOUNDED_BY_CONSTRUCTION = {
    "functrans/primitives/registry.py:REGISTRY": "the table: one entry per primitive defined",
    "functrans/tree_util.py:_registry": "one entry per pytree node type a user registers",
    "functrans/core/nan_check.py:_PLAIN_IMPLS": "one entry per primitive of the table",
    "functrans/torch/_record.py:_PRIM_OPS": "one Op per (primitive, node name) of the table",
    "functrans/torch/_graph.py:_NODE_CLASSES": "one class per PyTorch node name the shim uses",
    "functrans/torch/_ops.py:_PROMOTED": "one promoted Op per Op, and Ops are made per row "
                                         "or per composite defined at import",
    "functrans/torch/_legacy.py:LEGACY_TYPES": "the fixed set of PyTorch's legacy tensor types",
    "functrans/backend.py:_ADAPTER_OF_TYPE": "one entry per Python type passed as an argument",
    "functrans/backends/cupy.py:_IMPLS": "one wrapped impl per primitive of the table",
    "functrans/backends/dask.py:_IMPLS": "one wrapped impl per primitive of the table",
    "functrans/torch/nn/_convolution.py:_MODE_OPS": "one Op per (padding mode, 1-3 axes): "
                                                    "nine at most",
}


def _empty_mapping(node) -> bool:
    if isinstance(node, ast.Dict):
        return not node.keys
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name in ("dict", "defaultdict", "OrderedDict", "WeakValueDictionary",
                        "WeakKeyDictionary") and not node.args[1:] and not node.keywords
    return False


def _unbounded_lru(node) -> bool:
    """`functools.cache`, or `lru_cache` with maxsize None."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    if name == "cache":
        return True
    if isinstance(node, ast.Call):
        f = node.func
        fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if fname == "lru_cache":
            size = [k.value for k in node.keywords if k.arg == "maxsize"] or node.args[:1]
            return not size or (isinstance(size[0], ast.Constant) and size[0].value is None)
    return False


def module_level_caches(path: Path, root: Path = ROOT) -> tuple[list[str], list[str]]:
    """(module-level mappings that start empty, unbounded memoising decorators) of `path`."""
    tree = ast.parse(path.read_text(), str(path))
    rel = path.relative_to(root).as_posix()
    mappings, decorators = [], []
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if value is not None and _empty_mapping(value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            mappings += [f"{rel}:{t.id}" for t in targets if isinstance(t, ast.Name)]
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(_unbounded_lru(d) for d in node.decorator_list):
                decorators.append(f"{rel}:{node.lineno}: {node.name}")
    return mappings, decorators


def test_no_module_keeps_an_unbounded_cache():
    mappings, decorators = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        m, d = module_level_caches(path)
        mappings += m
        decorators += d
    unexplained = [m for m in mappings if m not in BOUNDED_BY_CONSTRUCTION]
    assert not unexplained, ("module-level mappings filled at run time: use an LRUCache "
                             "(functrans.core.cache) or explain the bound here:\n"
                             + "\n".join(unexplained))
    assert not decorators, "unbounded memoisation (give lru_cache a maxsize):\n" + \
        "\n".join(decorators)


def test_the_scan_sees_an_unbounded_cache(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import functools\n_SEEN = {}\nTABLE = {'a': 1}\n"
                     "@functools.lru_cache(maxsize=None)\ndef f(x):\n    return x\n"
                     "@functools.cache\ndef g(x):\n    return x\n"
                     "@functools.lru_cache(maxsize=8)\ndef h(x):\n    return x\n")
    mappings, decorators = module_level_caches(probe, tmp_path)
    assert mappings == ["probe.py:_SEEN"]
    assert [d.split(": ")[1] for d in decorators] == ["f", "g"]


def test_the_shim_and_jit_caches_are_lrucaches_with_bounds():
    from functrans.core.cache import LRUCache
    from functrans.core.ir import ClosedJaxpr, Jaxpr
    from functrans.torch._programs import PROGRAMS
    import functrans as ft
    assert isinstance(PROGRAMS, LRUCache) and 0 < PROGRAMS.maxsize < 1 << 20
    jitted = ft.jit(lambda x: x + 1.0)
    for n in range(1, 80):  # more shapes than the cache holds
        jitted(ft.numpy.ones(n))
    info = jitted.cache_info()
    assert info.currsize <= info.maxsize == 64
    assert ClosedJaxpr(Jaxpr([], [], [], []), []).derived.maxsize > 0
