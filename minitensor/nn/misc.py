r"""Shape layers, channel dropout, resampling, padding and the rest of what teaching code reaches for
(PyTorch's Flatten, Unflatten, Dropout1d/2d, AlphaDropout, Bilinear, PixelShuffle, PixelUnshuffle,
ChannelShuffle, Upsample, the padding modules and ParameterDict): functions (re-exported by
`minitensor.nn.functional`) and Modules with PyTorch's arguments, defaults and state-dict keys.

Every function is a composition of minitensor ops (reshape, permute, index_select, einsum, where),
so its gradient comes from the ops' VJPs.
"""
from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..ops._util import float_arg, tensor_input
from ..ops.linalg import einsum
from ..random import _gen
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from . import init
from .functional import pad
from .layers import _empty, _tensor
from .module import Module, _parameter_lines
from .parameter import Parameter


# ---- channel dropout -----------------------------------------------------------------------------
def _check_p(p, op):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")


def _channel_dropout(x, p, training, op):
    """Zero whole channels (every position of a (sample, channel) pair) with probability p, scale the
    rest by 1 / (1 - p): out = x * m / (1 - p) with one mask entry per channel, broadcast along the rest."""
    _check_p(p, op)
    if not training or p == 0.0:
        return x
    _float_result(x, op)
    if p == 1.0:
        return x * 0.0
    keep = _gen().random(tuple(x.shape[:2])) >= p
    mask = (keep / (1.0 - p)).astype(x._array.dtype).reshape(tuple(x.shape[:2]) + (1,) * (x.ndim - 2))
    return x * Tensor._make(mask)


def _float_result(x, op):
    """PyTorch's dropouts scale in place into the input's dtype: an integer or bool input that would be
    dropped (training, 0 < p) is its RuntimeError, the float result not castable back."""
    if x._array.dtype.kind in "biu":
        raise RuntimeError(f"{op}: result type Float can't be cast to the desired output type {x.dtype}")


def _batched_or_not(input, p, training, op, ndim):
    """`_channel_dropout` of an (N, C, ...) input of `ndim` dims, or of an unbatched one of ndim - 1."""
    x = tensor_input(input, op)
    if x.ndim not in (ndim - 1, ndim):
        raise RuntimeError(f"{op}: expected {ndim - 1}D or {ndim}D input, but received a {x.ndim}D input")
    if x.ndim == ndim - 1:
        return _channel_dropout(x.unsqueeze(0), p, training, op).squeeze(0)
    return _channel_dropout(x, p, training, op)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    r"""Zero whole channels of (N, C, L) or (C, L) inputs with probability p in training.

    forward: out[n, c, :] = x[n, c, :] m_nc / (1 - p),  m_nc = 1 with probability 1 - p, else 0
    VJP:     gx[n, c, :] = g[n, c, :] m_nc / (1 - p)
    """
    return _batched_or_not(input, p, training, "dropout1d", 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    r"""Zero whole channels of (N, C, H, W) inputs with probability p in training (a 3-D input is
    read as (N, C, L), as PyTorch does).

    forward: out[n, c] = x[n, c] m_nc / (1 - p),  m_nc = 1 with probability 1 - p, else 0
    VJP:     gx[n, c] = g[n, c] m_nc / (1 - p)
    """
    p = float_arg(p, "dropout2d", "p")  # (its type first: PyTorch compares it before the shape)
    x = tensor_input(input, "dropout2d")
    if x.ndim == 5:  # PyTorch still takes it (one mask entry per channel), with a deprecation warning
        warnings.warn("dropout2d: Received a 5-D input to dropout2d, which is deprecated; use dropout instead",
                      UserWarning, stacklevel=2)
        return _channel_dropout(x, p, training, "dropout2d")
    if x.ndim not in (3, 4):
        raise RuntimeError(f"dropout2d: expected 3D or 4D input, but received a {x.ndim}D input")
    return _channel_dropout(x, p, training, "dropout2d")


_ALPHA_PRIME = -1.7580993408473766  # -scale * alpha of SELU: where SELU saturates


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    r"""Dropout for SELU networks: dropped values go to SELU's saturation value alpha' (not 0), then an
    affine map a x + b restores mean 0 and variance 1.

    forward: out = a (x m + alpha' (1 - m)) + b,  a = ((1 - p)(1 + p alpha'^2))^{-1/2},  b = -a alpha' p
    VJP:     gx = a m g
    """
    x = tensor_input(input, "alpha_dropout")
    _check_p(p, "alpha_dropout")
    if not training or p == 0.0:
        return x
    _float_result(x, "alpha_dropout")
    if p == 1.0:
        return x * 0.0
    keep = (_gen().random(tuple(x.shape)) >= p).astype(x._array.dtype)
    a = ((1 - p) * (1 + p * _ALPHA_PRIME ** 2)) ** -0.5
    b = -a * _ALPHA_PRIME * p
    m = Tensor._make(keep)
    return (x * m + Tensor._make(_ALPHA_PRIME * (1 - keep))) * a + b


# ---- bilinear, shuffles --------------------------------------------------------------------------
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""out[..., o] = x1[..., :] W[o] x2[..., :]^T + b[o]   (W of shape (out, in1, in2)).

    forward: out[r, o] = \sum_{i, j} x1[r, i] W[o, i, j] x2[r, j] + b[o]   (one einsum)
    VJP:     gx1[r, i] = \sum_{o, j} g[r, o] W[o, i, j] x2[r, j];  gx2 likewise;
             gW[o, i, j] = \sum_r g[r, o] x1[r, i] x2[r, j];  gb = \sum_r g[r, :]
    """
    op = "bilinear"
    for name, t in (("input1", input1), ("input2", input2), ("weight", weight)):
        tensor_input(t, op, name)
    if weight.ndim != 3 or input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2] \
            or tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"{op}: inputs of shapes {tuple(input1.shape)} and {tuple(input2.shape)} don't fit a "
                           f"weight of shape {tuple(weight.shape)} (out, in1, in2)")
    lead = tuple(input1.shape[:-1])
    x1, x2 = input1.reshape(-1, weight.shape[1]), input2.reshape(-1, weight.shape[2])
    out = einsum("ri,oij,rj->ro", x1, weight, x2)
    if bias is not None:
        out = out + bias
    return out.reshape(lead + (weight.shape[0],))


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    r"""(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels becomes an r x r block of pixels.

    forward: out[..., c, h r + i, w r + j] = x[..., c r^2 + i r + j, h, w]   (a reshape, permute, reshape)
    VJP:     gx = the same rearrangement of g, undone
    """
    x = tensor_input(input, "pixel_shuffle")
    r = upscale_factor
    if x.ndim < 3 or x.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle: expected an input of at least 3 dims whose channels (dim -3) divide by "
                           f"upscale_factor^2 = {r * r}, got shape {tuple(x.shape)}")
    *lead, c, h, w = x.shape
    n = len(lead)
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    y = y.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    r"""(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of pixel_shuffle.

    forward: out[..., c r^2 + i r + j, h, w] = x[..., c, h r + i, w r + j]
    VJP:     gx = the same rearrangement of g, undone
    """
    x = tensor_input(input, "pixel_unshuffle")
    r = downscale_factor
    if x.ndim < 3 or x.shape[-2] % r or x.shape[-1] % r:
        raise RuntimeError(f"pixel_unshuffle: expected an input of at least 3 dims whose height and width divide "
                           f"by downscale_factor = {r}, got shape {tuple(x.shape)}")
    *lead, c, h, w = x.shape
    n = len(lead)
    y = x.reshape(*lead, c, h // r, r, w // r, r)
    y = y.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return y.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    r"""Interleave the channels (dim 1) of `groups` groups: channel g (C/groups) + k goes to k groups + g.

    forward: out[:, k groups + g] = x[:, g (C / groups) + k]   (a reshape, transpose, reshape)
    VJP:     gx = the inverse permutation of g's channels
    """
    x = tensor_input(input, "channel_shuffle")
    if x.ndim < 3 or groups <= 0 or x.shape[1] % groups:
        raise RuntimeError(f"channel_shuffle: the number of channels must be divisible by groups; got input of "
                           f"shape {tuple(x.shape)} and groups={groups}")
    n, c, *rest = x.shape
    return x.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


# ---- resampling ----------------------------------------------------------------------------------
_SPATIAL = {"linear": 1, "bilinear": 2, "trilinear": 3}
_NEAREST = ("nearest", "nearest-exact")


def _output_sizes(x, size, scale_factor, recompute_scale_factor, k):
    """The output sizes of the k spatial dims, and the scales (input / output) the source indices use."""
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: exactly one of size or scale_factor should be defined")
    ins = tuple(x.shape[2:])
    if size is not None:
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * k
        if len(sizes) != k:
            raise ValueError(f"interpolate: size {size} should have {k} entries for an input of shape "
                             f"{tuple(x.shape)}")
        return tuple(int(s) for s in sizes), [i / o if o else 0.0 for i, o in zip(ins, sizes)]
    factors = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * k
    if len(factors) != k:
        raise ValueError(f"interpolate: scale_factor {scale_factor} should have {k} entries for an input of shape "
                         f"{tuple(x.shape)}")
    sizes = tuple(math.floor(float(i) * float(f)) for i, f in zip(ins, factors))
    if recompute_scale_factor:
        return sizes, [i / o if o else 0.0 for i, o in zip(ins, sizes)]
    return sizes, [1.0 / float(f) for f in factors]


def _linear_along(x, d, n_out, scale, align_corners):
    """Linear interpolation along dim d: out[i] = (1 - l) x[i0] + l x[i1], two index_selects."""
    n_in = x.shape[d]
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else dst * 0
    else:
        src = np.maximum((dst + 0.5) * scale - 0.5, 0.0)  # PyTorch clamps a negative source to 0
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = (src - i0).astype(x._array.dtype).reshape((-1,) + (1,) * (x.ndim - 1 - d))
    lam_t = Tensor._make(lam)
    lo, hi = x.index_select(d, Tensor._make(i0)), x.index_select(d, Tensor._make(i1))
    return lo * (1 - lam_t) + hi * lam_t


def _nearest_source(n_out, n_in, scale, exact):
    """The source index of each output index along one dim: floor(i s) ('nearest') or floor((i + 1/2) s)
    ('nearest-exact', the pixel centres), clamped to the last entry; in float32, as PyTorch computes them."""
    dst = np.arange(n_out, dtype=np.float32) + (np.float32(0.5) if exact else np.float32(0.0))
    return np.minimum(np.floor(dst * np.float32(scale)).astype(np.int64), n_in - 1)


def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    r"""Resize the spatial dims (2, ...) of (N, C, ...) to `size`, or by `scale_factor`.
    mode 'nearest' or 'nearest-exact' (1, 2 or 3 spatial dims), 'linear' (N, C, L), 'bilinear' (N, C, H, W)
    or 'trilinear' (N, C, D, H, W); with align_corners the corner pixels' centres line up, else their outer
    edges do.

    forward: nearest: out[i] = x[min(floor(i s), n_in - 1)];  nearest-exact: x[min(floor((i + 1/2) s), n_in - 1)]
             linear: out[i] = (1 - l) x[i0] + l x[i0 + 1]
             with src = i s' (align_corners, s' = (n_in - 1)/(n_out - 1)) or max((i + 1/2) s - 1/2, 0),
             i0 = floor(src), l = src - i0;  s = n_in / n_out (or 1 / scale_factor)
             bilinear, trilinear: linear along each spatial dim in turn (the weights multiply: l_d l_h l_w)
    VJP:     each g[i] is added into the input entries that out[i] read, times their weights (1 for nearest);
             the ops it is built of (index_select, mul, add) give exactly that
    """
    op = "interpolate"
    x = tensor_input(input, op)
    if (size is None) == (scale_factor is None):  # (PyTorch's first check, before the input's dims)
        raise ValueError(f"{op}: {'only one' if size is not None else 'either'} of size or scale_factor should be "
                         "defined")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if mode in _NEAREST:
        if align_corners is not None:
            raise ValueError("interpolate: align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | trilinear")
        if x.ndim not in (3, 4, 5):
            raise NotImplementedError(f"interpolate: mode {mode!r} takes 3D, 4D or 5D inputs, got shape "
                                      f"{tuple(x.shape)}")
    elif mode in _SPATIAL:
        if x.ndim != _SPATIAL[mode] + 2:
            raise NotImplementedError(f"interpolate: got {x.ndim}D input, but {mode} mode needs "
                                      f"{_SPATIAL[mode] + 2}D input")
    else:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported (only 'nearest', 'nearest-exact', "
                                  f"'linear', 'bilinear' and 'trilinear')")
    k = x.ndim - 2
    sizes, scales = _output_sizes(x, size, scale_factor, recompute_scale_factor, k)
    out = x
    for i in range(k):
        d = 2 + i
        if mode in _NEAREST:
            src = _nearest_source(sizes[i], x.shape[d], scales[i], mode == "nearest-exact")
            out = out.index_select(d, Tensor._make(src))
        else:
            out = _linear_along(out, d, sizes[i], scales[i], bool(align_corners))
    return out


def upsample(input: Tensor, size: int | Sequence[int] | None = None,
             scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    r"""PyTorch's older name for interpolate.

    forward: out = interpolate(x, size, scale_factor, mode, align_corners)
    VJP:     interpolate's
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


# ---- the Modules -------------------------------------------------------------------------------
class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return _tensor(self, input).flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got {unflattened_size!r}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return _tensor(self, input).unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p, type(self).__name__)
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(_tensor(self, input), self.p, self.training)


class Dropout2d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(_tensor(self, input), self.p, self.training)


class AlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(_tensor(self, input), self.p, self.training)


class Bilinear(Module):
    r"""out = x1 W x2^T + b with W (out_features, in1_features, in2_features); W and b start
    U(-1/sqrt(in1), 1/sqrt(in1)), as PyTorch's."""

    weight: Parameter
    bias: Parameter | None

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = _empty((out_features, in1_features, in2_features), dtype, device, "Bilinear")
        if bias:
            self.bias = _empty((out_features,), dtype, device, "Bilinear")
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(_tensor(self, input1, "input1"), _tensor(self, input2, "input2"), self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class PixelShuffle(Module):
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(_tensor(self, input), self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(_tensor(self, input), self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(_tensor(self, input), self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Upsample(Module):
    def __init__(self, size: int | tuple[int, ...] | None = None, scale_factor: float | tuple[float, ...] | None = None,
                 mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: float | tuple[float, ...] | None = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return interpolate(_tensor(self, input), self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


# ---- padding modules -----------------------------------------------------------------------------
def _widths(padding: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    if isinstance(padding, int):
        return (padding,) * n
    if isinstance(padding, str) or not all(isinstance(w, int) for w in padding):
        raise TypeError(f"{name}: padding must be an int or a tuple of {n} ints, got {padding!r}")
    if len(padding) != n:
        raise ValueError(f"{name}: padding must be an int or a tuple of {n} ints, got {padding!r}")
    return tuple(padding)


class _PadNd(Module):
    _n = 2
    _mode = "constant"

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = _widths(padding, self._n, type(self).__name__)
        self.value = 0.0

    def forward(self, input: Tensor) -> Tensor:
        x = _tensor(self, input)
        k = self._n // 2
        if self._mode == "circular" and x.ndim not in (k + 1, k + 2):  # (PyTorch's circular modules check it)
            raise ValueError(f"{type(self).__name__}: expected {k + 1}D or {k + 2}D input (got {x.ndim}D input)")
        if self._mode == "constant":
            return pad(x, self.padding, "constant", self.value)
        return pad(x, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _n = 2


class ConstantPad2d(_ConstantPadNd):
    _n = 4


class ZeroPad1d(_ConstantPadNd):
    _n = 2

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ZeroPad1d):
    _n = 4


class ReflectionPad1d(_PadNd):
    _n, _mode = 2, "reflect"


class ReflectionPad2d(_PadNd):
    _n, _mode = 4, "reflect"


class ReplicationPad1d(_PadNd):
    _n, _mode = 2, "replicate"


class ReplicationPad2d(_PadNd):
    _n, _mode = 4, "replicate"


# ---- ParameterDict -------------------------------------------------------------------------------
class ParameterDict(Module):
    """A dict of Parameters, registered under their keys (insertion order): a plain tensor set in it
    becomes a Parameter, as in PyTorch."""

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return self._parameters[key]

    def __setitem__(self, key: str, value: Any) -> None:
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        self.register_parameter(key, value)

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def keys(self) -> Iterable[str]:
        return self._parameters.keys()

    def values(self) -> Iterable[Any]:
        return self._parameters.values()

    def items(self) -> Iterable[tuple[str, Any]]:
        return self._parameters.items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._parameters.get(key, default)

    def pop(self, key: str) -> Any:
        return self._parameters.pop(key)

    def clear(self) -> None:
        self._parameters.clear()

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        pairs = parameters.items() if isinstance(parameters, (collections.abc.Mapping, ParameterDict)) else parameters
        for pair in pairs:
            if len(pair) != 2:
                raise ValueError(f"ParameterDict.update: expected (key, parameter) pairs, got an element of length "
                                 f"{len(pair)}")
            self[pair[0]] = pair[1]

    def extra_repr(self) -> str:
        return _parameter_lines(self._parameters.items(), legacy_names=True)


FUNCTIONS: list[str] = ["dropout1d", "dropout2d", "alpha_dropout", "bilinear", "pixel_shuffle", "pixel_unshuffle",
             "channel_shuffle", "interpolate", "upsample"]
MODULES: list[str] = [
    "Flatten", "Unflatten", "Dropout1d", "Dropout2d", "AlphaDropout", "Bilinear", "PixelShuffle", "PixelUnshuffle",
    "ChannelShuffle", "Upsample", "ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d",
    "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "ParameterDict",
]
__all__ = MODULES  # what `from .misc import *` gives minitensor.nn; the functions are in functional
