r"""Normalisation over batches, groups, instances and channels (PyTorch's BatchNorm1d/2d, GroupNorm,
InstanceNorm1d/2d, RMSNorm, LocalResponseNorm): each a function (re-exported by
`minitensor.nn.functional`) and a Module with PyTorch's parameters, buffers and state-dict keys.

Each is a composition of minitensor ops: the statistics are means over some dims, so the gradient
through them (the part that makes batch norm's VJP long when written by hand) comes from the ops'
VJPs. Running statistics are updated in place without recording, as PyTorch does.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.torch_names import shown_as
from ..ops._util import float_kernel, tensor_input
from ..tensor import Tensor, check_device
from ..types import DeviceLike, DTypeLike
from . import init
from .functional import pad
from .layers import _empty, _tensor
from .module import Module
from .parameter import Parameter


def _normalize(x, dims, eps):
    """(x - mean) / sqrt(var + eps) over `dims`, with the population variance; and the two statistics."""
    mean = x.mean(dim=dims, keepdim=True)
    d = x - mean
    var = (d * d).mean(dim=dims, keepdim=True)
    return d * (var + eps).rsqrt(), mean, var


def _channel_shape(x):
    """The shape that lines a per-channel (dim 1) vector up with x: (1, C, 1, ...)."""
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _affine(out, weight, bias, shape):
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _update_running(running, value, momentum):
    """running <- (1 - momentum) running + momentum value, in place and unrecorded (as PyTorch)."""
    with grad_mode.no_grad():
        running.mul_(1 - momentum).add_(value.detach().to(running.dtype) * momentum)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    r"""Normalise each channel (dim 1) over the batch and every spatial position, then scale and shift.

    In training (or without running statistics) the batch's own mean and population variance are
    used, and the running ones (if given) move towards the batch's mean and unbiased variance by
    `momentum`; outside training the running statistics are used.

    forward: out = (x - mu_c) / sqrt(var_c + eps) * w_c + b_c   (mu, var over dims (0, 2, 3, ...))
    VJP:     with xhat the normalised x, n the count per channel and gxhat = g w_c (training):
             gx = (gxhat - mean(gxhat) - xhat mean(gxhat xhat)) / sqrt(var_c + eps);  gw_c = \sum g xhat;  gb_c = \sum g
             (outside training mu and var are constants: gx = g w_c / sqrt(var_c + eps))
    """
    x = tensor_input(input, "batch_norm")
    if x.ndim < 2:
        raise ValueError(f"batch_norm: expected an input of at least 2 dims (N, C, ...), got shape {tuple(x.shape)}")
    float_kernel(x, "batch_norm")  # (PyTorch's kernels: floating dtypes only)
    c = x.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"batch_norm: {name} should contain {c} elements not {t.numel()}")
    shape = _channel_shape(x)
    dims = (0,) + tuple(range(2, x.ndim))
    if training:
        n = x.numel() // c if c else 0
        if n <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when training, got input of "
                             f"shape {tuple(x.shape)}")
        out, mean, var = _normalize(x, dims, eps)
        if running_mean is not None:
            _update_running(running_mean, mean.reshape(c), momentum)
        if running_var is not None:
            _update_running(running_var, var.reshape(c) * (n / (n - 1)), momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var must be given outside training")
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)
        out = (x - mean) * (var + eps).rsqrt()
    return shown_as(_affine(out, weight, bias, shape), "NativeBatchNormBackward0",
                    inputs=(input, weight, bias))  # PyTorch's one kernel


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    r"""Normalise each channel of each sample over its spatial positions (dims 2, 3, ...).

    With running statistics and use_input_stats, they move towards the batch's average per-instance
    mean and unbiased variance; use_input_stats=False normalises with them instead.

    forward: out = (x - mu_nc) / sqrt(var_nc + eps) * w_c + b_c   (mu, var over dims (2, 3, ...))
    VJP:     as batch_norm's, the means taken over each sample's spatial dims
    """
    x = tensor_input(input, "instance_norm")
    if x.ndim < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dims (N, C, ...), got shape "
                         f"{tuple(x.shape)}")
    float_kernel(x, "instance_norm")  # (PyTorch's: batch_norm's kernel, floating dtypes only)
    shape = _channel_shape(x)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError("instance_norm: use_input_stats=False needs running_mean and running_var")
        out = (x - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
        return _affine(out, weight, bias, shape)
    dims = tuple(range(2, x.ndim))
    n = math.prod(x.shape[2:])
    if n <= 1:
        raise ValueError(f"instance_norm: expected more than 1 spatial element when training, got input of "
                         f"shape {tuple(x.shape)}")
    out, mean, var = _normalize(x, dims, eps)
    if running_mean is not None:
        _update_running(running_mean, mean.mean(dim=0).reshape(-1), momentum)
    if running_var is not None:
        _update_running(running_var, (var * (n / (n - 1))).mean(dim=0).reshape(-1), momentum)
    return shown_as(_affine(out, weight, bias, shape), "ViewBackward0")  # PyTorch's batch_norm, viewed back


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    r"""Split the channels into `num_groups` groups and normalise each group of each sample (over its
    channels and spatial positions), then scale and shift per channel.

    forward: out = (x - mu_ng) / sqrt(var_ng + eps) * w_c + b_c   (mu, var over group g's channels and positions)
    VJP:     as layer_norm's within each group:  gx = (gxhat - mean(gxhat) - xhat mean(gxhat xhat)) / sqrt(var + eps)
    """
    x = tensor_input(input, "group_norm")
    if x.ndim < 2 or x.shape[1] % num_groups:
        raise RuntimeError(f"group_norm: expected the number of channels of the input of shape {tuple(x.shape)} to "
                           f"be divisible by num_groups={num_groups}")
    float_kernel(x, "group_norm")  # (PyTorch's kernel: floating dtypes only)
    grouped = x.reshape(x.shape[0], num_groups, -1)
    out = _normalize(grouped, (2,), eps)[0].reshape(tuple(x.shape))
    return shown_as(_affine(out, weight, bias, _channel_shape(x)), "NativeGroupNormBackward0",
                    inputs=(input, weight, bias))  # PyTorch's one kernel


def rms_norm(input: Tensor, normalized_shape: Sequence[int] | int, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    r"""Scale the trailing `normalized_shape` dims to a root mean square of 1 (no centring), then by
    `weight`; eps defaults to the dtype's machine epsilon, as PyTorch.

    forward: out = x / sqrt(mean(x^2) + eps) * w   (the mean over the trailing dims)
    VJP:     with r = (mean(x^2) + eps)^{-1/2} and gy = g w:  gx = r (gy - x r^2 mean(gy x));  gw = \sum g x r
    """
    x = tensor_input(input, "rms_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if len(shape) > x.ndim:
        raise ValueError(f"rms_norm: input tensor must have at least {len(shape)} dimensions, but got {x.ndim}")
    if tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise RuntimeError(f"rms_norm: normalized_shape {list(shape)} does not match the last dims of input of shape "
                           f"{tuple(x.shape)}")
    float_kernel(x, "rms_norm")  # (PyTorch's kernel: floating dtypes only)
    if eps is None:
        eps = float(np.finfo(x._array.dtype).eps)
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    out = x * ((x * x).mean(dim=dims, keepdim=True) + eps).rsqrt() if dims else x * (x * x + eps).rsqrt()
    return out if weight is None else out * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    r"""Divide each value by a power of the mean square over `size` neighbouring channels (AlexNet's
    normalisation); the window is zero-padded, size // 2 channels before and (size - 1) // 2 after.

    forward: out_c = x_c / (k + alpha / size * \sum_{c' in window(c)} x_{c'}^2)^beta
    VJP:     gx_c = g_c / d_c - 2 alpha beta / size x_c \sum_{c': c in window(c')} g_{c'} x_{c'} d_{c'}^{-beta-1}
             (d = k + alpha mean-square; from the ops' VJPs)
    """
    x = tensor_input(input, "local_response_norm")
    if x.ndim < 3:
        raise ValueError(f"local_response_norm: expected 3D or higher dimensionality input (got {x.ndim} dimensions)")
    if x.numel() == 0:
        return x
    c = x.shape[1]
    sq = (x * x).movedim(1, -1)  # channels last, where pad works
    padded = pad(sq, (size // 2, (size - 1) // 2))
    window = padded[..., 0:c]
    for j in range(1, size):
        window = window + padded[..., j:j + c]
    div = (window.movedim(-1, 1) * (alpha / size) + k) ** beta
    return x / div


# ---- the Modules -------------------------------------------------------------------------------
def _zeros_buffer(shape, dtype, device, where):
    check_device(device, where)
    d = _dtype.get_default_dtype() if dtype is None else _dtype.as_dtype(dtype)
    return Tensor._make(np.zeros(shape, dtype=d))


class _NormBase(Module):
    """The parameters (weight, bias) and buffers (running_mean, running_var, num_batches_tracked) of
    batch and instance norm, under PyTorch's names."""

    weight: Parameter | None
    bias: Parameter | None
    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: DeviceLike | None = None, dtype: DTypeLike | None = None,
                 bias: bool = True) -> None:
        super().__init__()
        name = type(self).__name__
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = _empty((num_features,), dtype, device, name)
            if bias:
                self.bias = _empty((num_features,), dtype, device, name)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _zeros_buffer((num_features,), dtype, device, name))
            self.register_buffer("running_var", _zeros_buffer((num_features,), dtype, device, name))
            self.register_buffer("num_batches_tracked", Tensor._make(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    _dims: tuple[int, ...] = ()  # the numbers of dims the input may have

    def _check_input_dim(self, input: Tensor) -> Tensor:
        """The input as a tensor of a number of dims this layer takes (a lazy one checks it before sizing
        itself from it)."""
        x = _tensor(self, input)
        if x.ndim not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"{type(self).__name__}: expected {want} input (got {x.ndim}D input)")
        return x

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            assert self.running_mean is not None and self.running_var is not None
            assert self.num_batches_tracked is not None
            self.running_mean._array[...] = 0
            self.running_var._array[...] = 1
            self.num_batches_tracked._array[...] = 0
            for t in (self.running_mean, self.running_var, self.num_batches_tracked):
                t._bump_version()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: DeviceLike | None = None, dtype: DTypeLike | None = None,
                 *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias)

    def forward(self, input: Tensor) -> Tensor:
        x = self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        tracked = self.num_batches_tracked if self.training and self.track_running_stats else None
        if tracked is not None:
            # momentum=None: the cumulative average, each batch weighing 1 / (batches so far, this one included)
            factor = 1.0 / (int(tracked.item()) + 1) if self.momentum is None else self.momentum
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        out = batch_norm(x, self.running_mean if keep else None, self.running_var if keep else None, self.weight,
                         self.bias, use_batch, factor, self.eps)
        if tracked is not None:  # counted once the batch is normalised: a refused batch leaves the count alone
            with grad_mode.no_grad():
                tracked.add_(1)
        return out


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs: weight 1 and bias 0 at first, running statistics
    (running_mean 0, running_var 1, num_batches_tracked) in the state dict, as PyTorch's."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs (see BatchNorm1d)."""

    _dims = (4,)


class _InstanceNorm(_NormBase):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: DeviceLike | None = None, dtype: DTypeLike | None = None,
                 *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias)

    def forward(self, input: Tensor) -> Tensor:
        x = self._check_input_dim(input)
        unbatched = x.ndim == self._dims[0]
        if unbatched:
            x = x.unsqueeze(0)
        if self.affine and x.shape[1] != self.num_features:
            raise ValueError(f"{type(self).__name__}: expected input's size at dim 1 to match num_features "
                             f"({self.num_features}), but got input of shape {tuple(input.shape)}")
        use_input_stats = self.training or not self.track_running_stats
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                            0.1 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or unbatched (C, L) inputs; no affine parameters and no running
    statistics unless asked for, as PyTorch's."""

    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or unbatched (C, H, W) inputs (see InstanceNorm1d)."""

    _dims = (3, 4)


class GroupNorm(Module):
    """Group norm: `num_channels` split into `num_groups` groups; per-channel weight 1 and bias 0 at first."""

    weight: Parameter | None
    bias: Parameter | None

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = _empty((num_channels,), dtype, device, "GroupNorm")
            if bias:
                self.bias = _empty((num_channels,), dtype, device, "GroupNorm")
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return group_norm(_tensor(self, input), self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """RMS norm of the trailing `normalized_shape` dims, weight 1 at first; eps=None means the input
    dtype's machine epsilon."""

    weight: Parameter | None

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        if elementwise_affine:
            self.weight = _empty(shape, dtype, device, "RMSNorm")
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(_tensor(self, x), self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(_tensor(self, input), self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


FUNCTIONS: list[str] = ["batch_norm", "instance_norm", "group_norm", "rms_norm", "local_response_norm"]
MODULES: list[str] = ["BatchNorm1d", "BatchNorm2d", "InstanceNorm1d", "InstanceNorm2d", "GroupNorm", "RMSNorm",
           "LocalResponseNorm"]
__all__ = MODULES  # what `from .normalization import *` gives minitensor.nn; the functions are in functional
