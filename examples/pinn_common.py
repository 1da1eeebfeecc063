"""What the PINN examples share: the network, the training loop (Adam, then L-BFGS), the
command line, progress bars and figures. Each example is a script importing this module.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import optimizers as optim


# --- command line --------------------------------------------------------------------------

def parse_args(description, *, adam_steps, lbfgs_iters, quick_adam, quick_lbfgs, extra=None):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true",
                   help="a small, fast run (the test suite's); the error bound is loose")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--adam-steps", type=int, default=None,
                   help=f"Adam steps (default {adam_steps}, --quick {quick_adam})")
    p.add_argument("--lbfgs-iters", type=int, default=None,
                   help=f"L-BFGS iterations (default {lbfgs_iters}, --quick {quick_lbfgs})")
    p.add_argument("--figure", default=None, help="where to save the figure (.png)")
    p.add_argument("--no-figure", action="store_true")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--log-every", type=int, default=0, help="print the loss every N steps")
    p.add_argument("--time-budget", type=float, default=None,
                   help="stop training after this many seconds (Adam gets half)")
    for args, kwargs in (extra or []):
        p.add_argument(*args, **kwargs)
    ns = p.parse_args()
    if ns.adam_steps is None:
        ns.adam_steps = quick_adam if ns.quick else adam_steps
    if ns.lbfgs_iters is None:
        ns.lbfgs_iters = quick_lbfgs if ns.quick else lbfgs_iters
    return ns


# --- the network ---------------------------------------------------------------------------

def init_mlp(rng, sizes):
    """Glorot-normal weights, zero biases (the PINN papers' initialisation)."""
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        std = math.sqrt(2.0 / (n_in + n_out))
        params.append((rng.standard_normal((n_in, n_out)) * std, np.zeros(n_out)))
    return params


def mlp(params, z, lb=None, ub=None):
    """tanh network of one point z (shape (d,)); inputs are scaled from [lb, ub] to [-1, 1]."""
    h = z
    if lb is not None:
        lb, ub = np.asarray(lb, np.float64), np.asarray(ub, np.float64)
        h = (h - lb) * (2.0 / (ub - lb)) - 1.0
    for W, b in params[:-1]:
        h = fnp.tanh(h @ W + b)
    W, b = params[-1]
    out = h @ W + b
    return out[0] if out.shape == (1,) else out


# --- compiling -----------------------------------------------------------------------------

def compile_fn(f):
    """f traced once per input signature, optimised and compiled: ft.jit."""
    return ft.jit(f)


# --- progress and timing -------------------------------------------------------------------

class Progress:
    """tqdm when installed and wanted, else a silent counter."""

    def __init__(self, total, desc, enabled=True):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, desc=desc, leave=False, mininterval=1.0)
            except ImportError:
                pass

    def update(self, loss):
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.3e}", refresh=False)
            self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()


# --- training ------------------------------------------------------------------------------

def train(loss_fn, params, *, adam_steps, lbfgs_iters, lr=1e-3, lr_decay=0.1,
          progress=True, log_every=0, time_budget=None, points=None, batch_size=None,
          seed=0, value_and_grad=None, monitor=None, until=None):
    """Adam (learning rate decaying exponentially by lr_decay over the run) then L-BFGS.

    `loss_fn(params) -> scalar`, or `loss_fn(params, points)` when `points` (collocation
    points) is given: Adam then draws `batch_size` of them at random each step (cheaper steps;
    all of them if batch_size is None) and L-BFGS uses them all. Returns (params, history),
    history a list of (phase, step, loss). With `time_budget` (seconds) each phase stops early
    when the run has used it up (Adam at half of it), and says so; the budget is the process's
    CPU time, so a core shared with other work gives the same iterations, only later.
    `value_and_grad(params) -> (loss, grads)`, when given, replaces the jitted value_and_grad
    of loss_fn (a distributed step, say; the budget is then wall time, the work being
    elsewhere). `monitor(params) -> str` (the test error, say) is appended to every
    `log_every` line; it does not change the training. `until(params) -> bool`, asked
    every `log_every` steps, ends the training when it answers True (a time-to-accuracy
    run)."""
    # the budget counts this process's CPU time, not a busy core's, unless the work is elsewhere
    clock = time.process_time if value_and_grad is None else time.perf_counter
    if value_and_grad is not None:
        adam_value_and_grad = value_and_grad
    elif points is None:
        value_and_grad = compile_fn(ft.value_and_grad(loss_fn))
        adam_value_and_grad = value_and_grad
    else:
        vg = compile_fn(ft.value_and_grad(loss_fn))
        rng = np.random.default_rng(seed)
        n = len(points)

        def value_and_grad(p):
            return vg(p, points)

        def adam_value_and_grad(p):
            if batch_size is None or batch_size >= n:
                return vg(p, points)
            return vg(p, points[rng.choice(n, batch_size, replace=False)])
    history = []
    t0 = time.perf_counter()
    c0 = clock()
    if adam_steps > 0:
        sched = optim.exponential_decay(lr, max(adam_steps, 1), lr_decay)
        opt = optim.adam(sched)
        state = opt.init(params)
        bar = Progress(adam_steps, "adam", progress)
        for step in range(adam_steps):
            loss, grads = adam_value_and_grad(params)
            updates, state = opt.update(grads, state, params)
            params = optim.apply_updates(params, updates)
            loss = float(loss)
            history.append(("adam", step, loss))
            bar.update(loss)
            if log_every and step % log_every == 0:
                print(f"adam {step}: loss {loss:.3e} ({time.perf_counter() - t0:.0f} s)"
                      + (f" {monitor(params)}" if monitor else ""), flush=True)
                if until is not None and until(params):
                    lbfgs_iters = 0
                    break
            if time_budget and clock() - c0 > time_budget / 2:
                print(f"adam: time budget reached after {step + 1} steps", flush=True)
                break
        bar.close()
    if lbfgs_iters > 0:
        bar = Progress(lbfgs_iters, "l-bfgs", progress)
        count = [0]

        def callback(p, loss):
            history.append(("lbfgs", count[0], loss))
            count[0] += 1
            bar.update(loss)
            if log_every and count[0] % log_every == 0:
                print(f"l-bfgs {count[0]}: loss {loss:.3e} ({time.perf_counter() - t0:.0f} s)"
                      + (f" {monitor(p)}" if monitor else ""), flush=True)
                if until is not None and until(p):
                    raise StopIteration
            if time_budget and clock() - c0 > time_budget:
                print(f"l-bfgs: time budget reached after {count[0]} iterations", flush=True)
                raise StopIteration

        res = optim.minimize_lbfgs(value_and_grad, params, maxiter=lbfgs_iters,
                                   callback=callback)
        bar.close()
        params = res.params
        print(f"l-bfgs: {res.nit} iterations, {res.nfev} evaluations: {res.message}")
    print(f"training: {len(history)} steps in {time.perf_counter() - t0:.1f} s, final loss "
          f"{history[-1][2]:.3e}" if history else "training: no steps", flush=True)
    return params, history


def relative_l2(pred, exact) -> float:
    pred, exact = np.asarray(pred, np.float64), np.asarray(exact, np.float64)
    return float(np.linalg.norm(pred - exact) / np.linalg.norm(exact))


def report(err):
    print(f"relative L2 error: {err:.3e}", flush=True)


def predict(u_fn, params, points, batch=20000):
    """u at many points, vmapped in batches."""
    f = compile_fn(ft.vmap(lambda z: u_fn(params, z)))
    out = [np.asarray(f(points[i:i + batch])) for i in range(0, len(points), batch)]
    return np.concatenate(out)


def lhs(rng, n, lb, ub):
    """Latin hypercube sample of n points in the box [lb, ub]."""
    lb, ub = np.asarray(lb, np.float64), np.asarray(ub, np.float64)
    d = lb.size
    cut = (np.arange(n)[:, None] + rng.random((n, d))) / n
    for j in range(d):
        cut[:, j] = cut[rng.permutation(n), j]
    return lb + cut * (ub - lb)


# --- figures -------------------------------------------------------------------------------

def residual_adaptive(rng, residual, n, lb, ub, candidates):
    """n points where the residual is large: drawn from `candidates` uniform points of the box
    [lb, ub] with probability proportional to |r| / mean |r| + 1, `residual(points)` giving r
    (the residual-based adaptive distribution, RAD, of Wu, Zhu, Tan, Kartha and Lu, "A
    comprehensive study of non-adaptive and residual-based adaptive sampling for
    physics-informed neural networks", CMAME 403, 2023)."""
    cand = lhs(rng, candidates, lb, ub)
    r = np.abs(np.asarray(residual(cand)))
    p = r / r.mean() + 1.0
    return cand[rng.choice(candidates, n, replace=False, p=p / p.sum())]


def save_figure(path, history, panels, title):
    """Loss curve plus image panels [(name, array2d, extent, xlabel, ylabel)] or line panels
    [(name, [(x, y, label[, fmt]), ...], None, xlabel, ylabel)]; skipped without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure (pip install matplotlib)")
        return
    fig, axes = plt.subplots(1, len(panels) + 1, figsize=(4.6 * (len(panels) + 1), 3.8))
    for ax, (name, data, extent, xl, yl) in zip(axes, panels):
        if isinstance(data, list):
            for x, y, label, *style in data:
                ax.plot(x, y, style[0] if style else "-", label=label)
            ax.legend(fontsize=8)
        else:
            im = ax.imshow(data, origin="lower", aspect="auto", extent=extent, cmap="RdBu_r"
                           if "error" not in name else "viridis")
            fig.colorbar(im, ax=ax)
        ax.set_title(name)
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
    ax = axes[-1]
    if history:
        losses = np.array([h[2] for h in history])
        ax.semilogy(losses)
        n_adam = sum(1 for h in history if h[0] == "adam")
        if 0 < n_adam < len(history):
            ax.axvline(n_adam, color="gray", ls="--", lw=0.8)
            ax.text(n_adam, losses.max(), " L-BFGS", fontsize=8, va="top")
    ax.set_title("loss")
    ax.set_xlabel("step")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure saved to {path}")
