"""JAX programs that need functrans features still being built, run exactly as
test_jax_programs.py runs the others (against JAX's recorded run, and a live one when JAX is
installed). Each is skipped with the feature it waits for; once that feature is in, delete its
entry from WAITING_FOR (and move the program to PROGRAM_RESULTS in program_runner.py).
"""

from __future__ import annotations

import pytest

from program_runner import (PENDING_PROGRAM_RESULTS, compare_printed, compare_recorded,
                            compare_results, run_program)

WAITING_FOR = {
    "heat_equation_at_updates": "eager x.at[...].set/add/min/max/multiply/get on functrans.numpy "
                                "results, and concrete arrays indexed by a traced loop counter",
    "lstsq_polynomial_fit": "jnp.linalg.lstsq, jnp.real, jnp.imag, jnp.conj",
}


def _cases():
    return [pytest.param(name, marks=pytest.mark.skip(reason=f"needs {WAITING_FOR[name]}"))
            if name in WAITING_FOR else name for name in sorted(PENDING_PROGRAM_RESULTS)]


@pytest.mark.parametrize("program", _cases())
def test_program_matches_recorded_jax_run(program):
    compare_recorded(program, run_program(program, "functrans"), PENDING_PROGRAM_RESULTS[program])


@pytest.mark.parametrize("program", _cases())
def test_program_matches_live_jax_run(program):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    theirs = run_program(program, "jax")
    ours = run_program(program, "functrans")
    compare_printed(ours.stdout, theirs.stdout)
    compare_results(ours.namespace, theirs.namespace, PENDING_PROGRAM_RESULTS[program])


def test_every_waiting_program_is_pending():
    assert set(WAITING_FOR) <= set(PENDING_PROGRAM_RESULTS)
