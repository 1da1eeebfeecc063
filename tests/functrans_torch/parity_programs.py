"""Programs run under both PyTorch and functrans.torch, and what they observably do.

The programs live by topic in parity_autograd_programs.py, parity_inplace_programs.py,
parity_function_programs.py, parity_ops_programs.py and parity_examples_programs.py; observing
and comparing is parity_observe.py. The parity tests compare functrans.torch's record with
PyTorch's: live when torch is installed, and always with the records in parity_fixtures.json
(written by running this file under torch==2.13.0:
`python tests/functrans_torch/parity_programs.py`, or
`python tests/functrans_torch/parity_programs.py NAME...` to record only the programs named).
"""

from __future__ import annotations

import os

import parity_autograd_programs  # noqa: F401  (each registers its programs in PROGRAMS)
import parity_examples_programs  # noqa: F401
import parity_function_programs  # noqa: F401
import parity_inplace_programs  # noqa: F401
import parity_ops_programs  # noqa: F401
from parity_observe import (PROGRAMS, _message, describe, differences, observe,  # noqa: F401
                            record_fixtures)

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "parity_fixtures.json")


def main(names=()):
    """Record every program, or with `names` only those (the other records are kept)."""
    record_fixtures(FIXTURES, PROGRAMS, names)

if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
