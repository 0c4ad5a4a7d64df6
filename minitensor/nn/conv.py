r"""Convolutions the teaching way: im2col, then one matrix product (PyTorch's Conv1d, Conv2d, F.conv1d,
F.conv2d, F.unfold and F.fold).

A 2-D convolution of x (N, C, H, W) with a kernel W (O, C, kh, kw) is

    out[n, o, y, x] = b[o] + \sum_{c, i, j} W[o, c, i, j] xp[n, c, y s_h + i d_h, x s_w + j d_w]

(xp the zero-padded input, s the stride, d the dilation). Gathering, for every output position
(y, x), the C kh kw input values it reads into one row ("im2col": a patches tensor of shape
(N, oh, ow, C kh kw)) turns the whole convolution into one product of that matrix with the kernel
reshaped to (C kh kw, O). The gather is an indexing op, whose VJP adds each patch entry's gradient
back into the pixel it was read from, so the gradient of the convolution comes from the ops' VJPs:
    gx = fold(g W)   (col2im: each pixel sums the gradients of every patch that read it),
    gW = \sum_{n, y, x} g[n, :, y, x] patches[n, y, x, :]^T,   gb = \sum_{n, y, x} g[n, :, y, x].
Groups split C and O into `groups` independent convolutions (a batch dim of the product).
A 1-D convolution is the 2-D one with height 1.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..ops._util import tensor_input
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from . import init
from .functional import pad
from .layers import _empty, _tensor
from .module import Module
from .parameter import Parameter


def _tuple(v, n, name, op):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(v)
    if len(v) != n or not all(isinstance(i, int) for i in v):
        raise ValueError(f"{op}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    return v


def _out_size(n, k, s, d, op):
    out = (n - d * (k - 1) - 1) // s + 1
    if out <= 0 or n < d * (k - 1) + 1:
        raise RuntimeError(f"{op}: calculated padded input size per channel: ({n}). Kernel size: ({d * (k - 1) + 1}). "
                           f"Kernel size can't be greater than actual input size")
    return out


def _patch_index(n_out, k, s, d):
    """idx[y, i] = y s + i d: the input row that output row y reads at kernel row i."""
    return (np.arange(n_out) * s)[:, None] + (np.arange(k) * d)[None, :]


def _patches(xp, kernel, stride, dilation, op, sizes=None):
    """im2col: (N, C, H, W) -> (N, C, oh, ow, kh, kw), patches[n, c, y, x, i, j] = xp[n, c, y s_h + i d_h,
    x s_w + j d_w], one indexing op (its VJP scatters back, adding where patches overlap)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    oh, ow = sizes if sizes else (_out_size(xp.shape[2], kh, sh, dh, op), _out_size(xp.shape[3], kw, sw, dw, op))
    rows = _patch_index(oh, kh, sh, dh)[:, None, :, None]  # (oh, 1, kh, 1)
    cols = _patch_index(ow, kw, sw, dw)[None, :, None, :]  # (1, ow, 1, kw)
    return xp[:, :, rows, cols]


def _conv_padding(padding, kernel, dilation, stride, op, error=RuntimeError):
    """Left and right padding of each spatial dim, from an int, a tuple, 'valid' or 'same' (a bad string is
    `error`: PyTorch's functions raise RuntimeError, its modules' constructors ValueError)."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * len(kernel)
        if padding != "same":
            raise error(f"{op}: invalid padding string {padding!r}, should be one of 'valid' or 'same'")
        if any(s != 1 for s in stride):
            raise error(f"{op}: padding='same' is not supported for strided convolutions")
        # the total d (k - 1) split in two, the odd one out on the right, as PyTorch
        return [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation)]
    return [(p, p) for p in _tuple(padding, len(kernel), "padding", op)]


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, op):
    x = tensor_input(input, op)
    tensor_input(weight, op, "weight")
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input, but got input of "
                           f"size {list(x.shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{op}: weight must be {nd + 2}-D (out_channels, in_channels / groups, *kernel), got shape "
                           f"{tuple(weight.shape)}")
    unbatched = x.ndim == nd + 1
    if unbatched:
        x = x.unsqueeze(0)
    o, cg = weight.shape[0], weight.shape[1]
    if x.shape[1] != cg * groups or o % groups:
        raise RuntimeError(f"{op}: given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {cg * groups} channels, but got {x.shape[1]} channels instead")
    kernel = tuple(weight.shape[2:])
    stride, dilation = _tuple(stride, nd, "stride", op), _tuple(dilation, nd, "dilation", op)
    pads = _conv_padding(padding, kernel, dilation, stride, op)
    w = weight
    if nd == 1:  # a 1-D convolution is a 2-D one of height 1
        x, w = x.unsqueeze(2), w.unsqueeze(2)
        kernel, stride, dilation, pads = (1,) + kernel, (1,) + stride, (1,) + dilation, [(0, 0)] + pads
    if any(p for lr in pads for p in lr):
        x = pad(x, (pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
    p = _patches(x, kernel, stride, dilation, op)  # (N, C, oh, ow, kh, kw)
    n, _, oh, ow = p.shape[:4]
    # (N, G, oh ow, C/G kh kw) @ (G, C/G kh kw, O/G): one batched matrix product, a batch dim per group
    cols = p.reshape(n, groups, cg, oh, ow, kernel[0], kernel[1]).permute(0, 1, 3, 4, 2, 5, 6)
    cols = cols.reshape(n, groups, oh * ow, cg * kernel[0] * kernel[1])
    wmat = w.reshape(groups, o // groups, cg * kernel[0] * kernel[1]).mT
    out = (cols @ wmat).permute(0, 1, 3, 2).reshape(n, o, oh, ow)  # (N, O, oh, ow)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
    if nd == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    r"""2-D convolution (cross-correlation, as PyTorch) of (N, C, H, W) or (C, H, W) with W (O, C/groups, kh, kw).
    padding: an int, a pair, 'valid' (none) or 'same' (output size = input size; stride 1 only).

    forward: out[n, o, y, x] = b[o] + \sum_{c, i, j} W[o, c, i, j] xp[n, c, y s_h + i d_h, x s_w + j d_w]
             (as patches (N, oh ow, C kh kw) @ W reshaped (C kh kw, O): im2col, then a matmul)
    VJP:     gx = col2im(g W) (each pixel sums the gradients of the patches that read it);
             gW[o, :] = \sum_{n, y, x} g[n, o, y, x] patch[n, y, x];  gb[o] = \sum_{n, y, x} g[n, o, y, x]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    r"""1-D convolution of (N, C, L) or (C, L) with W (O, C/groups, k): conv2d with height 1.

    forward: out[n, o, t] = b[o] + \sum_{c, i} W[o, c, i] xp[n, c, t s + i d]   (im2col, then a matmul)
    VJP:     gx = col2im(g W);  gW[o, c, i] = \sum_{n, t} g[n, o, t] xp[n, c, t s + i d];
             gb[o] = \sum_{n, t} g[n, o, t]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def unfold(input: Tensor, kernel_size: int | Sequence[int], dilation: int | Sequence[int] = 1,
           padding: int | Sequence[int] = 0, stride: int | Sequence[int] = 1) -> Tensor:
    r"""im2col: (N, C, H, W) -> (N, C kh kw, L), column l holding the patch of the l-th output position.

    forward: out[n, c kh kw + i kw + j, y ow + x] = xp[n, c, y s_h + i d_h, x s_w + j d_w]
    VJP:     gx = fold(g): each pixel sums the gradients of the patch entries read from it
    """
    op = "unfold"
    x = tensor_input(input, op)
    if x.ndim not in (3, 4):
        raise RuntimeError(f"{op}: expected a 3D or 4D input (N, C, H, W), got shape {tuple(x.shape)}")
    unbatched = x.ndim == 3
    if unbatched:
        x = x.unsqueeze(0)
    kernel = _tuple(kernel_size, 2, "kernel_size", op)
    ph, pw = _tuple(padding, 2, "padding", op)
    if ph or pw:
        x = pad(x, (pw, pw, ph, ph))
    p = _patches(x, kernel, _tuple(stride, 2, "stride", op), _tuple(dilation, 2, "dilation", op), op)
    n, c, oh, ow, kh, kw = p.shape
    out = p.permute(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
    return out.squeeze(0) if unbatched else out


class Col2Im(Function):
    r"""out = col2im(x): x (N, C kh kw, L) summed into an image (N, C, H, W): each column l's entries are
    added at the pixels its patch covers (overlaps add up), then the padding is cut off
    VJP: gx = unfold(g) (the patches of g, with the same kernel, stride, padding and dilation)"""

    @staticmethod
    def forward(ctx, x, output_size, kernel, stride, padding, dilation):
        n, ckk, _ = x.shape
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
        (h, w), c = output_size, ckk // (kh * kw)
        oh, ow = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
        out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=x._array.dtype)
        cols = x._array.reshape(n, c, kh, kw, oh, ow)
        for i in range(kh):  # one strided slice per kernel offset: every patch's (i, j) entry at once
            for j in range(kw):
                rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
                out[:, :, rows, j * dw:j * dw + sw * (ow - 1) + 1:sw] += cols[:, :, i, j]
        return out[:, :, ph:ph + h, pw:pw + w]

    @staticmethod
    def backward(ctx, g):
        _, _, kernel, stride, padding, dilation = ctx.inputs
        return unfold(g, kernel, dilation, padding, stride), None, None, None, None, None


@with_formulas(Col2Im)
def fold(input: Tensor, output_size: int | Sequence[int], kernel_size: int | Sequence[int],
         dilation: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
         stride: int | Sequence[int] = 1) -> Tensor:
    """col2im, the adjoint of unfold: columns (N, C kh kw, L) summed back into an image (N, C, H, W)."""
    op = "fold"
    x = tensor_input(input, op)
    if x.ndim not in (2, 3):
        raise RuntimeError(f"{op}: expected a 2D or 3D input (N, C kh kw, L), got shape {tuple(x.shape)}")
    unbatched = x.ndim == 2
    if unbatched:
        x = x.unsqueeze(0)
    size, kernel = _tuple(output_size, 2, "output_size", op), _tuple(kernel_size, 2, "kernel_size", op)
    st, pd = _tuple(stride, 2, "stride", op), _tuple(padding, 2, "padding", op)
    dl = _tuple(dilation, 2, "dilation", op)
    blocks = [(size[i] + 2 * pd[i] - dl[i] * (kernel[i] - 1) - 1) // st[i] + 1 for i in range(2)]
    if x.shape[1] % (kernel[0] * kernel[1]) or x.shape[2] != blocks[0] * blocks[1] or min(blocks) <= 0:
        raise RuntimeError(f"{op}: input of shape {tuple(x.shape)} does not hold C * {kernel[0] * kernel[1]} rows of "
                           f"{blocks[0] * blocks[1]} blocks for output_size {size} and kernel_size {kernel}")
    out = Col2Im.apply(x, size, kernel, st, pd, dl)
    return out.squeeze(0) if unbatched else out


# ---- the Modules -------------------------------------------------------------------------------
class _ConvNd(Module):
    """weight (out_channels, in_channels / groups, *kernel_size) and bias (out_channels,), both
    initialised as PyTorch's: kaiming_uniform_(a=sqrt(5)) and U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""

    weight: Parameter
    bias: Parameter | None
    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, ...],
                 stride: int | tuple[int, ...] = 1, padding: str | int | tuple[int, ...] = 0,
                 dilation: int | tuple[int, ...] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__()
        name, nd = type(self).__name__, self._nd
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"{name}: padding_mode must be one of 'zeros', 'reflect', 'replicate' or 'circular', "
                             f"but got padding_mode={padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size", name)
        self.stride = _tuple(stride, nd, "stride", name)
        self.dilation = _tuple(dilation, nd, "dilation", name)
        if isinstance(padding, str):
            _conv_padding(padding, self.kernel_size, self.dilation, self.stride, name, ValueError)  # (checks it)
            self.padding: str | tuple[int, ...] = padding
        else:
            self.padding = _tuple(padding, nd, "padding", name)
        self.padding_mode = padding_mode
        self.weight = _empty((out_channels, in_channels // groups) + self.kernel_size, dtype, device, name)
        if bias:
            self.bias = _empty((out_channels,), dtype, device, name)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.weight.shape[2:])
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        x = _tensor(self, input)
        fn = conv1d if self._nd == 1 else conv2d
        if self.padding_mode == "zeros":
            return fn(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        pads = _conv_padding(self.padding, self.kernel_size, self.dilation, self.stride, type(self).__name__)
        flat = tuple(p for lr in reversed(pads) for p in lr)  # F.pad's order: the last dim first
        return fn(pad(x, flat, self.padding_mode), self.weight, self.bias, self.stride, 0, self.dilation,
                  self.groups)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) inputs (see the module docstring for the im2col formula)."""

    _nd = 1


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) inputs (see the module docstring for the im2col formula)."""

    _nd = 2


class Unfold(Module):
    def __init__(self, kernel_size: int | tuple[int, ...], dilation: int | tuple[int, ...] = 1,
                 padding: int | tuple[int, ...] = 0, stride: int | tuple[int, ...] = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(_tensor(self, input), self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    def __init__(self, output_size: int | tuple[int, ...], kernel_size: int | tuple[int, ...],
                 dilation: int | tuple[int, ...] = 1, padding: int | tuple[int, ...] = 0,
                 stride: int | tuple[int, ...] = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(_tensor(self, input), self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


FUNCTIONS: list[str] = ["conv1d", "conv2d", "unfold", "fold"]
MODULES: list[str] = ["Conv1d", "Conv2d", "Unfold", "Fold"]
__all__ = MODULES  # what `from .conv import *` gives minitensor.nn; the functions are in functional
