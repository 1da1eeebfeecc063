"""No import circle inside a floor: the modules of functrans/primitives (and of functrans/torch)
import one another in one direction only.

Every import statement counts, the ones inside functions too: an import deferred into a function
hides a circle from Python's loader, not from a reader, who still cannot understand either
module without the other. Imports under `if TYPE_CHECKING:` never run and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent


def _modules(root: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file, for every module of `package` (a package is its __init__.py)."""
    base = root.joinpath(*package.split("."))
    out = {}
    for path in sorted(base.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every Import/ImportFrom node of `tree`, at any depth, except under `if TYPE_CHECKING:`."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports (anywhere in its body)."""
    modules = _modules(root, package)

    def owner(name: str) -> str | None:
        # the innermost module of the package that `name` names or lies in
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        targets = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(owner(a.name) for a in node.names)
                continue
            if node.level:  # relative: from the package of this module, `level - 1` up
                here = name.split(".") if is_package else name.split(".")[:-1]
                here = here[:len(here) - node.level + 1]
                source = ".".join(here + ([node.module] if node.module else []))
            else:
                source = node.module
            for alias in node.names:  # `from pkg import sub` imports the submodule pkg.sub
                full = f"{source}.{alias.name}"
                targets.add(full if full in modules else owner(source))
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle (a list of modules, first == last) per strongly connected group of two or
    more modules."""
    return [_circle(graph, group) for group in circular_groups(graph)]


def circular_groups(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of two or more modules: each imports every other one,
    directly or not."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []

    def visit(v):  # Tarjan's algorithm, iterative so deep packages cannot overflow the stack
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == node:
                        break
                if len(group) > 1:
                    groups.append(set(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def _circle(graph, group):
    """A path around `group` (strongly connected) from its first module back to it."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:  # breadth first inside the group: the shortest way back to start
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & group):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{sorted(group)} is not strongly connected")


def _report(package, graph):
    lines = [f"  {' -> '.join(_circle(graph, g))}   (one of {len(g)} modules in a circle: "
             f"{', '.join(sorted(g))})" for g in circular_groups(graph)]
    return (f"import circles inside {package} (each line: a module, the module it imports, ..., "
            "back to the first; an import inside a function counts):\n" + "\n".join(lines) +
            "\nMove what both modules need into a module below them both, or the rows that need "
            "each other into one module.")


def test_the_walker_finds_circles_deferred_imports_included(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from pkg import c\n")
    (pkg / "c.py").write_text("from . import a\nfrom typing import TYPE_CHECKING\n"
                              "if TYPE_CHECKING:\n    from pkg.sub import d\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "d.py").write_text("from ..a import f\nimport pkg.sub\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert graph["pkg.sub.d"] == {"pkg.a", "pkg.sub"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    (pkg / "c.py").write_text("")
    assert cycles(import_graph(tmp_path, "pkg")) == []


def test_no_import_circle_inside_primitives():
    graph = import_graph(ROOT, "functrans.primitives")
    assert not cycles(graph), _report("functrans/primitives", graph)


def test_no_import_circle_inside_torch():
    graph = import_graph(ROOT, "functrans.torch")
    assert not cycles(graph), _report("functrans/torch", graph)
