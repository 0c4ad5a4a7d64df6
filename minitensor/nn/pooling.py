r"""Pooling (PyTorch's MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool1d/2d and their
functions), built like the convolutions of conv.py: the windows gathered by one indexing op (im2col),
then a max or a mean over each window. Gradients come from the ops' VJPs: a max window passes its
gradient to the first of its largest entries (a gather at the argmax), an average window spreads it
evenly (divided by the window's count).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..ops._util import tensor_input
from ..ops.shape import cat
from ..tensor import Tensor
from .conv import _patches, _tuple
from .functional import pad
from .layers import _tensor
from .module import Module


def _pool_sizes(n, k, s, p, d, ceil_mode):
    """PyTorch's output length of a pooling window: floor (or ceil) of the span over the stride, plus one;
    with ceil_mode the last window must still start inside the input or its left padding."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _windows(x, kernel, stride, padding, dilation, ceil_mode, fill, op):
    """(N, C, H, W) -> the windows (N, C, oh, ow, kh, kw), the input padded with `fill` (plus, with
    ceil_mode, on the right as far as the last window reaches)."""
    if any(2 * p > d * (k - 1) + 1 for k, p, d in zip(kernel, padding, dilation)):
        raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but got pad={padding}, "
                           f"kernel_size={kernel} and dilation={dilation}")
    sizes = [_pool_sizes(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode) for i in range(2)]
    if min(sizes) <= 0:
        raise RuntimeError(f"{op}: output size is too small: {tuple(sizes)} for input of shape {tuple(x.shape)}")
    extra = [max((sizes[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - (x.shape[2 + i] + 2 * padding[i]),
                 0) for i in range(2)]
    widths = (padding[1], padding[1] + extra[1], padding[0], padding[0] + extra[0])
    xp = pad(x, widths, value=fill) if any(widths) else x
    return _patches(xp, kernel, stride, dilation, op, sizes), sizes


def _as_2d(input, nd, op):
    """(N, C, *spatial) or unbatched, as a 4-D (N, C, H, W), and how to undo it."""
    x = tensor_input(input, op)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected {nd + 1}D or {nd + 2}D input, got shape {tuple(x.shape)}")
    unbatched = x.ndim == nd + 1
    if unbatched:
        x = x.unsqueeze(0)
    if nd == 1:
        x = x.unsqueeze(2)

    def undo(t):
        if nd == 1:
            t = t.squeeze(2)
        return t.squeeze(0) if unbatched else t
    return x, undo


def _params(kernel_size, stride, padding, dilation, nd, op):
    k = _tuple(kernel_size, nd, "kernel_size", op)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _tuple(stride, nd, "stride", op)
    p, d = _tuple(padding, nd, "padding", op), _tuple(dilation, nd, "dilation", op)
    if nd == 1:
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    return k, s, p, d


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd, op):
    x, undo = _as_2d(input, nd, op)
    k, s, p, d = _params(kernel_size, stride, padding, dilation, nd, op)
    win, (oh, ow) = _windows(x, k, s, p, d, ceil_mode, -math.inf, op)
    n, c = x.shape[:2]
    flat = win.reshape(n, c, oh, ow, k[0] * k[1])
    arg = flat.argmax(dim=-1, keepdim=True)  # the first largest entry of each window, as PyTorch picks
    out = flat.gather(-1, arg).squeeze(-1)
    if not return_indices:
        return undo(out)
    a = arg.squeeze(-1).numpy(force=True)
    rows = np.arange(oh)[:, None] * s[0] - p[0] + (a // k[1]) * d[0]
    cols = np.arange(ow)[None, :] * s[1] - p[1] + (a % k[1]) * d[1]
    return undo(out), undo(Tensor._make((rows * x.shape[3] + cols).astype(np.int64)))


def max_pool2d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    r"""The largest value of each kh x kw window (stride defaults to the kernel size; padding is -inf).
    return_indices=True also returns each maximum's flat index into its input plane (H W).

    forward: out[n, c, y, x] = max_{i, j} xp[n, c, y s_h + i d_h, x s_w + j d_w]
    VJP:     gx at each window's (first) argmax += g[n, c, y, x]   (windows that overlap add up)
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def max_pool1d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    r"""The largest value of each window of k along the last dim of (N, C, L) or (C, L).

    forward: out[n, c, t] = max_i xp[n, c, t s + i d]
    VJP:     gx at each window's (first) argmax += g[n, c, t]
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d")


def _divisors(n, k, s, p, size, ceil_mode, count_include_pad):
    """PyTorch's divisor of each average window: its extent within the padded input (count_include_pad)
    or within the input itself."""
    start = np.arange(size) * s - p
    end = np.minimum(start + k, n + p)
    count = end - start
    if not count_include_pad:
        count = np.minimum(end, n) - np.maximum(start, 0)
    return count


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd, op):
    x, undo = _as_2d(input, nd, op)
    k, s, p, d = _params(kernel_size, stride, padding, 1, nd, op)
    win, (oh, ow) = _windows(x, k, s, p, d, ceil_mode, 0.0, op)
    total = win.sum(dim=(-2, -1))
    if divisor_override:
        return undo(total / divisor_override)
    rows = _divisors(x.shape[2], k[0], s[0], p[0], oh, ceil_mode, count_include_pad)
    cols = _divisors(x.shape[3], k[1], s[1], p[1], ow, ceil_mode, count_include_pad)
    div = (rows[:, None] * cols[None, :]).astype(x._array.dtype)
    return undo(total / Tensor._make(div))


def avg_pool2d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    r"""The mean of each kh x kw window (stride defaults to the kernel size; padding is 0, counted in the
    mean unless count_include_pad=False; divisor_override replaces the count).

    forward: out[n, c, y, x] = \sum_{i, j} xp[n, c, y s_h + i, x s_w + j] / D_yx   (D the window's count)
    VJP:     gx[each entry of window (y, x)] += g[n, c, y, x] / D_yx
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                     "avg_pool2d")


def avg_pool1d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    r"""The mean of each window of k along the last dim of (N, C, L) or (C, L).

    forward: out[n, c, t] = \sum_i xp[n, c, t s + i] / D_t
    VJP:     gx[each entry of window t] += g[n, c, t] / D_t
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


def _adaptive_bounds(n_in, n_out):
    """PyTorch's adaptive windows: window i spans [floor(i n_in / n_out), ceil((i + 1) n_in / n_out))."""
    i = np.arange(n_out)
    return (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)


def _adaptive_sizes(x, output_size, nd, op):
    sizes = (output_size,) * nd if isinstance(output_size, int) or output_size is None else tuple(output_size)
    if len(sizes) != nd:
        raise ValueError(f"{op}: output_size must be an int or a tuple of {nd}, got {output_size!r}")
    return tuple(x.shape[x.ndim - nd + i] if s is None else int(s) for i, s in enumerate(sizes))


def _averaging_matrix(n_in, n_out, dtype):
    """A (n_out, n_in) with A[i, j] = 1 / |window i| for j in window i: the mean of each window as A @ x."""
    start, end = _adaptive_bounds(n_in, n_out)
    j = np.arange(n_in)
    inside = (j[None, :] >= start[:, None]) & (j[None, :] < end[:, None])
    return Tensor._make((inside / (end - start)[:, None]).astype(dtype))


def adaptive_avg_pool2d(input: Tensor, output_size: int | Sequence[int | None] | None) -> Tensor:
    r"""Average (N, C, H, W) down (or up) to (N, C, oh, ow) with PyTorch's adaptive windows.

    forward: out = A_h x A_w^T,  A[i, j] = 1 / |window i| for j in window i = [floor(i H / oh), ceil((i + 1) H / oh))
    VJP:     gx = A_h^T g A_w
    """
    x, undo = _as_2d(input, 2, "adaptive_avg_pool2d")
    oh, ow = _adaptive_sizes(x, output_size, 2, "adaptive_avg_pool2d")
    dt = x._array.dtype
    return undo(_averaging_matrix(x.shape[2], oh, dt) @ x @ _averaging_matrix(x.shape[3], ow, dt).mT)


def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    r"""Average (N, C, L) to (N, C, out) with PyTorch's adaptive windows.

    forward: out = x A^T,  A[i, j] = 1 / |window i| for j in window i
    VJP:     gx = g A
    """
    x = tensor_input(input, "adaptive_avg_pool1d")
    if x.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d: expected 2D or 3D input, got shape {tuple(x.shape)}")
    (n_out,) = _adaptive_sizes(x, output_size, 1, "adaptive_avg_pool1d")
    return x @ _averaging_matrix(x.shape[-1], n_out, x._array.dtype).mT


def _adaptive_max(input, output_size, return_indices, nd, op):
    x, undo = _as_2d(input, nd, op)
    sizes = _adaptive_sizes(input if nd == 2 else x.squeeze(2), output_size, nd, op)
    oh, ow = (1,) + sizes if nd == 1 else sizes
    (hs, he), (ws, we) = _adaptive_bounds(x.shape[2], oh), _adaptive_bounds(x.shape[3], ow)
    outs, idxs = [], []
    for i in range(oh):  # windows of unequal sizes: one gather per output position
        for j in range(ow):
            w = x[:, :, hs[i]:he[i], ws[j]:we[j]].flatten(2)
            a = w.argmax(dim=-1, keepdim=True)
            outs.append(w.gather(-1, a))
            an = a.numpy(force=True)
            idxs.append((hs[i] + an // (we[j] - ws[j])) * x.shape[3] + ws[j] + an % (we[j] - ws[j]))
    n, c = x.shape[:2]
    out = cat(outs, dim=-1).reshape(n, c, oh, ow)
    if not return_indices:
        return undo(out)
    return undo(out), undo(Tensor._make(np.concatenate(idxs, axis=-1).reshape(n, c, oh, ow).astype(np.int64)))


def adaptive_max_pool2d(input: Tensor, output_size: int | Sequence[int | None] | None,
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    r"""The largest value of each adaptive window (see adaptive_avg_pool2d) of (N, C, H, W).

    forward: out[n, c, y, x] = max over window (y, x) of x[n, c]
    VJP:     gx at each window's (first) argmax += g[n, c, y, x]
    """
    return _adaptive_max(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int],
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    r"""The largest value of each adaptive window of (N, C, L).

    forward: out[n, c, t] = max over window t of x[n, c]
    VJP:     gx at each window's (first) argmax += g[n, c, t]
    """
    return _adaptive_max(input, output_size, return_indices, 1, "adaptive_max_pool1d")


# ---- the Modules -------------------------------------------------------------------------------
class _MaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] | None = None,
                 padding: int | tuple[int, ...] = 0, dilation: int | tuple[int, ...] = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        fn = max_pool1d if self._nd == 1 else max_pool2d
        return fn(_tensor(self, input), self.kernel_size, self.stride, self.padding, self.dilation,
                  ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _nd = 1


class MaxPool2d(_MaxPoolNd):
    _nd = 2


class AvgPool1d(Module):
    def __init__(self, kernel_size: int | tuple[int], stride: int | tuple[int] | None = None,
                 padding: int | tuple[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        # stored as 1-tuples, as PyTorch's AvgPool1d does
        self.kernel_size = _tuple(kernel_size, 1, "kernel_size", "AvgPool1d")
        self.stride = _tuple(stride if stride is not None else kernel_size, 1, "stride", "AvgPool1d")
        self.padding = _tuple(padding, 1, "padding", "AvgPool1d")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(_tensor(self, input), self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool2d(_tensor(self, input), self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptivePool(Module):
    def __init__(self, output_size: int | tuple[int | None, ...] | None) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool1d(_tensor(self, input), self.output_size)  # type: ignore[arg-type]


class AdaptiveAvgPool2d(_AdaptivePool):
    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool2d(_tensor(self, input), self.output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size: int | tuple[int | None, ...] | None, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return adaptive_max_pool1d(_tensor(self, input), self.output_size, self.return_indices)  # type: ignore


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return adaptive_max_pool2d(_tensor(self, input), self.output_size, self.return_indices)


FUNCTIONS: list[str] = [
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d",
]
MODULES: list[str] = [
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
]
__all__ = MODULES  # what `from .pooling import *` gives minitensor.nn; the functions are in functional
