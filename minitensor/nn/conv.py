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
from typing import Any, Sequence

import numpy as np

from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..ops._util import tensor_input
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from . import init
from .functional import pad
from .layers import _empty, _tensor
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module
from .parameter import Parameter


def _tuple(v, n, name, op):
    if isinstance(v, int):
        return (v,) * n
    if isinstance(v, str) or not all(isinstance(i, int) for i in v):  # a wrong type: PyTorch's TypeError
        raise TypeError(f"{op}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    v = tuple(v)
    if len(v) != n:
        raise ValueError(f"{op}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    return v


def _int_sizes(op, **given):
    """The type of each size argument (an int or a sequence of ints), checked before the input's shape as
    PyTorch's argument parser does: a string where sizes go is its TypeError, whatever else is wrong."""
    for name, v in given.items():
        if v is None or isinstance(v, int):
            continue
        if isinstance(v, str) or not all(isinstance(i, int) for i in v):
            raise TypeError(f"{op}(): argument '{name}' must be an int or a tuple of ints, got {v!r}")


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
    """im2col: (N, C, *spatial) -> (N, C, *out, *kernel), e.g. in 2-D patches[n, c, y, x, i, j] =
    xp[n, c, y s_h + i d_h, x s_w + j d_w]: one indexing op (its VJP scatters back, adding where patches
    overlap). Dim i's index array has its output positions at axis i and its kernel offsets at axis k + i."""
    k = len(kernel)
    sizes = sizes or [_out_size(xp.shape[2 + i], kernel[i], stride[i], dilation[i], op) for i in range(k)]
    index = []
    for i in range(k):
        shape = [1] * (2 * k)
        shape[i], shape[k + i] = sizes[i], kernel[i]
        index.append(_patch_index(sizes[i], kernel[i], stride[i], dilation[i]).reshape(shape))
    return xp[(slice(None), slice(None), *index)]


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


def _batched(input, nd, op):
    """(N, C, *spatial) as it is, or an unbatched (C, *spatial) with a batch dim of 1, and whether it was."""
    x = tensor_input(input, op)
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input, but got input of "
                           f"size {list(x.shape)}")
    unbatched = x.ndim == nd + 1
    return (x.unsqueeze(0) if unbatched else x), unbatched


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, op):
    _int_sizes(op, stride=stride, dilation=dilation)  # (padding may be the string 'same' or 'valid')
    x, unbatched = _batched(input, nd, op)
    tensor_input(weight, op, "weight")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{op}: weight must be {nd + 2}-D (out_channels, in_channels / groups, *kernel), got shape "
                           f"{tuple(weight.shape)}")
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
    k = len(kernel)
    if any(p for lr in pads for p in lr):
        x = pad(x, tuple(p for lr in reversed(pads) for p in lr))  # F.pad's order: the last dim first
    p = _patches(x, kernel, stride, dilation, op)  # (N, C, *out, *kernel)
    n, sizes, ksize = p.shape[0], tuple(p.shape[2:2 + k]), math.prod(kernel)
    # (N, G, prod(out), C/G prod(kernel)) @ (G, C/G prod(kernel), O/G): one batched matrix product, a batch
    # dim per group
    cols = p.reshape(n, groups, cg, *sizes, *kernel).permute(0, 1, *range(3, 3 + k), 2, *range(3 + k, 3 + 2 * k))
    cols = cols.reshape(n, groups, math.prod(sizes), cg * ksize)
    wmat = w.reshape(groups, o // groups, cg * ksize).mT
    out = (cols @ wmat).permute(0, 1, 3, 2).reshape(n, o, *sizes)  # (N, O, *out)
    if nd == 1:
        out = out.squeeze(2)
    # PyTorch's output is row-major memory of its own: `.view(n, -1)` may follow, and so may an in-place
    # activation (nn.ReLU(inplace=True)), which a view of our matmul's result would refuse
    out = out.contiguous()
    if bias is not None:
        out = out + bias.reshape(1, o, *(1,) * nd)
    elif out._base is not None:
        out = out.clone()
    out = shown_as(out, "ConvolutionBackward0")  # PyTorch's one node (an unbatched input's is its squeeze)
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


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    r"""3-D convolution of (N, C, D, H, W) or (C, D, H, W) with W (O, C/groups, kd, kh, kw): the same im2col
    gather (patches (N, od oh ow, C kd kh kw)) and one matrix product as conv2d, with one more spatial dim.

    forward: out[n, o, z, y, x] = b[o] + \sum_{c, l, i, j} W[o, c, l, i, j] xp[n, c, z s_d + l d_d, y s_h + i d_h,
                                                                          x s_w + j d_w]
    VJP:     gx = col2im(g W);  gW[o, :] = \sum_{n, z, y, x} g[n, o, z, y, x] patch[n, z, y, x];
             gb[o] = \sum_{n, z, y, x} g[n, o, z, y, x]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


# ---- transposed convolutions -------------------------------------------------------------------
def _spread(x, d, s):
    """Insert s - 1 zeros between neighbours along dim d (length L -> (L - 1) s + 1): each entry gets s - 1
    zeros after it (a pad of a new last dim), the dims are merged, and the trailing zeros cut off."""
    if s == 1 or x.shape[d] == 0:
        return x
    n = x.shape[d]
    t = pad(x.movedim(d, -1).unsqueeze(-1), (0, s - 1))
    t = t.reshape(*t.shape[:-2], n * s)[..., :(n - 1) * s + 1]
    return t.movedim(-1, d)


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd, op):
    _int_sizes(op, stride=stride, padding=padding, output_padding=output_padding, dilation=dilation)
    x, unbatched = _batched(input, nd, op)
    tensor_input(weight, op, "weight")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{op}: weight must be {nd + 2}-D (in_channels, out_channels / groups, *kernel), got "
                           f"shape {tuple(weight.shape)}")
    c, og = weight.shape[0], weight.shape[1]
    if groups <= 0 or c % groups or x.shape[1] != c:
        raise RuntimeError(f"{op}: given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {c} channels, but got {x.shape[1]} channels instead")
    kernel = tuple(weight.shape[2:])
    s, d = _tuple(stride, nd, "stride", op), _tuple(dilation, nd, "dilation", op)
    p, op_ = _tuple(padding, nd, "padding", op), _tuple(output_padding, nd, "output_padding", op)
    if any(o >= si and o >= di for o, si, di in zip(op_, s, d)):
        raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                           f"output_padding={op_}, stride={s}, dilation={d}")
    sizes = [(x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + op_[i] + 1 for i in range(nd)]
    if min(sizes) <= 0:
        raise RuntimeError(f"{op}: given input size {tuple(x.shape[2:])}, the output size {tuple(sizes)} is too "
                           f"small (kernel_size={kernel}, stride={s}, padding={p}, dilation={d})")
    for i in range(nd):
        x = _spread(x, 2 + i, s[i])
    # d (k - 1) - p on the near side, that plus output_padding on the far side; a negative width crops
    edges = [(d[i] * (kernel[i] - 1) - p[i], d[i] * (kernel[i] - 1) - p[i] + op_[i]) for i in range(nd)]
    x = pad(x, tuple(e for lr in reversed(edges) for e in lr))
    # the kernel as a convolution's: in and out channels swapped within each group, flipped in space
    w = weight.reshape(groups, c // groups, og, *kernel).transpose(1, 2).reshape(groups * og, c // groups, *kernel)
    w = w.flip(tuple(range(2, 2 + nd)))
    out = _conv(x, w, bias, 1, 0, d, groups, nd, op)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
                     padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    r"""Transposed 1-D convolution of (N, C, L) or (C, L) with W (C, O/groups, k): conv1d's VJP with respect
    to its input, so out length (L - 1) s - 2 p + d (k - 1) + output_padding + 1.

    forward: out[n, o, t] = b[o] + \sum_{c, u, i: u s + i d - p = t} W[c, o, i] x[n, c, u]   (each input
             spreads W's taps over the output), computed as a stride-1 conv1d (dilation d) of x with s - 1 zeros
             between its entries, padded d (k - 1) - p each side (+ output_padding on the right), by W with its
             channels swapped and its taps flipped
    VJP:     gx = conv1d(g, W, stride s, padding p, dilation d);
             gW[c, o, i] = \sum_{n, u} x[n, c, u] gp[n, o, u s + i d]   (gp: g padded by p);
             gb[o] = \sum_{n, t} g[n, o, t]   (all from the ops' VJPs: the zero-spreading pad, the gather, the matmul)
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                           "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
                     padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    r"""Transposed 2-D convolution of (N, C, H, W) or (C, H, W) with W (C, O/groups, kh, kw): conv2d's VJP
    with respect to its input ("deconvolution"), out size (H - 1) s - 2 p + d (k - 1) + output_padding + 1.

    forward: out[n, o, y, x] = b[o] + \sum_{c, u, v, i, j: u s_h + i d_h - p_h = y, v s_w + j d_w - p_w = x}
                                      W[c, o, i, j] x[n, c, u, v]
             computed as a stride-1 conv2d of x spread with s - 1 zeros between entries, padded d (k - 1) - p
             (+ output_padding on the far side), by W with in/out channels swapped and flipped in space
    VJP:     gx = conv2d(g, W, stride s, padding p, dilation d);  gW and gb from the ops' VJPs
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
                     padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    r"""Transposed 3-D convolution of (N, C, D, H, W) or (C, D, H, W) with W (C, O/groups, kd, kh, kw):
    conv3d's VJP with respect to its input.

    forward: out = conv3d(spread(x, s) padded d (k - 1) - p (+ output_padding), flip(W^T), dilation d) + b
    VJP:     gx = conv3d(g, W, stride s, padding p, dilation d);  gW and gb from the ops' VJPs
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    r"""A 1-D convolution in (time, batch, channels) layout: input (T, N, C), weight (k, C, O), bias (O,).

    forward: out[t, n, o] = b[o] + \sum_{c, i} W[i, c, o] xp[t + i, n, c]   (xp padded by `pad` in time)
    VJP:     conv1d's, through the permutes
    """
    op = "conv_tbc"
    x, w, b = tensor_input(input, op), tensor_input(weight, op, "weight"), tensor_input(bias, op, "bias")
    if x.ndim != 3 or w.ndim != 3 or b.ndim != 1:
        raise RuntimeError(f"{op}: input must have 3 dims (time, batch, in_channels), weight 3 (kernel, in_channels, "
                           f"out_channels) and bias 1; got shapes {tuple(x.shape)}, {tuple(w.shape)}, "
                           f"{tuple(b.shape)}")
    if x.shape[2] != w.shape[1] or b.shape[0] != w.shape[2]:
        raise RuntimeError(f"{op}: input channels {x.shape[2]} must equal weight's {w.shape[1]} and bias size "
                           f"{b.shape[0]} the output channels {w.shape[2]}")
    out = _conv(x.permute(1, 2, 0), w.permute(2, 1, 0), b, 1, pad, 1, 1, 1, op)
    return out.permute(2, 0, 1)


def unfold(input: Tensor, kernel_size: int | Sequence[int], dilation: int | Sequence[int] = 1,
           padding: int | Sequence[int] = 0, stride: int | Sequence[int] = 1) -> Tensor:
    r"""im2col: (N, C, H, W) -> (N, C kh kw, L), column l holding the patch of the l-th output position.

    forward: out[n, c kh kw + i kw + j, y ow + x] = xp[n, c, y s_h + i d_h, x s_w + j d_w]
    VJP:     gx = fold(g): each pixel sums the gradients of the patch entries read from it
    """
    op = "unfold"
    _int_sizes(op, kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
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
    """weight (out_channels, in_channels / groups, *kernel_size) (transposed: (in_channels,
    out_channels / groups, *kernel_size)) and bias (out_channels,), both initialised as PyTorch's:
    kaiming_uniform_(a=sqrt(5)) and U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = weight.shape[1] prod(kernel)."""

    weight: Parameter
    bias: Parameter | None
    _nd = 2
    transposed = False

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
        if self.transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        if self.transposed and isinstance(padding, str):
            raise ValueError(f"{name}: padding must be an int or a tuple of ints, got {padding!r}")
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
        self.output_padding: tuple[int, ...] = (0,) * nd  # (a transposed convolution sets its own)
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups) if self.transposed else (out_channels, in_channels // groups)
        self.weight = _empty(shape + self.kernel_size, dtype, device, name)
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
        fn = _CONV[self._nd]
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
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
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


# ---- issue 30, point 2 (nnconv helper): Conv3d, the transposed convolutions and the lazy modules ------------
class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) inputs (see conv3d for the im2col formula)."""

    _nd = 3


_CONV = {1: conv1d, 2: conv2d, 3: conv3d}
_CONV_TRANSPOSE = {1: conv_transpose1d, 2: conv_transpose2d, 3: conv_transpose3d}


class _ConvTransposeNd(_ConvNd):
    """The transposed convolution as a Module: conv_transposeNd with its weight (in_channels, out_channels / groups,
    *kernel_size); forward(input, output_size) picks the output_padding that gives that size, as PyTorch."""

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, ...],
                 stride: int | tuple[int, ...] = 1, padding: int | tuple[int, ...] = 0,
                 output_padding: int | tuple[int, ...] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int, ...] = 1, padding_mode: str = "zeros", device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)
        self.output_padding = _tuple(output_padding, self._nd, "output_padding", type(self).__name__)

    def _output_padding(self, x, output_size):
        if output_size is None:
            return self.output_padding
        nd, name = self._nd, type(self).__name__
        size = list(output_size)
        lead = 2 if x.ndim == nd + 2 else 1
        if len(size) == lead + nd:
            size = size[lead:]
        if len(size) != nd:
            raise ValueError(f"{name}: output_size must have {nd} or {lead + nd} elements (got {len(output_size)})")
        pads: Any = self.padding  # a tuple of ints: a transposed convolution takes no padding string
        lo = [(x.shape[lead + i] - 1) * self.stride[i] - 2 * pads[i]
              + self.dilation[i] * (self.kernel_size[i] - 1) + 1 for i in range(nd)]
        for i in range(nd):
            if not lo[i] <= size[i] <= lo[i] + self.stride[i] - 1:
                raise ValueError(f"{name}: requested an output size of {size}, but valid sizes range from {lo} to "
                                 f"{[m + s - 1 for m, s in zip(lo, self.stride)]} (for an input of "
                                 f"{list(x.shape[lead:])})")
        return tuple(size[i] - lo[i] for i in range(nd))

    def forward(self, input: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        x = _tensor(self, input)
        pads: Any = self.padding
        return _CONV_TRANSPOSE[self._nd](x, self.weight, self.bias, self.stride, pads,
                                         self._output_padding(x, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C, L) inputs (conv1d's VJP; see conv_transpose1d)."""

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over (N, C, H, W) inputs (conv2d's VJP; see conv_transpose2d)."""

    _nd = 2


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C, D, H, W) inputs (conv3d's VJP; see conv_transpose3d)."""

    _nd = 3


class _LazyConvMixin(LazyModuleMixin):
    """in_channels = the first input's channel dim; until then weight and bias are UninitializedParameters."""

    def _lazy_init(self, bias, dtype):
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:  # type: ignore[attr-defined]
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        me: Any = self
        x = _tensor(me, input)
        if x.ndim not in (me._nd + 1, me._nd + 2):
            raise RuntimeError(f"{type(self).__name__}: expected {me._nd + 1}D (unbatched) or {me._nd + 2}D "
                               f"(batched) input, but got input of size {list(x.shape)}")
        me.in_channels = x.shape[0] if x.ndim == me._nd + 1 else x.shape[1]
        if me.in_channels % me.groups:
            raise ValueError(f"{type(self).__name__}: in_channels must be divisible by groups")
        if me.transposed:
            shape = (me.in_channels, me.out_channels // me.groups)
        else:
            shape = (me.out_channels, me.in_channels // me.groups)
        me.weight.materialize(shape + me.kernel_size)
        if isinstance(me.bias, UninitializedParameter):
            me.bias.materialize((me.out_channels,))
        self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] = 1,
                 padding: str | int | tuple[int, ...] = 0, dilation: int | tuple[int, ...] = 1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        # in_channels 0 for now; through the mixin, which registers the hook that sizes the parameters
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode,
                         device, dtype)
        self.out_channels = out_channels
        self._lazy_init(bias, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels: int, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] = 1,
                 padding: int | tuple[int, ...] = 0, output_padding: int | tuple[int, ...] = 0, groups: int = 1,
                 bias: bool = True, dilation: int | tuple[int, ...] = 1, padding_mode: str = "zeros",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                         padding_mode, device, dtype)
        self.out_channels = out_channels
        self._lazy_init(bias, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """Conv1d whose in_channels is read from the first input (it then becomes a Conv1d)."""

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """Conv2d whose in_channels is read from the first input (it then becomes a Conv2d)."""

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """Conv3d whose in_channels is read from the first input (it then becomes a Conv3d)."""

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """ConvTranspose1d whose in_channels is read from the first input."""

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """ConvTranspose2d whose in_channels is read from the first input."""

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """ConvTranspose3d whose in_channels is read from the first input."""

    cls_to_become = ConvTranspose3d
# ---- end of the nnconv helper's block ----


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


FUNCTIONS: list[str] = ["conv1d", "conv2d", "unfold", "fold",
                         "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc"]
MODULES: list[str] = ["Conv1d", "Conv2d", "Unfold", "Fold",
                       "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d", "LazyConv2d",
                       "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]
__all__ = MODULES  # what `from .conv import *` gives minitensor.nn; the functions are in functional
