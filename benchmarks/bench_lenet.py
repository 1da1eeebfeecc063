"""One LeNet training step (forward, cross-entropy, backward) under functrans.torch and under
PyTorch, measured in one run: batch 64 of 1 x 28 x 28, Conv2d(1, 6, 5), ReLU, MaxPool2d(2),
Conv2d(6, 16, 5), ReLU, MaxPool2d(2), Linear(256, 10), float32, the same weights
(torch.manual_seed(0) in both: functrans.torch draws PyTorch's numbers).

Setup and timing are bench_jit_common's: one thread and one CPU for every library, the two
interleaved, the median over --repeats rounds of the per-step process CPU time.

    python benchmarks/bench_lenet.py --repeats 20
"""

from __future__ import annotations

import argparse

import bench_jit_common as common  # first: one thread, one CPU
import numpy as np

import functrans.torch as ft_torch


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
    torch = common.optional_torch()
    if torch is not None:
        libs["torch"] = torch
    steps = {name: stepper(lib, x, y) for name, lib in libs.items()}
    losses = {name: step() for name, step in steps.items()}  # both run, on the same weights
    print("first losses: " + ", ".join(f"{k} {v:.6f}" for k, v in losses.items()))
    common.print_table("LeNet training step, batch 64, float32",
                       common.time_interleaved(steps, rounds=args.repeats),
                       reference="functrans.torch")


if __name__ == "__main__":
    main()
