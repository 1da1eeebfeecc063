"""gradcheck and gradgradcheck: autograd's Jacobians against central finite differences.

The analytical Jacobian is built row by row with `autograd.grad` and one-hot output
gradients; the numerical one column by column, perturbing each input element by +-eps in place.
They must agree elementwise within `atol + rtol * |numerical|`.
"""

from __future__ import annotations

import warnings

import numpy as np

from functrans.torch._tensor import Tensor, wrap

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians disagree."""


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
            flat[k] = orig - eps
            minus = [np.array(o._value, np.float64).reshape(-1)
                     for o in _tensor_outputs(func(*inputs))]
            flat[k] = orig + eps
            plus = [np.array(o._value, np.float64).reshape(-1)
                    for o in _tensor_outputs(func(*inputs))]
            flat[k] = orig
            for o, (p, m) in enumerate(zip(plus, minus)):
                cols[o][k] = (p - m) / (2 * eps)
        for o in range(len(out_sizes)):
            jac[o][jj] = cols[o]
    return jac


def _tensor_outputs(outputs):
    return [o for o in _as_tuple(outputs) if isinstance(o, Tensor)]


def _analytical_jacobians(outputs, inputs, diff_idx):
    from functrans.torch.autograd import grad
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
    from functrans.torch._printing import tensor_repr
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
    outputs = _differentiable(_tensor_outputs(func(*inputs)))
    numerical = _numerical_jacobians(func, inputs, diff_idx,
                                     [o._value.size for o in outputs], eps)
    analytical = _analytical_jacobians(outputs, inputs, diff_idx)
    for o in range(len(outputs)):
        for jj, j in enumerate(diff_idx):
            a, n = analytical[o][jj], numerical[o][jj]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {o} with respect to input "
                                     f"{j},\nnumerical:{_jac_str(n)}\nanalytical:{_jac_str(a)}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradient itself: second derivatives against finite differences of the
    first (through `create_graph=True`)."""
    from functrans.torch import _random
    from functrans.torch.autograd import grad
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
                     raise_exception=raise_exception)
