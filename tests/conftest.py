import os

import numpy as np
import pytest

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
