"""Memory: a backward without retain_graph frees what the graph saved, and training does not
grow memory.

The 10,000-step check counts the interpreter's allocated memory blocks
(`sys.getallocatedblocks`), which costs nothing; tracemalloc, which also sees numpy's data
buffers but slows every allocation about fourfold, watches a window of the same loop.
"""

import gc
import math
import sys
import tracemalloc
import weakref

import numpy as np

import functrans.torch as torch


def test_saved_tensors_are_freed_by_backward():
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    h = x.sin()                 # saved (as an input) by the multiplication below
    e = h.exp()                 # ExpBackward0 saves its output
    y = e * h
    refs = [weakref.ref(h), weakref.ref(h._value), weakref.ref(e._value)]
    del h, e
    gc.collect()
    assert all(r() is not None for r in refs)  # the graph holds them until backward
    y.sum().backward()
    assert [r() for r in refs] == [None, None, None]
    assert x.grad is not None


def test_retain_graph_keeps_saved_tensors_until_the_last_backward():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    ref = weakref.ref(h)
    del h
    y.backward(retain_graph=True)
    assert ref() is not None
    y.backward()
    assert ref() is None
    assert x.grad.tolist() == [2 * 9 * 0.5 * 2, 2 * 9 * 1.0 * 2]


def test_autograd_grad_frees_too_and_create_graph_retains():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    h = x.exp()
    y = (h * h).sum()
    ref = weakref.ref(h)
    del h
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    assert ref() is not None  # create_graph implies retain_graph
    (g2,) = torch.autograd.grad(g.sum(), x, retain_graph=True)
    np.testing.assert_allclose(g2.numpy(), 4 * np.exp(2 * np.array([0.5, 1.0])), rtol=1e-6)
    del g
    torch.autograd.grad(y, x)  # the first graph's last backward frees it
    assert ref() is None


def test_function_saved_tensors_are_freed():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return 2 * a * g

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x + 1
    y = Square.apply(h)
    ref = weakref.ref(h)
    del h
    y.sum().backward()
    assert ref() is None
    assert x.grad.tolist() == [4.0, 6.0]


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


def _legendre(n_points):
    """The seed's training loop (seed 001), one step per call."""
    x = torch.linspace(-math.pi, math.pi, n_points)
    y = torch.sin(x)
    params = [torch.full((), v, requires_grad=True) for v in (0.0, -1.0, 0.0, 0.3)]

    def step():
        a, b, c, d = params
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 5e-6 * p.grad
                p.grad = None
        return loss.item()

    return step


def test_10000_training_steps_do_not_grow_memory():
    step = _legendre(64)
    for _ in range(500):
        step()
    first = step()
    gc.collect()
    before = sys.getallocatedblocks()
    for _ in range(9499):
        last = step()
    gc.collect()
    after = sys.getallocatedblocks()
    assert last < first
    # a leak of one small object per step would be 9500 blocks
    assert after - before < 500, f"{after - before} memory blocks more after 9500 steps"


def test_training_steps_do_not_grow_traced_memory():
    step = _legendre(2000)
    for _ in range(100):
        step()
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(50):
            step()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            step()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # a step allocates ~100 KB of arrays; a leak of any of them would show at once
    assert after - before < 16 * 1024, f"traced memory grew by {after - before} bytes"


def test_backward_programs_are_a_bounded_cache(monkeypatch):
    # one backward program per (op, shapes, dtypes, needs): bounded, least recently used out
    from functrans.torch._programs import PROGRAMS
    monkeypatch.setattr(PROGRAMS, "maxsize", 6)
    PROGRAMS.clear()
    for n in range(1, 30):
        x = torch.tensor(np.linspace(0.1, 1.0, n), requires_grad=True)
        (x.exp() * x).sum().backward()
        v = np.linspace(0.1, 1.0, n)
        np.testing.assert_allclose(x.grad.numpy(), np.exp(v) * (1 + v), rtol=1e-6)
        assert len(PROGRAMS) <= 6
    import functrans
    functrans.clear_caches()
    assert len(PROGRAMS) == 0


def test_threads_recording_and_running_backward_get_their_own_gradients():
    import threading
    errors = []
    start = threading.Barrier(8)

    def work(t):
        start.wait()
        try:
            for i in range(40):
                n = 1 + (t + i) % 8
                v = np.linspace(0.1, 1.0, n) * (t + 1)
                x = torch.tensor(v, requires_grad=True)
                (x.sin() * x).sum().backward()
                np.testing.assert_allclose(x.grad.numpy(), np.cos(v) * v + np.sin(v),
                                           rtol=1e-6)
        except BaseException as e:  # noqa: BLE001  (reported below)
            errors.append(e)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[0]
