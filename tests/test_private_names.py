"""Private names stay in their package: no module of functrans imports (or reads as a module
attribute) a `_name` defined in another package's module.

The rule (docs/STYLE "Private names stay in their module (or their package's private
modules)"): a name starting with one underscore may be used outside its module only by
modules of the same package (its sub-packages included), and only when it lives in a private
module of that package (`functrans/torch/_tensor.py` may serve `_shared_vc` to
`functrans/torch/autograd/function.py`: both are the shim's own code). Importing a private
*module* (`from functrans.torch import _dtype`) is the package using its own parts and is
allowed. What another floor needs becomes a public name of the floor below
(`functrans.core.trace.trace_state`, `functrans.transforms.vjp.check_differentiable`).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "functrans"


def _module_of(path: Path, root: Path) -> tuple[list[str], list[str]]:
    """(the module's dotted parts, the parts of the package it belongs to)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        return parts[:-1], parts[:-1]
    return parts, parts[:-1]


def _is_module(parts: list[str], root: Path) -> bool:
    where = root.joinpath(*parts)
    return where.with_suffix(".py").exists() or (where / "__init__.py").exists()


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def allowed(importer_pkg: list[str], source: list[str]) -> bool:
    """Whether a module of package `importer_pkg` may use a private name of module `source`."""
    owner = source[:-1]
    return _is_private(source[-1]) and importer_pkg[:len(owner)] == owner


def private_uses(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: module.name` for each private name `path` takes from another module
    (`root` holds the functrans package)."""
    own, pkg = _module_of(path, root)
    tree = ast.parse(path.read_text(), str(path))
    found, modules = [], {}  # local name -> module parts, for attribute reads
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("functrans.") and a.asname:
                    modules[a.asname] = a.name.split(".")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.split(".")[0] == "functrans":
            source = node.module.split(".")
            for a in node.names:
                if _is_module(source + [a.name], root):
                    modules[a.asname or a.name] = source + [a.name]
                elif _is_private(a.name) and not allowed(pkg, source):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: "
                                 f"{node.module}.{a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr) and \
                isinstance(node.value, ast.Name) and node.value.id in modules:
            source = modules[node.value.id]
            if source == own:
                continue
            if _is_module(source + [node.attr], root):
                source = source + [node.attr]
                if allowed(pkg, source):
                    continue
            elif allowed(pkg, source):
                continue
            found.append(f"{path.relative_to(root)}:{node.lineno}: "
                         f"{'.'.join(source)}.{node.attr}")
    return found


# PyTorch's own private names, kept where PyTorch keeps them because PyTorch's modules (and
# user code ported from them) import them across modules from exactly these homes
PYTORCH_HOMES = {"functrans.torch.nn.modules.module._addindent",
                 "functrans.torch.nn.init._calculate_fan_in_and_fan_out"}


def test_no_module_takes_a_private_name_from_another_package():
    bad = [line for path in sorted(PACKAGE.rglob("*.py")) for line in private_uses(path)
           if line.rsplit(": ", 1)[1] not in PYTORCH_HOMES]
    assert not bad, ("private names used outside their package (make them public names of "
                     "the module that defines them, or move the user):\n" + "\n".join(bad))


def test_the_check_sees_a_private_import_across_packages(tmp_path):
    """The walk itself: a core name taken by numpy is reported, a package-private one not."""
    assert not allowed(["functrans", "numpy"], ["functrans", "core", "trace"])
    assert not allowed(["functrans", "numpy"], ["functrans", "torch", "_tensor"])
    assert allowed(["functrans", "torch", "autograd"], ["functrans", "torch", "_tensor"])
    assert not allowed(["functrans", "torch"], ["functrans", "torch", "autograd", "_x"])
    for folder in ("numpy", "core", "torch"):
        (tmp_path / "functrans" / folder).mkdir(parents=True)
    (tmp_path / "functrans" / "torch" / "_programs.py").write_text("_private = 1\n")
    probe = tmp_path / "functrans" / "numpy" / "probe.py"
    probe.write_text("from functrans.core.trace import _TraceState\n"
                     "from functrans.torch import _programs\n"
                     "from functrans.numpy._core import _ok\n"
                     "x = _programs._private\n")
    found = private_uses(probe, tmp_path)
    assert len(found) == 2, found
    assert "functrans.core.trace._TraceState" in found[0]
    assert "functrans.torch._programs._private" in found[1]
