"""The test suite's own layout: nothing under tests/ imports as a library the project uses, and
no test edits sys.modules.

tests/ is on sys.path while the suite runs (pytest puts the folder of the root conftest.py
there), so a folder tests/torch would import as `torch` wherever PyTorch is not installed and
turn `pytest.importorskip("torch")` into failures; hiding such folders by putting None into
sys.modules then broke scipy, which looks torch and jax up there. Test folders take names no
library uses: tests/functrans_torch for functrans.torch. (Not a `test_` prefix: pytest loads
the conftest.py of every tests/test* folder at start-up, and --doctest-modules then collects
those conftest files again, failing on "import file mismatch".)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PYPROJECT = TESTS.parent / "pyproject.toml"

# import names that differ from the distribution's name, and modules a distribution brings along
IMPORT_NAMES = {"typing-extensions": ["typing_extensions"], "jax": ["jax", "jaxlib"]}


def project_libraries() -> set[str]:
    """The import names of every distribution pyproject.toml names (dependencies and extras)."""
    text = PYPROJECT.read_text()
    deps = set()
    for block in re.findall(r"(?ms)^(?:dependencies|\w+) = \[(.*?)\]", text):
        deps.update(re.findall(r'"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:[\[<>=!~;].*?)?"', block))
    deps.discard("functrans")
    names = set()
    for dep in deps:
        names.update(IMPORT_NAMES.get(dep.lower(), [dep.lower().replace("-", "_")]))
    return names


def test_project_libraries_are_read():
    # guards the parser below: these must be among what the project installs
    assert {"numpy", "scipy", "torch", "jax", "pytest", "hypothesis", "pdoc"} <= \
        project_libraries()


def test_no_test_folder_or_module_imports_as_a_library():
    taken = project_libraries() | set(sys.stdlib_module_names)
    clashes = sorted(
        str(path.relative_to(TESTS.parent)) for path in TESTS.rglob("*")
        if "__pycache__" not in path.parts
        and (path.is_dir() or path.suffix == ".py")
        and (path.stem if path.suffix == ".py" else path.name) in taken)
    assert not clashes, (f"{clashes} would import as the library of the same name where it is "
                         "not installed; rename it after the package it tests (tests/torch -> "
                         "tests/functrans_torch)")


SYS_MODULES_EDIT = re.compile(
    r"sys\.modules\s*\[[^\]]*\]\s*=(?!=)"              # sys.modules[name] = ...
    r"|del\s+sys\.modules\b"                           # del sys.modules[name]
    r"|sys\.modules\.(?:pop|update|setdefault|clear|__setitem__|__delitem__)\b"
    r"|(?:setitem|delitem)\(\s*sys\.modules\b")        # monkeypatch.setitem(sys.modules, ...)


def test_no_test_edits_sys_modules():
    """Code run in a child interpreter counts too (it is written the same way)."""
    edits = [f"{path.relative_to(TESTS.parent)}:{n}" for path in sorted(TESTS.rglob("*.py"))
             if path != Path(__file__).resolve()
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if SYS_MODULES_EDIT.search(line)]
    assert not edits, (f"{edits} edit sys.modules: test what a module imports by reading "
                       "sys.modules, or in a child interpreter, never by hiding a library")
