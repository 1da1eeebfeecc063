"""Per-op overhead of functrans.torch against PyTorch eager on small tensors.

The program: a length-16 float32 vector that requires grad goes through 200 rounds of
`sin`, multiply by 1.0001, add 0.1 (600 recorded ops), then `sum()` and `backward()`. Both
libraries run it in the same process, interleaved (best of several repeats of many calls), and
the report gives milliseconds per forward + backward for each and their ratio (target: the shim
at most as slow as PyTorch, ratio <= 1). Without torch installed only the shim is timed.

    python benchmarks/bench_torch_shim.py [--rounds 200] [--size 16] [--number 20] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # a source checkout


def program(lib, rounds: int, size: int):
    def run():
        x = lib.linspace(0.0, 1.0, size, requires_grad=True)
        y = x
        for _ in range(rounds):
            y = lib.sin(y) * 1.0001 + 0.1
        y.sum().backward()
        return x.grad
    return run


def best(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--size", type=int, default=16)
    p.add_argument("--number", type=int, default=20)
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args(argv)

    import functrans.torch as ft_torch
    libs = {"functrans.torch": ft_torch}
    try:
        import torch
        torch.set_num_threads(1)
        libs["torch (eager CPU)"] = torch
    except ImportError:
        pass
    fns = {name: program(lib, args.rounds, args.size) for name, lib in libs.items()}
    for fn in fns.values():  # warm up (and check both run)
        fn()
    times = {name: [] for name in fns}
    for _ in range(args.repeat):  # interleaved, so machine noise hits both alike
        for name, fn in fns.items():
            times[name].append(best(fn, args.number, 1))
    result = {name: min(ts) for name, ts in times.items()}
    n_ops = 3 * args.rounds + 1
    print(f"{args.rounds}-round chain (sin, *1.0001, +0.1) on float32[{args.size}], forward + "
          f"backward ({n_ops} recorded ops):")
    for name, t in result.items():
        print(f"  {name:20s} {t * 1e3:8.3f} ms   ({t / n_ops * 1e6:6.2f} us per op)")
    if len(result) == 2:
        shim, ref = result["functrans.torch"], result["torch (eager CPU)"]
        print(f"  ratio functrans.torch / torch: {shim / ref:.2f}  (target <= 1)")
    return result


if __name__ == "__main__":
    main()
