"""gradcheck and gradgradcheck: autograd's Jacobians against central finite differences.

The analytical Jacobian is built row by row with `autograd.grad` and one-hot output
gradients; the numerical one column by column, perturbing each input element by +-eps in place.
They must agree elementwise within `atol + rtol * |numerical|`.
"""

from __future__ import annotations

import warnings

import numpy as np

from functrans.torch import _random
from functrans.torch._creation import zeros_like
from functrans.torch._dtype import from_numpy
from functrans.torch._graph import Node, new_seq
from functrans.torch._printing import tensor_repr
from functrans.torch._tensor import Size, Tensor, edge, wrap
from functrans.torch.autograd._gradients import grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian"]

FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians disagree."""


def _fail(raise_exception, msg):
    """False, or PyTorch's GradcheckError when the check is to raise."""
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _as_tuple(x):
    return tuple(x) if isinstance(x, tuple | list) else (x,)


def _differentiable(outputs):
    return tuple(o for o in outputs if isinstance(o, Tensor) and o.requires_grad)


def _numerical_jacobians(func, inputs, diff_idx, out_sizes, eps):
    """jac[o][j]: (numel of input j, numel of output o), by central differences."""
    jac = [[None] * len(diff_idx) for _ in out_sizes]
    for jj, j in enumerate(diff_idx):
        x = inputs[j]._value
        flat = x.reshape(-1)
        if not np.shares_memory(flat, x):
            raise RuntimeError("gradcheck needs contiguous inputs to perturb in place.")
        cols = [np.zeros((x.size, n), np.float64) for n in out_sizes]
        for k in range(x.size):
            orig = flat[k].copy()
            # outputs are copied at once: one may alias the input being perturbed
            flat[k] = orig - eps
            minus_t = [np.array(o._value) for o in _tensor_outputs(func(*inputs))]
            flat[k] = orig + eps
            plus_t = [np.array(o._value) for o in _tensor_outputs(func(*inputs))]
            flat[k] = orig
            _check_same_outputs(minus_t, plus_t, tuple(int(i) for i in np.unravel_index(
                k, x.shape)), eps)
            minus = [m.astype(np.float64).reshape(-1) for m in minus_t]
            plus = [p.astype(np.float64).reshape(-1) for p in plus_t]
            for o, (p, m) in enumerate(zip(plus, minus)):
                cols[o][k] = (p - m) / (2 * eps)
        for o in range(len(out_sizes)):
            jac[o][jj] = cols[o]
    return jac


def _check_same_outputs(first, second, idx, eps):
    """PyTorch's check that perturbing an input changes no output's shape or dtype."""
    for a, b in zip(first, second):
        if a.shape != b.shape:
            raise AssertionError(
                f"Expected `func` to return outputs with the same shape when inputs are "
                f"perturbed on index {idx} by {eps}, but got: shapes {Size(a.shape)} and "
                f"{Size(b.shape)}.")
        if a.dtype != b.dtype:
            raise AssertionError(
                f"Expected `func` to return outputs with the same dtype when inputs are "
                f"perturbed on index {idx} by {eps}, but got: dtypes {from_numpy(a.dtype)} and "
                f"{from_numpy(b.dtype)}.")


def _tensor_outputs(outputs):
    return [o for o in _as_tuple(outputs) if isinstance(o, Tensor)]


def _analytical_jacobians(outputs, inputs, diff_idx):
    diff_inputs = [inputs[j] for j in diff_idx]
    jac = []
    for o in outputs:
        rows = [np.zeros((inputs[j]._value.size, o._value.size), np.float64) for j in diff_idx]
        for m in range(o._value.size):
            onehot = np.zeros(o._value.size, o._value.dtype)
            onehot[m] = 1
            gs = grad(o, diff_inputs, wrap(onehot.reshape(o._value.shape)), retain_graph=True,
                      allow_unused=True)
            for r, g in zip(rows, gs):
                if g is not None:
                    r[:, m] = np.asarray(g._value, np.float64).reshape(-1)
        jac.append(rows)
    return jac


def _jac_str(a):
    return tensor_repr(wrap(a))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True when autograd's gradients of `func` at `inputs` match finite differences.

    >>> import functrans.torch as torch
    >>> x = torch.tensor([0.5, 1.5], dtype=torch.double, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda x: (x * x).sin(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i in diff_idx:
        if inputs[i]._value.dtype not in (np.float64, np.complex128):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or "
                "complex. This check will likely fail if all the inputs are not of double "
                "precision floating point or complex. ", UserWarning, stacklevel=2)
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    all_outputs = _tensor_outputs(func(*inputs))
    outputs = _differentiable(all_outputs)
    if not outputs:
        # no differentiable output: the numerical gradient must be zero
        numerical = _numerical_jacobians(func, inputs, diff_idx,
                                         [o._value.size for o in all_outputs], eps)
        zero = not any(np.any(j != 0) for row in numerical for j in row)
        return zero or _fail(raise_exception, "Numerical gradient for function expected to be "
                             "zero")
    numerical = _numerical_jacobians(func, inputs, diff_idx,
                                     [o._value.size for o in outputs], eps)
    analytical = _analytical_jacobians(outputs, inputs, diff_idx)
    for o in range(len(outputs)):
        for jj, j in enumerate(diff_idx):
            a, n = analytical[o][jj], numerical[o][jj]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                return _fail(raise_exception, f"Jacobian mismatch for output {o} with respect to "
                             f"input {j},\nnumerical:{_jac_str(n)}\nanalytical:{_jac_str(a)}\n")
    # PyTorch computes the analytical Jacobian twice: a backward giving different values for
    # the same input and grad_output is "not reentrant" (nondeterministic)
    again = _analytical_jacobians(outputs, inputs, diff_idx)
    for first, second in zip(analytical, again):
        for a1, a2 in zip(first, second):
            if a1.size and np.max(np.abs(a1 - a2)) > nondet_tol:
                return _fail(
                    raise_exception, "Backward is not reentrant, i.e., running backward with same "
                    "input and grad_output multiple times gives different values, although "
                    "analytical gradient matches numerical gradient.The tolerance for "
                    f"nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
    if check_backward_ad and not _check_mul_by_grad_output(outputs, inputs, diff_idx,
                                                           raise_exception):
        return False
    if check_undefined_grad and check_backward_ad:
        if not _check_undefined_grad(func, inputs, diff_idx, raise_exception):
            return False
    return True


def _check_mul_by_grad_output(outputs, inputs, diff_idx, raise_exception):
    """PyTorch's check that backward is linear in grad_output: zero in, zero out."""
    gis = grad(outputs, [inputs[j] for j in diff_idx], [zeros_like(o) for o in outputs],
               allow_unused=True)
    for gi in gis:
        if gi is not None and np.any(gi._value != 0):
            return _fail(raise_exception, "backward not multiplied by grad_output")
    return True


def _undefined(t):
    """t through a node whose backward gives an undefined gradient (PyTorch's UndefinedGrad)."""

    class UndefinedGrad(Node):
        __slots__ = ()
        _is_accumulate = False

        def _backward(self, buf, create_graph):
            return [None]

    node = UndefinedGrad()
    node._next, node._n_out, node._seq = (edge(t),), 1, new_seq()
    node._pre_hooks = node._retains = None
    return wrap(t._value, True, node, 0)


def _check_undefined_grad(func, inputs, diff_idx, raise_exception):
    """PyTorch's check that backward copes with undefined output gradients: with every output's
    gradient undefined (then each one's in turn), input gradients are None or zero."""
    diff_inputs = [inputs[j] for j in diff_idx]

    def warn_bc_breaking():
        warnings.warn(
            "Backwards compatibility: New undefined gradient support checking feature is "
            "enabled by default, but it may break existing callers of this function. If this "
            'is true for you, you can call this function with "check_undefined_grad=False" '
            "to disable the feature", stacklevel=3)

    def check(outs):
        try:
            gis = grad(outs, diff_inputs, [zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            if not raise_exception:
                return False
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'
            ) from e
        for gi in gis:
            if gi is not None and np.any(gi._value != 0):
                warn_bc_breaking()
                return _fail(
                    raise_exception, "Expected all input grads to be undefined or zero when all "
                    'output grads are undefined or zero. Please look at "Notes about undefined '
                    'output gradients" in "tools/autograd/derivatives.yaml"')
        return True

    outs = _differentiable(_tensor_outputs(func(*inputs)))
    cases = [[_undefined(o) for o in outs]]
    if len(outs) > 1:
        for k in range(len(outs)):
            again = _differentiable(_tensor_outputs(func(*inputs)))
            cases.append([_undefined(o) if i == k else o for i, o in enumerate(again)])
    return all(check(c) for c in cases)


_PRIVATE_API = (
    "`{name}` was part of PyTorch's private API and not meant to be exposed. We are "
    "deprecating it and it will be removed in a future version of PyTorch. If you have a "
    "specific use for this or feature request for this to be a stable API, please file us an "
    "issue at https://github.com/pytorch/pytorch/issues/new")


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """The finite-difference Jacobians of fn's first output (fn takes the inputs as one
    tuple), one (input numel, output numel) tensor per input requiring grad (deprecated in
    PyTorch, kept for old tests)."""
    warnings.warn(_PRIVATE_API.format(name="get_numerical_jacobian"), FutureWarning,
                  stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    inputs = _as_tuple(inputs)
    targets = _as_tuple(target) if target is not None else inputs
    diff = [t for t in targets if isinstance(t, Tensor) and t.requires_grad]

    def first_output(*_):  # the targets are perturbed in place; fn reads them from inputs
        return _tensor_outputs(fn(inputs))[0]
    out = first_output()._value
    jac = _numerical_jacobians(first_output, diff, range(len(diff)), [out.size], eps)[0]
    return tuple(wrap(j.astype(out.dtype)) for j in jac)


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """(Jacobians, reentrant, sizes_ok, types_ok) of `output` with respect to the inputs that
    require grad, by backward passes, computed twice to detect nondeterminism (deprecated in
    PyTorch, kept for old tests)."""
    warnings.warn(_PRIVATE_API.format(name="get_analytical_jacobian"), FutureWarning,
                  stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    if output.is_complex():
        raise ValueError("Expected output to be non-complex. get_analytical_jacobian no longer "
                         "supports functions that return complex outputs.")
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    first = _analytical_jacobians([output], inputs, diff_idx)[0]
    second = _analytical_jacobians([output], inputs, diff_idx)[0]
    reentrant = all(a.size == 0 or np.max(np.abs(a - b)) <= nondet_tol
                    for a, b in zip(first, second))
    jacs = tuple(wrap(a.astype(inputs[j]._value.dtype)) for a, j in zip(first, diff_idx))
    return jacs, reentrant, True, True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradient itself: second derivatives against finite differences of the
    first (through `create_graph=True`)."""
    inputs = _as_tuple(inputs)
    outputs = _differentiable(_tensor_outputs(func(*inputs)))
    if grad_outputs is None:        # as PyTorch: make_tensor(low=-1, high=1), i.e. uniform_
        g = _random.default_generator
        grad_outputs = tuple(
            wrap(_random.uniform(g, o._value.size, o._value.dtype, -1.0, 1.0).reshape(
                o._value.shape), True)
            for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)

    def new_func(*args):
        input_args, gos = args[:-n_out], args[-n_out:]
        outs = _differentiable(_tensor_outputs(func(*input_args)))
        diff = tuple(x for x in input_args if isinstance(x, Tensor) and x.requires_grad)
        gis = grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gis if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad)
