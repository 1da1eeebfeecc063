"""BatchNorm1d/2d/3d: each channel normalised by batch statistics in training (the running
estimates moved toward them) and by the running estimates in evaluation, as PyTorch's."""

from __future__ import annotations

from functrans.torch import _creation as C
from functrans.torch._dtype import int64
from functrans.torch.nn import functional as F
from functrans.torch.nn.modules.module import Module
from functrans.torch.nn.modules.normalization import affine_parameters, reset_affine

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class NormBase(Module):
    """What batch and instance normalisation share: the affine parameters (weight ones, bias
    zeros at the start) and the buffers running_mean, running_var and num_batches_tracked,
    registered as None when track_running_stats is False."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        affine_parameters(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", C.zeros(num_features, device=device,
                                                         dtype=dtype))
            self.register_buffer("running_var", C.ones(num_features, device=device,
                                                       dtype=dtype))
            self.register_buffer("num_batches_tracked", C.tensor(0, dtype=int64,
                                                                 device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean to zeros, variance to ones, the batch count to 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running statistics reset; weight back to ones, bias to zeros."""
        self.reset_running_stats()
        reset_affine(self)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


_NormBase = NormBase  # PyTorch's name, for code that checks isinstance(m, _NormBase)


class _BatchNorm(NormBase):
    _expected: tuple = ()

    def _check_input_dim(self, input) -> None:
        if input.dim() not in self._expected:
            want = " or ".join(f"{d}D" for d in self._expected)
            raise ValueError(f"expected {want} input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            # momentum None: the cumulative average of every batch seen
            factor = (1.0 / float(self.num_batches_tracked) if self.momentum is None
                      else self.momentum)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input over N (and L)."""
    _expected = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input over N, H and W."""
    _expected = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) input over N, D, H and W."""
    _expected = (5,)
