import numpy as np
import pytest

try:
    from hypothesis import settings
    # The default is derandomized, so `pytest` gives the same result on every machine and run:
    # a new user's first run never meets an example nobody has seen. Exploring new examples is
    # asked for: `pytest --hypothesis-profile=explore` (fresh random examples) or `=thorough`.
    settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
    settings.register_profile("explore", max_examples=25, deadline=None)
    settings.register_profile("thorough", max_examples=1000, deadline=None)
    settings.load_profile("ci")
except ImportError:  # hypothesis is a test extra; property tests skip without it
    pass


@pytest.fixture
def rng():
    return np.random.default_rng(0)
