"""glibc's malloc, told to keep freed memory for the next call of a program.

A compiled program's intermediates that its workspace does not hold (see `codegen`) are fresh
numpy arrays on every call. With glibc's defaults, freed memory at the top of the heap is given
back to the system once it passes a threshold that follows the sizes freed so far, so a program
whose arrays come and go in varying sizes maps, faults in and zero-fills many of its pages again
on each call: 1,874 page faults a call for the gradient of the heat example's loss, 10.5 ms a
call, against 77 faults and 5.2 ms with the memory kept (`benchmarks/README.md`).

`keep_freed_memory` raises, once per process, when the first program is compiled: the size
from which malloc maps an allocation directly (M_MMAP_THRESHOLD, to 32 MiB) and the free memory
at the heap's top it keeps (M_TRIM_THRESHOLD, to 256 MiB). A process then holds up to 256 MiB
of freed memory for reuse. Nothing is changed where the C library is not glibc, where the
process set either threshold itself (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_), or with
FUNCTRANS_KEEP_FREED_MEMORY=0.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3     # glibc's mallopt parameters
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20

_lock = threading.Lock()
_state: list = []       # [whether malloc's thresholds were raised], once decided


def keep_freed_memory() -> bool:
    """Raise glibc malloc's thresholds (see the module docstring), once; whether they are."""
    if _state:
        return _state[0]
    with _lock:
        if not _state:
            _state.append(_raise_thresholds())
    return _state[0]


def _raise_thresholds() -> bool:
    if not sys.platform.startswith("linux") or \
            os.environ.get("FUNCTRANS_KEEP_FREED_MEMORY", "1") == "0" or \
            "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(None)            # the C library the process runs on
        libc.gnu_get_libc_version           # glibc's own symbol: another libc has none
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
