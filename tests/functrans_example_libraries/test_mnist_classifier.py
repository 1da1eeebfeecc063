"""A program of the kind of JAX's examples/mnist_classifier.py (stax and optimizers.momentum),
run with only its imports changed: the loss at every step equal to JAX's, and the weights (their sums, sums of squares
and first entries) too, against JAX's recorded trace and live JAX when installed."""

import json

import numpy as np
import pytest

from mnist_classifier_program import FIXTURE, FUNCTRANS_IMPORTS, JAX_IMPORTS, NUM_STEPS, run

with open(FIXTURE) as _f:
    RECORDED = json.load(_f)["trace"]


def assert_traces_equal(got, want):
    assert len(got) == len(want) == NUM_STEPS
    for step, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g["loss"], w["loss"], rtol=1e-14, err_msg=f"loss, {step}")
        # jnp.mean of a boolean array is float32 in JAX, float64 (numpy's) here
        np.testing.assert_allclose(g["accuracy"], w["accuracy"], rtol=1e-7)
        np.testing.assert_allclose(g["squares"], w["squares"], rtol=1e-14, err_msg=str(step))
        np.testing.assert_allclose(g["sums"], w["sums"], rtol=1e-12, atol=1e-12,
                                   err_msg=str(step))
        for a, b in zip(g["firsts"], w["firsts"]):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-16, err_msg=str(step))


@pytest.fixture(scope="module")
def ours():
    return run(FUNCTRANS_IMPORTS)


def test_mnist_classifier_equals_recorded_jax(ours):
    assert_traces_equal(ours, RECORDED)


def test_mnist_classifier_equals_live_jax(ours):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    assert_traces_equal(ours, run(JAX_IMPORTS))
