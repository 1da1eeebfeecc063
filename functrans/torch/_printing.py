"""Printing tensors as PyTorch does (`tensor(7.3891, grad_fn=<ExpBackward0>)`): a port of
torch/_tensor_str.py for dense CPU tensors (its formats, widths, wrapping and summarization)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from functrans.torch import _dtype


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """As torch.set_printoptions."""
    names = ("precision", "threshold", "edgeitems", "linewidth")
    for name, value, default in zip(names, (precision, threshold, edgeitems, linewidth),
                                    _PROFILES.get(profile, (None,) * 4)):
        if value is not None or default is not None:
            setattr(PRINT_OPTS, name, default if value is None else value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """torch.get_printoptions: the current tensor print options, as a dict."""
    return asdict(PRINT_OPTS)


class _Formatter:
    """One format (int, fixed or scientific) and one width for all the values printed."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode = True, False
        flat = values.reshape(-1)
        if not self.floating:
            self.max_width = max([1] + [len(str(v)) for v in flat.tolist()])
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size:
            a = np.abs(finite)
            lo, hi = float(a.min()), float(a.max())
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) \
                if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
        self.max_width = max([1] + [len(self._text(v)) for v in finite.tolist()])

    def _text(self, value) -> str:
        p = PRINT_OPTS.precision
        if not self.floating:
            return str(value)
        if self.sci_mode:
            return f"{value:.{p}e}"
        if self.int_mode:
            return f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        return f"{value:.{p}f}"

    def format(self, value) -> str:
        return self._text(value).rjust(self.max_width)


class _ComplexFormatter:
    """PyTorch's complex format: a formatter per part (`1.0000+2.5000j`)."""

    def __init__(self, values: np.ndarray):
        self.re, self.im = _Formatter(values.real), _Formatter(values.imag)
        self.max_width = self.re.max_width + self.im.max_width + 1

    def format(self, value) -> str:
        re = self.re.format(value.real)
        im = (self.im.format(value.imag) + "j").lstrip()
        return re + im if im[0] in "+-" else re + "+" + im


def _rows(n, summarize):
    """The indices printed of n rows (None: the "..." between the first and last edgeitems)."""
    e = PRINT_OPTS.edgeitems
    return [*range(e), None, *range(n - e, n)] if summarize and n > 2 * e else list(range(n))


def _vector_str(values, indent, summarize, fmt) -> str:
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    data = ["..."] if summarize and not PRINT_OPTS.edgeitems else [
        " ..." if i is None else fmt.format(values[i].item())
        for i in _rows(values.shape[0], summarize)]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(values, indent, summarize, fmt) -> str:
    dim = values.ndim
    if dim == 0:
        return fmt.format(values.item())
    if dim == 1:
        return _vector_str(values, indent, summarize, fmt)
    slices = ["..." if i is None else _tensor_str_with_formatter(values[i], indent + 1,
                                                                 summarize, fmt)
              for i in _rows(values.shape[0], summarize)]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(values):
    """The values a summarized tensor shows: the first and last edgeitems along each dim."""
    return values[np.ix_(*[[i for i in _rows(n, True) if i is not None] for n in values.shape])]


def _tensor_str(values, indent) -> str:
    if values.size == 0:
        return "[]"
    summarize = values.size > PRINT_OPTS.threshold
    shown = _summarized(values) if summarize else values
    fmt = _ComplexFormatter(shown) if values.dtype.kind == "c" else _Formatter(shown)
    return _tensor_str_with_formatter(values, indent, summarize, fmt)


def _add_suffixes(tensor_str, suffixes, indent) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        n = len(suffix)
        if last_line_len + n + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + n
        else:
            parts.append(", " + suffix)
            last_line_len += n + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    """repr(t) as PyTorch prints it: values, then dtype, size, grad_fn or requires_grad."""
    values = t._value
    default = _dtype.get_default_dtype()
    suffixes = []
    if values.size == 0 and values.ndim != 1 or values.size and not PRINT_OPTS.edgeitems:
        suffixes.append(f"size={tuple(values.shape)}")
    if values.dtype not in ((default.dtype,) if values.size == 0 else (
            default.dtype, np.dtype(np.int64), np.dtype(np.bool_), default.to_complex().dtype)):
        suffixes.append(f"dtype={_dtype.from_numpy(values.dtype)}")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes("tensor(" + _tensor_str(values, 7), suffixes, 7)
