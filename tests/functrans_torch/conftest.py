"""Helpers for the functrans.torch tests: running tutorial snippets under the shim."""

import re
import textwrap

import pytest


def run_snippet(source: str, namespace: dict | None = None) -> dict:
    """Execute a snippet written for PyTorch with `torch` meaning functrans.torch.

    Only the imports change (`import torch` -> `import functrans.torch as torch`,
    `import torch.nn as nn` -> `import functrans.torch.nn as nn`, and
    `from torch.x import y` -> `from functrans.torch.x import y`); every other line runs as
    written. Returns the namespace the snippet ran in."""
    src = textwrap.dedent(source)
    src = re.sub(r"^(\s*)import torch((\.\w+)+) as\b", r"\1import functrans.torch\2 as", src,
                 flags=re.M)
    src = re.sub(r"^(\s*)import torch\b(?!\.)", r"\1import functrans.torch as torch", src,
                 flags=re.M)
    src = re.sub(r"^(\s*)from torch(\.\w+)* import", lambda m: m.group(0).replace(
        "from torch", "from functrans.torch"), src, flags=re.M)
    ns = {} if namespace is None else namespace
    exec(compile(src, "<tutorial snippet>", "exec"), ns)
    return ns


@pytest.fixture
def snippet():
    return run_snippet


@pytest.fixture(autouse=True)
def _fresh_warn_once():
    """Some PyTorch warnings come once per process (TORCH_WARN_ONCE); each test starts as a
    fresh process would."""
    from functrans.torch._tensor import WARNED_ONCE
    WARNED_ONCE.clear()
    yield
