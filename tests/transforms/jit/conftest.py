"""The jit tests exercise workspace buffers on arrays of tens of KiB (fast to run), below the
threshold jit uses (codegen.WORKSPACE_MIN_BYTES, chosen by benchmark): they lower it to 64 KiB."""

import pytest

from functrans.transforms.toolkit import codegen


@pytest.fixture(autouse=True)
def workspace_from_64_kib(monkeypatch):
    monkeypatch.setattr(codegen, "WORKSPACE_MIN_BYTES", 1 << 16)
