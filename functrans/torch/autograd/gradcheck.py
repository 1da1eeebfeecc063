"""gradcheck and gradgradcheck: autograd's Jacobians (one backward per output element) against
central finite differences (each input element perturbed in place by +-eps)."""

from __future__ import annotations

import warnings

import numpy as np

from functrans.torch._complex import part_of_outputs
from functrans.torch._creation import empty_like, zeros_like
from functrans.torch._dtype import from_numpy
from functrans.torch._printing import tensor_repr
from functrans.torch._tensor import Size, Tensor, edge, wrap
from functrans.torch.autograd._gradients import grad, jacobian_rows
from functrans.torch.autograd.function import Error

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
_UNDEFINED_NOTE = 'Please look at "Notes about undefined output gradients" in ' \
    '"tools/autograd/derivatives.yaml"'
_BC_BREAKING = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, you "
    'can call this function with "check_undefined_grad=False" to disable the feature')
_PRIVATE_API = (
    "`{name}` was part of PyTorch's private API and not meant to be exposed. We are "
    "deprecating it and it will be removed in a future version of PyTorch. If you have a "
    "specific use for this or feature request for this to be a stable API, please file us an "
    "issue at https://github.com/pytorch/pytorch/issues/new")


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians disagree."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, tuple | list) else (x,)


def _outputs(outputs, differentiable=True):
    """The tensor outputs (those requiring grad, when `differentiable`)."""
    return [o for o in _as_tuple(outputs) if isinstance(o, Tensor)
            and (o.requires_grad or not differentiable)]


def _diff_indices(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _numerical_jacobians(func, inputs, diff_idx, out_sizes, eps):
    """jac[o][j]: (numel of input j, numel of output o), by central differences."""
    # complex stays complex: PyTorch's conjugate Wirtinger derivative ds/dx + i ds/dy of each
    # real output (complex outputs are checked by their real and imaginary parts)
    jac = [[np.zeros((inputs[j]._value.size, n), np.result_type(inputs[j]._value, np.float64))
            for j in diff_idx] for n in out_sizes]
    for c, j in enumerate(diff_idx):
        x = inputs[j]._value
        steps = (eps, eps * 1j) if x.dtype.kind == "c" else (eps,)
        for k, idx in enumerate(np.ndindex(x.shape)):  # row-major, as the Jacobian's rows
            orig = x[idx]
            for step, unit in zip(steps, (1, 1j)):
                sides = []
                for value in (orig - step, orig + step):
                    x[idx] = value  # outputs are copied at once: one may alias the input
                    sides.append([np.array(o._value) for o in _outputs(func(*inputs), False)])
                x[idx] = orig
                _check_same_outputs(*sides, idx, eps)
                for o, (m, p) in enumerate(zip(*sides)):
                    jac[o][c][k] += unit * (p.astype(np.float64).reshape(-1) -
                                            m.astype(np.float64).reshape(-1)) / (2 * eps)
    return jac


def _check_same_outputs(first, second, idx, eps):
    """PyTorch's check that perturbing an input changes no output's shape or dtype."""
    for a, b in zip(first, second):
        for what, x, y, show in (("shape", a.shape, b.shape, Size),
                                 ("dtype", a.dtype, b.dtype, from_numpy)):
            if x != y:
                raise AssertionError(
                    f"Expected `func` to return outputs with the same {what} when inputs are "
                    f"perturbed on index {idx} by {eps}, but got: {what}s {show(x)} and "
                    f"{show(y)}.")


def _analytical_jacobian(output, inputs, diff_idx, nondet_tol):
    """(jac[j]: (numel of input j, numel of output), reentrant: two runs agree)."""
    diff = [inputs[j] for j in diff_idx]

    def jacobian():
        rows = jacobian_rows(output, diff)
        dtypes = [np.result_type(x._value, np.float64) for x in diff]  # complex stays complex
        return [np.array([np.zeros(x._value.size, dt) if r[k] is None else
                          np.asarray(r[k]._value, dt).reshape(-1) for r in rows], dt)
                .reshape(len(rows), x._value.size).T for k, (x, dt) in enumerate(zip(diff, dtypes))]
    first, second = jacobian(), jacobian()
    return first, all(a.size == 0 or np.max(np.abs(a - b)) <= nondet_tol
                      for a, b in zip(first, second))


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
    diff_idx = _diff_indices(inputs)
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
    try:  # as PyTorch: a failed check raises, and raise_exception=False makes that False
        outputs = _check_jacobians(func, inputs, diff_idx, eps, atol, rtol, nondet_tol)
        if outputs and check_backward_ad:
            if not _zero_in_zero_out(outputs, [inputs[j] for j in diff_idx]):
                raise GradcheckError("backward not multiplied by grad_output")
            if check_undefined_grad:
                _check_undefined_grad(func, inputs, diff_idx)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _check_jacobians(func, inputs, diff_idx, eps, atol, rtol, nondet_tol):
    """Each output's Jacobian, analytical against numerical; the outputs requiring grad."""
    outputs = _outputs(func(*inputs))
    # complex outputs: PyTorch checks the imaginary parts, then the real parts
    complex_outs = [o for o, t in enumerate(outputs) if t._value.dtype.kind == "c"]
    parts = [(part_of_outputs(func, p), p) for p in ("imaginary", "real")] if complex_outs \
        else [(func, None)]
    for part_fn, part in parts:
        part_outs = _outputs(part_fn(*inputs), False)
        numerical = _numerical_jacobians(part_fn, inputs, diff_idx,
                                         [o._value.size for o in part_outs], eps)
        if not outputs:  # no differentiable output: the numerical gradient must be zero
            if any(np.any(j != 0) for row in numerical for j in row):
                raise GradcheckError("Numerical gradient for function expected to be zero")
            return outputs
        # as PyTorch, the numerical Jacobians of outputs not requiring grad are left out
        pairs = [(t, n) for t, n in zip(part_outs, numerical) if t.requires_grad]
        for o, (out, n_row) in enumerate(pairs):
            analytical, reentrant = _analytical_jacobian(out, inputs, diff_idx, nondet_tol)
            if not reentrant:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}." + FAILED_NONDET_MSG)
            prefix = f"While considering the {part} part of complex outputs only, " \
                if o in complex_outs else ""
            for j, a, n in zip(diff_idx, analytical, n_row):
                if not np.allclose(a, n, rtol=rtol, atol=atol):
                    raise GradcheckError(
                        f"{prefix}Jacobian mismatch for output {o} with respect to input {j},\n"
                        f"numerical:{tensor_repr(wrap(n))}\nanalytical:{tensor_repr(wrap(a))}\n")
    return outputs


def _zero_in_zero_out(outputs, inputs) -> bool:
    """Whether backward, linear in grad_output, gives no nonzero gradient from zero ones."""
    gis = grad(outputs, inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    return not any(gi is not None and np.any(gi._value != 0) for gi in gis)


class UndefinedGrad(Error):
    """A node whose backward gives an undefined gradient (PyTorch's UndefinedGrad)."""

    __slots__ = ()
    _cpp_prefix = ""

    def _backward(self, buf, create_graph):
        return [None]


def _check_undefined_grad(func, inputs, diff_idx):
    """PyTorch's check that undefined output gradients (all, then each) give None or zeros."""
    diff_inputs = [inputs[j] for j in diff_idx]

    def undefined(o):
        return wrap(o._value, True, UndefinedGrad(None, 1, [edge(o)]), 0)

    outs = _outputs(func(*inputs))
    cases = [[undefined(o) for o in outs]]
    for k in range(len(outs) if len(outs) > 1 else 0):
        cases.append([undefined(o) if i == k else o
                      for i, o in enumerate(_outputs(func(*inputs)))])
    for case in cases:
        try:
            zero = _zero_in_zero_out(case, diff_inputs)
        except RuntimeError as e:
            warnings.warn(_BC_BREAKING, stacklevel=2)
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 + _UNDEFINED_NOTE) from e
        if not zero:
            warnings.warn(_BC_BREAKING, stacklevel=2)
            raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                 "output grads are undefined or zero. " + _UNDEFINED_NOTE)


def _deprecated(name, grad_out):
    warnings.warn(_PRIVATE_API.format(name=name), FutureWarning, stacklevel=3)
    if grad_out != 1.0:
        raise ValueError(f"Expected grad_out to be 1.0. {name} no longer supports values of "
                         "grad_out != 1.0.")


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Finite-difference Jacobians of fn(inputs)'s first output, per input (deprecated)."""
    _deprecated("get_numerical_jacobian", grad_out)
    inputs = _as_tuple(inputs)
    targets = _as_tuple(target) if target is not None else inputs
    diff = [targets[i] for i in _diff_indices(targets)]

    def first_output(*_):  # the targets are perturbed in place; fn reads them from inputs
        return _outputs(fn(inputs), False)[0]
    out = first_output()._value
    jac = _numerical_jacobians(first_output, diff, range(len(diff)), [out.size], eps)[0]
    return tuple(wrap(j.astype(out.dtype)) for j in jac)


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """(Jacobians, reentrant, sizes_ok, types_ok) of `output` for the inputs (deprecated)."""
    _deprecated("get_analytical_jacobian", grad_out)
    if output.is_complex():
        raise ValueError("Expected output to be non-complex. get_analytical_jacobian no longer "
                         "supports functions that return complex outputs.")
    inputs = _as_tuple(inputs)
    diff_idx = _diff_indices(inputs)
    jac, reentrant = _analytical_jacobian(output, inputs, diff_idx, nondet_tol)
    return tuple(wrap(a.astype(inputs[j]._value.dtype)) for a, j in zip(jac, diff_idx)), \
        reentrant, True, True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradient itself (second derivatives, through create_graph=True)."""
    inputs = _as_tuple(inputs)
    outputs = _outputs(func(*inputs))
    if grad_outputs is None:  # as PyTorch: make_tensor(low=-1, high=1), i.e. uniform_
        grad_outputs = tuple(empty_like(o).uniform_(-1.0, 1.0).requires_grad_() for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)

    def new_func(*args):
        input_args, gos = args[:-n_out], args[-n_out:]
        outs = _outputs(func(*input_args))
        diff = tuple(input_args[i] for i in _diff_indices(input_args))
        gis = grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gis if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad)
