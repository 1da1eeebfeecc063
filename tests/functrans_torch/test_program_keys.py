"""Backward programs are cached by the params themselves: params that Python counts equal but
that build different programs never share one, unhashable params are not kept, and params only
the forward reads (an index) leave the key alone so x[0], x[1], ... share one program."""

import math

import numpy as np

import functrans.numpy as fnp
import functrans.torch as torch
from functrans.torch._programs import PROGRAMS, params_key
from functrans.torch._record import Op, run


def test_params_key_tells_equal_values_of_other_types_apart():
    keys = [params_key({"c": c}) for c in (1, 1.0, True, 0.0, -0.0, (1,), [1], np.float32(1))]
    assert len(set(keys)) == len(keys)
    assert params_key({"c": 2.5, "d": (1, 2)}) == params_key({"c": 2.5, "d": (1, 2)})
    assert params_key({}) == params_key(None) == ()


def test_unhashable_params_give_no_key():
    assert params_key({"idx": np.array([0, 1])}) is None
    assert params_key({"d": {"a": 1}}) is None


def _scaled(x, *, c):
    return fnp.multiply(x, fnp.divide(1.0, c))


SCALED = Op("ScaledBackward0", _scaled, _scaled)


def test_signed_zero_params_build_their_own_programs():
    grads = []
    for c in (0.0, -0.0):
        x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        run(SCALED, (x,), (x._value,), {"c": c}).sum().backward()
        grads.append(x.grad.numpy()[0])
    assert grads[0] == math.inf and grads[1] == -math.inf  # d/dx x/c = 1/c


def test_array_params_are_not_cached_but_still_right():
    def impl(x, *, w):
        return fnp.multiply(x, w)

    op = Op("WeightedBackward0", impl, impl)
    before = len(PROGRAMS)
    for w in ([2.0, 3.0], [5.0, 7.0]):
        x = torch.tensor([1.0, 1.0], dtype=torch.float64, requires_grad=True)
        run(op, (x,), (x._value,), {"w": np.array(w)}).sum().backward()
        assert x.grad.numpy().tolist() == w
    assert len(PROGRAMS) == before


def test_index_params_leave_the_key_alone():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    progs = {x[k].grad_fn._prog for k in range(3)}
    assert len(progs) == 1
    x[2].backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
