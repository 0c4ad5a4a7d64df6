r"""Pooling (PyTorch's MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool1d/2d and their
functions), built like the convolutions of conv.py: the windows gathered by one indexing op (im2col),
then a max or a mean over each window. Gradients come from the ops' VJPs: a max window passes its
gradient to the first of its largest entries (a gather at the argmax), an average window spreads it
evenly (divided by the window's count).
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np

from ..autograd.torch_names import shown_as
from ..ops._util import float_kernel, no_bool, tensor_input
from ..ops.shape import cat
from ..random import _gen
from ..tensor import Tensor
from .conv import _int_sizes, _patches, _tuple
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
    """(N, C, *spatial) -> the windows (N, C, *out, *kernel) (in 2-D (N, C, oh, ow, kh, kw)), the input padded
    with `fill` (plus, with ceil_mode, on the far side as far as the last window reaches)."""
    k = len(kernel)
    if any(2 * p > d * (k - 1) + 1 for k, p, d in zip(kernel, padding, dilation)):
        raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but got pad={padding}, "
                           f"kernel_size={kernel} and dilation={dilation}")
    sizes = [_pool_sizes(x.shape[2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode) for i in range(k)]
    if min(sizes) <= 0:
        raise RuntimeError(f"{op}: output size is too small: {tuple(sizes)} for input of shape {tuple(x.shape)}")
    extra = [max((sizes[i] - 1) * stride[i] + dilation[i] * (kernel[i] - 1) + 1 - (x.shape[2 + i] + 2 * padding[i]),
                 0) for i in range(k)]
    widths = tuple(w for i in reversed(range(k)) for w in (padding[i], padding[i] + extra[i]))  # last dim first
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

    def undo(t, name=None):
        if nd == 1:  # (PyTorch's 1-d pools too run as 2-d ones: their last node is this squeeze)
            t = t.squeeze(2)
        t = t.squeeze(0) if unbatched else t
        if nd > 1 and t._base is not None:  # (PyTorch's 2-d and 3-d pools write a new tensor, which
            t = t.clone()                     # `nn.ReLU(inplace=True)` may change: ours is no view either)
        return shown_as(t, name) if name is not None and nd > 1 else t  # PyTorch's one node
    return x, undo


def _params(kernel_size, stride, padding, dilation, nd, op):
    k = _tuple(kernel_size, nd, "kernel_size", op)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _tuple(stride, nd, "stride", op)
    p, d = _tuple(padding, nd, "padding", op), _tuple(dilation, nd, "dilation", op)
    if nd == 1:
        k, s, p, d = (1,) + k, (1,) + s, (0,) + p, (1,) + d
    return k, s, p, d


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd, op):
    _int_sizes(op, kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)
    no_bool(tensor_input(input, op), op)  # (PyTorch's max_pool kernels have no bool form)
    x, undo = _as_2d(input, nd, op)
    k, s, p, d = _params(kernel_size, stride, padding, dilation, nd, op)
    win, sizes = _windows(x, k, s, p, d, ceil_mode, -math.inf, op)
    nd = len(k)
    starts = [(np.arange(sizes[i]) * s[i] - p[i]).reshape([-1 if j == i else 1 for j in range(nd)]) for i in range(nd)]
    out, idx = _window_max(win, x, sizes, k, starts, d)
    name = f"MaxPool{nd}DWithIndicesBackward0"
    return (undo(out, name), undo(idx)) if return_indices else undo(out, name)


def _window_max(win, x, sizes, k, starts, d):
    """The largest entry of each window (N, C, *out, *k), and its flat index into the input's spatial
    dims (as PyTorch's return_indices: along dim i, the window's start starts[i] plus its offset times d)."""
    n, c, nd = x.shape[0], x.shape[1], len(k)
    flat = win.reshape(n, c, *sizes, math.prod(k))
    arg = flat.argmax(dim=-1, keepdim=True)  # the first largest entry of each window, as PyTorch picks
    out = flat.gather(-1, arg).squeeze(-1)
    offsets = np.unravel_index(arg.squeeze(-1).numpy(force=True), k)
    pos = [starts[i] + offsets[i] * d[i] for i in range(nd)]
    return out, Tensor._make(np.ravel_multi_index(pos, x.shape[2:], mode="wrap").astype(np.int64))


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
    if not return_indices:  # (PyTorch's 1-d kernel without indices is for floating dtypes only)
        float_kernel(tensor_input(input, "max_pool1d"), "max_pool1d")
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
    _int_sizes(op, kernel_size=kernel_size, stride=stride, padding=padding)
    x, undo = _as_2d(input, nd, op)
    k, s, p, d = _params(kernel_size, stride, padding, 1, nd, op)
    win, sizes = _windows(x, k, s, p, d, ceil_mode, 0.0, op)
    total = win.sum(dim=tuple(range(-len(k), 0)))
    if divisor_override:
        return undo(total / divisor_override, f"AvgPool{len(k)}DBackward0")
    div = np.ones((), dtype=np.int64)
    for i in range(len(k)):  # the window's count is the product of its extents along each dim
        div = np.multiply.outer(div, _divisors(x.shape[2 + i], k[i], s[i], p[i], sizes[i], ceil_mode,
                                               count_include_pad))
    return undo(total / Tensor._make(div.astype(x._array.dtype)), f"AvgPool{len(k)}DBackward0")


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
    x = tensor_input(input, "avg_pool1d")
    no_bool(x, "avg_pool1d")
    if x._array.dtype.kind in "iu":  # PyTorch's integer kernel: the window's mean truncated toward 0, in its dtype
        return _avg_pool(x.double(), kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1,
                         "avg_pool1d").trunc().to(x.dtype)
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


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
    out = _averaging_matrix(x.shape[2], oh, dt) @ x @ _averaging_matrix(x.shape[3], ow, dt).mT
    return undo(out, "MeanBackward1" if (oh, ow) == (1, 1) else "AdaptiveAvgPool2DBackward0")  # as PyTorch's


def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    r"""Average (N, C, L) to (N, C, out) with PyTorch's adaptive windows.

    forward: out = x A^T,  A[i, j] = 1 / |window i| for j in window i
    VJP:     gx = g A
    """
    x = tensor_input(input, "adaptive_avg_pool1d")
    if x.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d: expected 2D or 3D input, got shape {tuple(x.shape)}")
    float_kernel(x, "adaptive_avg_pool1d")  # (PyTorch's kernel: floating dtypes only)
    (n_out,) = _adaptive_sizes(x, output_size, 1, "adaptive_avg_pool1d")
    return x @ _averaging_matrix(x.shape[-1], n_out, x._array.dtype).mT


def _adaptive_max(input, output_size, return_indices, nd, op):
    x, undo = _as_2d(input, nd, op)
    sizes = _adaptive_sizes(x.squeeze(2) if nd == 1 else x, output_size, nd, op)
    sizes = (1,) + sizes if nd == 1 else sizes
    bounds = [_adaptive_bounds(x.shape[2 + i], o) for i, o in enumerate(sizes)]
    outs, idxs = [], []
    for pos in itertools.product(*(range(o) for o in sizes)):  # windows of unequal sizes: one gather each
        lo = [int(bounds[i][0][j]) for i, j in enumerate(pos)]
        ext = [int(bounds[i][1][j]) - lo[i] for i, j in enumerate(pos)]
        w = x[(slice(None), slice(None), *(slice(a, a + e) for a, e in zip(lo, ext)))].flatten(2)
        a = w.argmax(dim=-1, keepdim=True)
        outs.append(w.gather(-1, a))
        offsets = np.unravel_index(a.numpy(force=True), ext)
        idxs.append(np.ravel_multi_index([lo[i] + offsets[i] for i in range(len(lo))], x.shape[2:]))
    n, c = x.shape[:2]
    out = cat(outs, dim=-1).reshape(n, c, *sizes)
    name = f"AdaptiveMaxPool{nd}DBackward0"
    if not return_indices:
        return undo(out, name)
    return undo(out, name), undo(Tensor._make(np.concatenate(idxs, axis=-1).reshape(n, c, *sizes).astype(np.int64)))


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
    float_kernel(tensor_input(input, "adaptive_max_pool1d"), "adaptive_max_pool1d")  # (PyTorch's: floats only)
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
        fn = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[self._nd]
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


class _AvgPoolWithDivisor(Module):
    """What AvgPool2d and AvgPool3d share: their arguments, divisor_override included."""

    def __init__(self, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] | None = None,
                 padding: int | tuple[int, ...] = 0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolWithDivisor):
    def forward(self, input: Tensor) -> Tensor:
        return avg_pool2d(_tensor(self, input), self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


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


# ---- issue 30, point 2 (nnconv helper): 3-D pooling, *_with_indices, unpooling, power-average and fractional
# max pooling ---------------------------------------------------------------------------------------
def max_pool3d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    r"""The largest value of each kd x kh x kw window of (N, C, D, H, W) or (C, D, H, W); indices are flat
    into D H W.

    forward: out[n, c, z, y, x] = max_{l, i, j} xp[n, c, z s_d + l d_d, y s_h + i d_h, x s_w + j d_w]
    VJP:     gx at each window's (first) argmax += g[n, c, z, y, x]
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3, "max_pool3d")


def max_pool1d_with_indices(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
                            padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""max_pool1d and the flat index of each maximum, whatever return_indices says (as PyTorch).

    forward: out[n, c, t] = max_i xp[n, c, t s + i d];  idx[n, c, t] = t s - p + argmax_i d
    VJP:     gx at each window's (first) argmax += g[n, c, t]   (the indices get none)
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 1, "max_pool1d")


def max_pool2d_with_indices(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
                            padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""max_pool2d and the flat index (into H W) of each maximum, whatever return_indices says.

    forward: out[n, c, y, x] = max_{i, j} xp[n, c, y s_h + i d_h, x s_w + j d_w];  idx = row W + col of that max
    VJP:     gx at each window's (first) argmax += g[n, c, y, x]   (the indices get none)
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 2, "max_pool2d")


def max_pool3d_with_indices(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
                            padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""max_pool3d and the flat index (into D H W) of each maximum, whatever return_indices says.

    forward: out[n, c, z, y, x] = max over window (z, y, x);  idx = (depth H + row) W + col of that max
    VJP:     gx at each window's (first) argmax += g[n, c, z, y, x]   (the indices get none)
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, True, 3, "max_pool3d")


def avg_pool3d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    r"""The mean of each kd x kh x kw window of (N, C, D, H, W) or (C, D, H, W) (see avg_pool2d).

    forward: out[n, c, z, y, x] = \sum_{l, i, j} xp[n, c, z s_d + l, y s_h + i, x s_w + j] / D_zyx
    VJP:     gx[each entry of window (z, y, x)] += g[n, c, z, y, x] / D_zyx
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3,
                     "avg_pool3d")


def adaptive_avg_pool3d(input: Tensor, output_size: int | Sequence[int | None] | None) -> Tensor:
    r"""Average (N, C, D, H, W) to (N, C, od, oh, ow) with PyTorch's adaptive windows, one dim at a time.

    forward: out = x averaged along each spatial dim by its A (A[i, j] = 1 / |window i| for j in window i)
    VJP:     gx = g multiplied along each dim by A^T
    """
    op = "adaptive_avg_pool3d"
    x, undo = _as_2d(input, 3, op)
    sizes = _adaptive_sizes(x, output_size, 3, op)
    out = x
    for i, o in enumerate(sizes):
        a = _averaging_matrix(x.shape[2 + i], o, x._array.dtype)
        out = (out.movedim(2 + i, -1) @ a.mT).movedim(-1, 2 + i)
    return undo(out)


def adaptive_max_pool3d(input: Tensor, output_size: int | Sequence[int | None] | None,
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    r"""The largest value of each adaptive window of (N, C, D, H, W); indices flat into D H W.

    forward: out[n, c, z, y, x] = max over window (z, y, x) of x[n, c]
    VJP:     gx at each window's (first) argmax += g[n, c, z, y, x]
    """
    return _adaptive_max(input, output_size, return_indices, 3, "adaptive_max_pool3d")


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: int | Sequence[int],
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""adaptive_max_pool1d and the index of each maximum, whatever return_indices says.

    forward: out[n, c, t] = max over window t of x[n, c];  idx = where that max sits
    VJP:     gx at each window's (first) argmax += g[n, c, t]
    """
    return _adaptive_max(input, output_size, True, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: int | Sequence[int | None] | None,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""adaptive_max_pool2d and the flat index (into H W) of each maximum, whatever return_indices says.

    forward: out[n, c, y, x] = max over window (y, x) of x[n, c];  idx = row W + col of that max
    VJP:     gx at each window's (first) argmax += g[n, c, y, x]
    """
    return _adaptive_max(input, output_size, True, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: int | Sequence[int | None] | None,
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    r"""adaptive_max_pool3d and the flat index (into D H W) of each maximum, whatever return_indices says.

    forward: out[n, c, z, y, x] = max over window (z, y, x) of x[n, c];  idx = (depth H + row) W + col
    VJP:     gx at each window's (first) argmax += g[n, c, z, y, x]
    """
    return _adaptive_max(input, output_size, True, 3, "adaptive_max_pool3d")


def _unpool_size(x, kernel, stride, padding, output_size, nd, op):
    """PyTorch's default unpooled size (in - 1) s - 2 p + k, or output_size (its last nd entries), which must
    lie strictly within a stride of it."""
    default = [(x.shape[x.ndim - nd + i] - 1) * stride[i] - 2 * padding[i] + kernel[i] for i in range(nd)]
    if output_size is None:
        return default
    size = [int(v) for v in output_size]
    if len(size) == nd + 2 or len(size) == nd + 1:
        size = size[-nd:]
    if len(size) != nd:
        raise ValueError(f"{op}: output_size should be a sequence of {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for i in range(nd):
        if not default[i] - stride[i] < size[i] < default[i] + stride[i]:
            raise ValueError(f"{op}: invalid output_size {tuple(size)} (dim {i} must be between "
                             f"{default[i] - stride[i]} and {default[i] + stride[i]})")
    return size


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd, op):
    _int_sizes(op, kernel_size=kernel_size, stride=stride, padding=padding)
    x = tensor_input(input, op)
    idx = tensor_input(indices, op, "indices")
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected {nd + 1}D or {nd + 2}D input, got shape {tuple(x.shape)}")
    if idx.dtype != np.int64 or tuple(idx.shape) != tuple(x.shape):
        raise RuntimeError(f"{op}: expected indices of dtype int64 and the input's shape {tuple(x.shape)}, got "
                           f"{idx.dtype} of shape {tuple(idx.shape)}")
    k = _tuple(kernel_size, nd, "kernel_size", op)
    s = k if stride is None else _tuple(stride, nd, "stride", op)
    size = _unpool_size(x, k, s, _tuple(padding, nd, "padding", op), output_size, nd, op)
    lead, total = tuple(x.shape[:x.ndim - nd]), math.prod(size)
    flat_idx = idx._array.reshape(lead + (-1,))
    if flat_idx.size and (flat_idx.min() < 0 or flat_idx.max() >= total):
        raise RuntimeError(f"{op}: found an invalid max index {int(flat_idx.max())} (output volumes are of size "
                           f"{'x'.join(map(str, size))})")
    zeros = Tensor._make(np.zeros(lead + (total,), dtype=x._array.dtype))
    return zeros.scatter(-1, Tensor._make(flat_idx), x.reshape(*lead, -1)).reshape(*lead, *size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    r"""The partial inverse of max_pool1d: each value written back at its index, zeros elsewhere.

    forward: out = zeros(N, C, L_out);  out[n, c, idx[n, c, t]] = x[n, c, t]
             (L_out = (L - 1) s - 2 p + k unless output_size says)
    VJP:     gx[n, c, t] = g[n, c, idx[n, c, t]]   (a scatter, whose VJP is a gather)
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1, "max_unpool1d")


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    r"""The partial inverse of max_pool2d: each value written back at its flat index into H W, zeros elsewhere.

    forward: out = zeros(N, C, H_out W_out);  out[n, c, idx[n, c, y, x]] = x[n, c, y, x], reshaped (H_out, W_out)
    VJP:     gx[n, c, y, x] = g[n, c, idx[n, c, y, x]]
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2, "max_unpool2d")


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
                 output_size: Sequence[int] | None = None) -> Tensor:
    r"""The partial inverse of max_pool3d: each value written back at its flat index into D H W.

    forward: out = zeros(N, C, D_out H_out W_out);  out[n, c, idx[n, c, z, y, x]] = x[n, c, z, y, x]
    VJP:     gx[n, c, z, y, x] = g[n, c, idx[n, c, z, y, x]]
    """
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3, "max_unpool3d")


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, op):
    x = tensor_input(input, op)
    k = _tuple(kernel_size, nd, "kernel_size", op)
    mean = _avg_pool(x.pow(norm_type), k, stride, 0, ceil_mode, True, None, nd, op)
    # sign(m) relu(|m|) is m itself, with a zero gradient where m = 0 (as PyTorch), then the window's sum
    return (mean.sign() * mean.abs().relu() * math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: int | Sequence[int] | None = None,
              ceil_mode: bool = False) -> Tensor:
    r"""The p-norm of each window of k along the last dim of (N, C, L) (no padding; p = norm_type).

    forward: out[n, c, t] = (\sum_i x[n, c, t s + i]^p)^(1/p)   (as avg_pool1d(x^p) k, then the 1/p power)
    VJP:     gx[n, c, t s + i] += g[n, c, t] x^(p-1) out^(1-p)   (from the ops' VJPs)
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: int | Sequence[int],
              stride: int | Sequence[int] | None = None, ceil_mode: bool = False) -> Tensor:
    r"""The p-norm of each kh x kw window of (N, C, H, W) (no padding; p = norm_type).

    forward: out[n, c, y, x] = (\sum_{i, j} x[n, c, y s_h + i, x s_w + j]^p)^(1/p)
    VJP:     gx[each entry of window (y, x)] += g[n, c, y, x] x^(p-1) out^(1-p)
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: int | Sequence[int],
              stride: int | Sequence[int] | None = None, ceil_mode: bool = False) -> Tensor:
    r"""The p-norm of each kd x kh x kw window of (N, C, D, H, W) (no padding; p = norm_type).

    forward: out[n, c, z, y, x] = (\sum_{l, i, j} x[n, c, z s_d + l, y s_h + i, x s_w + j]^p)^(1/p)
    VJP:     gx[each entry of window (z, y, x)] += g[n, c, z, y, x] x^(p-1) out^(1-p)
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, "lp_pool3d")


def _fractional_starts(sample, n_in, n_out, k):
    """PyTorch's pseudo-random window starts along one dim, for each (n, c)'s sample u in [0, 1):
    start_i = floor((i + u) a) - floor(u a) with a = (n_in - k) / (n_out - 1), and the last window ends at the
    input's end (computed in the input's float dtype, as PyTorch)."""
    starts = np.empty(sample.shape + (n_out,), dtype=np.int64)
    if n_out > 1:
        alpha = sample.dtype.type(n_in - k) / sample.dtype.type(n_out - 1)
        i = np.arange(n_out - 1, dtype=sample.dtype)
        starts[..., :-1] = (((i + sample[..., None]) * alpha).astype(np.int64)
                            - (sample * alpha).astype(np.int64)[..., None])
    starts[..., -1] = n_in - k
    return starts


def _fractional_max(input, kernel_size, output_size, output_ratio, return_indices, samples, nd, op):
    if output_size is None and output_ratio is None:  # (checked before the input, as PyTorch)
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    x, undo = _as_2d(input, nd, op)
    k = _tuple(kernel_size, nd, "kernel_size", op)
    ins = tuple(x.shape[2:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
        ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
        if len(ratio) != nd or not all(0 < r < 1 for r in ratio):
            raise ValueError(f"{op}: output_ratio must be a float or {nd} floats in (0, 1), got {output_ratio!r}")
        sizes = tuple(int(n * r) for n, r in zip(ins, ratio))
    else:
        sizes = _tuple(output_size, nd, "output_size", op)
    for i in range(nd):
        if sizes[i] <= 0 or sizes[i] + k[i] - 1 > ins[i]:
            raise RuntimeError(f"{op}: output size {sizes} with kernel {k} does not fit the input's {ins}")
    n, c = x.shape[:2]
    dt = x._array.dtype
    if samples is None:
        u = _gen(None).random((n, c, nd)).astype(dt)
    else:
        u = tensor_input(samples, op, "_random_samples")._array
        if u.shape != (n, c, nd):
            raise RuntimeError(f"{op}: expected _random_samples of shape {(n, c, nd)}, got {tuple(u.shape)}")
        u = u.astype(dt)
    # PyTorch draws the last spatial dim's sample first in 2-D ((w, h)), the first first in 3-D ((t, h, w))
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts, index = [], [np.arange(n).reshape((n,) + (1,) * (2 * nd + 1)),
                         np.arange(c).reshape((1, c) + (1,) * (2 * nd))]
    for i in range(nd):
        st = _fractional_starts(u[:, :, order[i]], ins[i], sizes[i], k[i])  # (N, C, out_i)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + i] = sizes[i]
        starts.append(st.reshape(shape[:2 + nd]))
        offs = np.arange(k[i]).reshape([1] * (2 + nd + i) + [k[i]] + [1] * (nd - 1 - i))
        index.append(st.reshape(shape) + offs)
    win = x[tuple(index)]  # (N, C, *out, *k): one gather, whose VJP routes each window's gradient back
    out, idx = _window_max(win, x, sizes, k, starts, (1,) * nd)
    return (undo(out), undo(idx)) if return_indices else undo(out)


def fractional_max_pool2d(input: Tensor, kernel_size: int | Sequence[int],
                          output_size: int | Sequence[int] | None = None,
                          output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    r"""Max pooling over kh x kw windows whose starts step pseudo-randomly (Graham's fractional max pooling),
    to an output_size or input size * output_ratio. _random_samples (N, C, 2) in [0, 1) fix the steps (else
    drawn from minitensor's generator).

    forward: out[n, c, y, x] = max_{i, j} x[n, c, r_y + i, c_x + j]   (r, c: _fractional_starts of the samples)
    VJP:     gx at each window's (first) argmax += g[n, c, y, x]
    """
    return _fractional_max(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2,
                           "fractional_max_pool2d")


def fractional_max_pool3d(input: Tensor, kernel_size: int | Sequence[int],
                          output_size: int | Sequence[int] | None = None,
                          output_ratio: float | Sequence[float] | None = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    r"""Fractional max pooling of (N, C, D, H, W) over kd x kh x kw windows; _random_samples (N, C, 3).

    forward: out[n, c, z, y, x] = max_{l, i, j} x[n, c, t_z + l, r_y + i, c_x + j]
    VJP:     gx at each window's (first) argmax += g[n, c, z, y, x]
    """
    return _fractional_max(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3,
                           "fractional_max_pool3d")


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: int | Sequence[int],
                                       output_size: int | Sequence[int] | None = None,
                                       output_ratio: float | Sequence[float] | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""fractional_max_pool2d and the flat index (into H W) of each maximum, whatever return_indices says.

    forward: out[n, c, y, x] = max_{i, j} x[n, c, r_y + i, c_x + j];  idx = row W + col of that max
    VJP:     gx at each window's (first) argmax += g[n, c, y, x]
    """
    return _fractional_max(input, kernel_size, output_size, output_ratio, True, _random_samples, 2,
                           "fractional_max_pool2d")


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: int | Sequence[int],
                                       output_size: int | Sequence[int] | None = None,
                                       output_ratio: float | Sequence[float] | None = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple[Tensor, Tensor]:
    r"""fractional_max_pool3d and the flat index (into D H W) of each maximum, whatever return_indices says.

    forward: out[n, c, z, y, x] = max_{l, i, j} x[n, c, t_z + l, r_y + i, c_x + j];  idx = (d H + row) W + col
    VJP:     gx at each window's (first) argmax += g[n, c, z, y, x]
    """
    return _fractional_max(input, kernel_size, output_size, output_ratio, True, _random_samples, 3,
                           "fractional_max_pool3d")


class MaxPool3d(_MaxPoolNd):
    _nd = 3


class AvgPool3d(_AvgPoolWithDivisor):
    def forward(self, input: Tensor) -> Tensor:
        return avg_pool3d(_tensor(self, input), self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptivePool):
    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool3d(_tensor(self, input), self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return adaptive_max_pool3d(_tensor(self, input), self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] | None = None,
                 padding: int | tuple[int, ...] = 0) -> None:
        super().__init__()
        name, nd = type(self).__name__, self._nd
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", name)
        self.stride = _tuple(stride if stride is not None else kernel_size, nd, "stride", name)
        self.padding = _tuple(padding, nd, "padding", name)

    def forward(self, input: Tensor, indices: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        return _max_unpool(_tensor(self, input), indices, self.kernel_size, self.stride, self.padding, output_size,
                           self._nd, f"max_unpool{self._nd}d")

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _nd = 3


class _LPPoolNd(Module):
    _nd = 2

    def __init__(self, norm_type: float, kernel_size: int | tuple[int, ...],
                 stride: int | tuple[int, ...] | None = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return _lp_pool(_tensor(self, input), self.norm_type, self.kernel_size, self.stride, self.ceil_mode,
                        self._nd, f"lp_pool{self._nd}d")

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    _nd = 1


class LPPool2d(_LPPoolNd):
    _nd = 2


class LPPool3d(_LPPoolNd):
    _nd = 3


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size: int | tuple[int, ...], output_size: int | tuple[int, ...] | None = None,
                 output_ratio: float | tuple[float, ...] | None = None, return_indices: bool = False,
                 _random_samples: Tensor | None = None) -> None:
        super().__init__()
        name, nd = type(self).__name__, self._nd
        if output_size is None and output_ratio is None:  # (PyTorch's first check, before the kernel size's)
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", name)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _tuple(output_size, nd, "output_size", name)
        self.output_ratio = (None if output_ratio is None else (output_ratio,) * nd
                             if isinstance(output_ratio, (int, float)) else tuple(output_ratio))
        if output_size is not None and output_ratio is not None:
            raise ValueError(f"{name}: only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Tensor | tuple[Tensor, Tensor]:
        return _fractional_max(_tensor(self, input), self.kernel_size, self.output_size, self.output_ratio,
                               self.return_indices, self._random_samples, self._nd,
                               f"fractional_max_pool{self._nd}d")


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _nd = 3


_MORE_FUNCTIONS = [
    "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool3d",
    "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d",
    "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "fractional_max_pool2d", "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices",
]
_MORE_MODULES = [
    "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
]
# ---- end of the nnconv helper's block ----


FUNCTIONS: list[str] = [
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", *_MORE_FUNCTIONS,
]
MODULES: list[str] = [
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", *_MORE_MODULES,
]
__all__ = MODULES  # what `from .pooling import *` gives minitensor.nn; the functions are in functional
