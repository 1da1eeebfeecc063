"""JAX programs run on functrans with only their imports changed, and print and compute what JAX
does (float64): each program in programs/ against JAX's recorded run (fixtures/, so this runs
without JAX) and, when JAX is installed, against a live JAX run. The MNIST classifier and the
Burgers PINN (jax.random-initialised) keep their parameters and loss after every step; those
trajectories must agree to 1e-12 relative.

Dtype rules differ in one place these programs avoid: JAX's mean of a boolean (or int32) array
is float32 even with x64 enabled, functrans's follows numpy (float64); the programs' accuracy
denominators are powers of two, so both print the same exact value.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from program_runner import (PROGRAM_RESULTS, PROGRAMS, compare_leaf,
                            compare_printed, compare_recorded, compare_results, printed_numbers,
                            run_program, words)


@functools.cache
def functrans_run(program: str):
    """One functrans run of each program, shared by the recorded and the live comparison."""
    return run_program(program, "functrans")


@pytest.fixture(scope="module", autouse=True)
def _forget_runs():
    yield
    functrans_run.cache_clear()  # the training trajectories hold a few hundred MB


@pytest.mark.parametrize("program", sorted(PROGRAM_RESULTS))
def test_program_matches_recorded_jax_run(program):
    compare_recorded(program, functrans_run(program), PROGRAM_RESULTS[program])


@pytest.mark.parametrize("program", sorted(PROGRAM_RESULTS))
def test_program_matches_live_jax_run(program):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    if program == "optax_training_loop":
        pytest.importorskip("optax")
    theirs = run_program(program, "jax")
    ours = functrans_run(program)
    compare_printed(ours.stdout, theirs.stdout)
    compare_results(ours.namespace, theirs.namespace, PROGRAM_RESULTS[program])


def test_programs_are_written_for_jax_alone():
    # the same text runs on both sides: its code names JAX (and optax), never functrans
    files = sorted(PROGRAMS.glob("*.py"))
    assert {f.stem for f in files} == set(PROGRAM_RESULTS)
    for path in files:
        code = "\n".join(line for line in path.read_text().splitlines()
                         if not line.lstrip().startswith("#"))
        assert "import jax" in code and "functrans" not in code, path.name


def test_training_trajectories_cover_every_step():
    # "identical weights and losses at every step": one (loss, parameters) entry per step
    import functrans.numpy as fnp
    mnist = functrans_run("mnist_classifier_fromscratch").namespace
    assert len(mnist["trajectory"]) == 12 and len(mnist["trajectory"][0][1]) == 3
    pinn = functrans_run("pinn_burgers_random_init").namespace
    assert len(pinn["trajectory"]) == 40
    # the programs saw functrans, not JAX: the redirected imports bound functrans's modules
    assert pinn["jnp"] is fnp and pinn["jax"].__name__ == "functrans"


def test_printed_numbers_are_compared_to_the_last_digit():
    assert printed_numbers("loss 1.25e-03 at step 7") == [(1.25e-3, 1e-5), (7.0, 1.0)]
    assert words("Array([1.5, 2.], dtype=float64)") == words("array([1.5, 2. ])".replace(" ]", "]"))
    compare_printed("loss 0.123456789", "loss 0.123456788")  # one unit in the last digit
    with pytest.raises(AssertionError):
        compare_printed("loss 0.123456789", "loss 0.123456787")
    with pytest.raises(AssertionError, match="printed text differs"):
        compare_printed("loss 0.5", "lost 0.5")


def test_results_are_compared_to_1e_12():
    want = np.array([1.0, -2.0, 3.0])
    compare_leaf(want * (1 + 5e-13), want, "x")
    with pytest.raises(AssertionError):
        compare_leaf(want * (1 + 5e-12), want, "x")
    with pytest.raises(AssertionError):
        compare_leaf(np.array([1, 2]), np.array([1, 3]), "ints")
