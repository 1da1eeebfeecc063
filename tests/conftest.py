import importlib.util
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

# With tests/ on sys.path (above, and pytest's own rootdir insertion), the folders tests/torch,
# tests/scipy, ... would import as empty namespace packages wherever the real library is not
# installed, so `pytest.importorskip("torch")` would not skip and tests would fail on
# "module 'torch' has no attribute 'tensor'". Make such imports fail as they should.
for _name in ("torch", "scipy", "jax", "matplotlib"):
    _spec = importlib.util.find_spec(_name)
    if _spec is None or _spec.origin is None:  # absent, or only a folder of tests/
        sys.modules[_name] = None  # `import _name` now raises ModuleNotFoundError

try:
    from hypothesis import settings
    settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
    settings.register_profile("dev", max_examples=10, deadline=None)
    settings.register_profile("thorough", max_examples=1000, deadline=None)
    # pytest --hypothesis-profile=thorough overrides this default
    settings.load_profile("ci" if os.environ.get("CI") else "dev")
except ImportError:  # hypothesis is a test extra; property tests skip without it
    pass


@pytest.fixture
def rng():
    return np.random.default_rng(0)
