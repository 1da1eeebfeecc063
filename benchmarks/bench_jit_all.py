"""All jit benchmarks in one run: W1 (MLP gradient), W5 (per-op overhead), W4 (nested-grad
equation counts), W6 (Hessian). Each section prints its own table.

    python benchmarks/bench_jit_all.py
"""

from __future__ import annotations

import bench_jit_common  # noqa: F401  (sets thread variables before numpy loads)
import bench_jit_w1
import bench_jit_w4
import bench_jit_w5
import bench_jit_w6

if __name__ == "__main__":
    print(f"functrans jit's default backend here: {bench_jit_common.jit_backend()}")
    for module in (bench_jit_w1, bench_jit_w5, bench_jit_w4, bench_jit_w6):
        module.main([])
