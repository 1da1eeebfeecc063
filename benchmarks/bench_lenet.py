"""One LeNet training step (forward, cross-entropy, backward) under functrans.torch and under
PyTorch, measured in one run: batch 64 of 1 x 28 x 28, Conv2d(1, 6, 5), ReLU, MaxPool2d(2),
Conv2d(6, 16, 5), ReLU, MaxPool2d(2), Linear(256, 10), float32, the same weights
(torch.manual_seed(0) in both: functrans.torch draws PyTorch's numbers).

BLAS threads: one (OMP/OPENBLAS/MKL_NUM_THREADS set before numpy loads) and one torch thread,
so that on a shared machine both measure one core. Reported: median and minimum step time
over --repeats steps after a warm-up step, the two libraries interleaved.

    python benchmarks/bench_lenet.py --repeats 20
"""

from __future__ import annotations

import argparse
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import functrans.torch as ft_torch  # noqa: E402


def lenet(torch):
    nn = torch.nn
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5),
                         nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(256, 10))


def stepper(torch, x, y):
    net = lenet(torch)
    xt, yt = torch.tensor(x), torch.tensor(y)

    def step():
        net.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(xt), yt)
        loss.backward()
        return float(loss.detach())
    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    x = np.random.default_rng(0).normal(size=(64, 1, 28, 28)).astype(np.float32)
    y = np.random.default_rng(1).integers(0, 10, 64)
    libs = {"functrans.torch": ft_torch}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch"] = torch
    except ImportError:
        pass
    steps = {name: stepper(lib, x, y) for name, lib in libs.items()}
    losses = {name: step() for name, step in steps.items()}  # warm-up
    times = {name: [] for name in steps}
    for _ in range(args.repeats):
        for name, step in steps.items():
            t0 = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t0)
    for name, ts in times.items():
        print(f"{name:16s} median {statistics.median(ts) * 1e3:7.1f} ms  "
              f"min {min(ts) * 1e3:7.1f} ms  (first loss {losses[name]:.6f})")


if __name__ == "__main__":
    main()
