r"""Sampling an image at given points (PyTorch's F.affine_grid, F.grid_sample, F.upsample_nearest,
F.upsample_bilinear, nn.UpsamplingNearest2d and nn.UpsamplingBilinear2d), and the 3-D and circular padding
modules.

grid_sample reads an input (N, C, H, W) at the points of a grid (N, oh, ow, 2) whose entries (x, y) lie in
[-1, 1] across the input (x along W, y along H). Each coordinate is first mapped to a pixel position

    u = (x + 1) (W - 1) / 2   (align_corners: -1 and 1 are the corner pixels' centres)
    u = ((x + 1) W - 1) / 2   (else: -1 and 1 are the corner pixels' outer edges),

then bilinear sampling mixes the four pixels around (u, v):

    out = \sum_{a, b in {0, 1}} w_a(u) w_b(v) x[v0 + b, u0 + a],   u0 = floor(u), w_1(u) = u - u0, w_0 = 1 - w_1,

a pixel outside the input reading as 0 (padding_mode 'zeros'), or the position first clamped into the
input ('border') or mirrored back into it ('reflection'). It is built from gathers and products, so its VJPs
are the ops': the input's gradient is g scattered back into the four pixels with the same weights, the
grid's is g (x[.., u0 + 1] - x[.., u0]) times the other weight (times dU/dx = (W - 1) / 2 or W / 2).
"""
from __future__ import annotations

import itertools
import math
import warnings
from typing import Sequence

import numpy as np

from .. import _dtype
from ..factories import _linspace_values
from ..ops._util import tensor_input
from ..ops.indexing import where
from ..tensor import Tensor
from .misc import Upsample, ZeroPad1d, _ConstantPadNd, _PadNd, interpolate


def upsample_nearest(input: Tensor, size: int | Sequence[int] | None = None,
                     scale_factor: float | Sequence[float] | None = None) -> Tensor:
    r"""PyTorch's deprecated name for interpolate(mode='nearest') (it warns, as PyTorch).

    forward: out[i] = x[min(floor(i n_in / n_out), n_in - 1)]   along each spatial dim
    VJP:     each g[i] added into the entry out[i] read
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: int | Sequence[int] | None = None,
                      scale_factor: float | Sequence[float] | None = None) -> Tensor:
    r"""PyTorch's deprecated name for interpolate(mode='bilinear', align_corners=True) (it warns, as PyTorch).

    forward: out[i] = (1 - l) x[i0] + l x[i0 + 1],  src = i (n_in - 1) / (n_out - 1), i0 = floor(src), l = src - i0
    VJP:     each g[i] added into x[i0] and x[i0 + 1] with weights 1 - l and l
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _align_corners(align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired.", stacklevel=3)
        return False
    return bool(align_corners)


def _base_coords(n, align_corners, dtype):
    """The n normalised pixel positions in [-1, 1]: the centres (align_corners) or the centres of n equal cells.
    Rounded as PyTorch's: its linspace, then (in the dtype) times n - 1, over n; a grid point that lands on
    a pixel is where bilinear sampling's gradient jumps, and its last bit picks the side."""
    if n <= 1:
        return np.zeros(max(n, 0), dtype=dtype)
    c = _linspace_values(-1.0, 1.0, n, dtype)
    return c if align_corners else c * c.dtype.type(n - 1) / c.dtype.type(n)


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool | None = None) -> Tensor:
    r"""The sampling grid of a batch of affine maps: theta (N, 2, 3) for size (N, C, H, W) gives (N, H, W, 2);
    theta (N, 3, 4) for size (N, C, D, H, W) gives (N, D, H, W, 3).

    forward: grid[n, y, x] = theta[n] @ (x_x, y_y, 1)   (x_x, y_y the normalised positions of column x, row y;
             see grid_sample), i.e. grid = base @ theta^T with base (H W, 3) constant
    VJP:     gtheta[n] = g[n]^T base   (summed over the positions)
    """
    op = "affine_grid"
    th = tensor_input(theta, op, "theta")
    align = _align_corners(align_corners)
    if not _dtype.is_floating(th.dtype):
        raise ValueError(f"Expected theta to have floating point type, but got {th.dtype}")
    size = [int(s) for s in size]
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    nd = len(size) - 2
    if th.ndim != 3 or tuple(th.shape[1:]) != (nd, nd + 1):
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} for size {size}. "
                         f"Got {list(th.shape)}.")
    spatial = size[2:]
    if align and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    dt = th._array.dtype
    # base[..., 0] runs along the last dim (x), base[..., 1] along the one before (y), ...; base[..., nd] = 1
    axes = [_base_coords(s, align, dt) for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([mesh[nd - 1 - i] for i in range(nd)] + [np.ones(spatial, dtype=dt)], axis=-1)
    flat = Tensor._make(base.reshape(-1, nd + 1))
    return (flat @ th.mT).reshape(size[0], *spatial, nd)


def _reflect(u, lo2, hi2):
    """Mirror u back into [lo2 / 2, hi2 / 2] as often as needed (PyTorch's reflect_coordinates): with
    t = |u - lo|, k = floor(t / span), the result is lo + t - k span (k even) or lo + span - (t - k span)."""
    if lo2 == hi2:
        return u * 0
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    t = (u - lo).abs()
    k = np.floor(t.numpy(force=True) / span)
    extra = t - Tensor._make((k * span).astype(t._array.dtype))
    return where(Tensor._make(k % 2 == 0), extra + lo, (span + lo) - extra)


def _source_position(c, n, padding_mode, align):
    """A normalised coordinate (a Tensor) as a pixel position along a dim of n, after the padding mode."""
    u = (c + 1) * ((n - 1) / 2) if align else ((c + 1) * n - 1) / 2
    if padding_mode == "border":
        u = u.clamp(0, n - 1)
    elif padding_mode == "reflection":
        u = _reflect(u, 0, 2 * (n - 1)) if align else _reflect(u, -1, 2 * n - 1)
        u = u.clamp(0, n - 1)
    return u


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    r"""Sample input (N, C, H, W) at grid (N, oh, ow, 2) (or (N, C, D, H, W) at (N, od, oh, ow, 3)): see the
    module docstring. mode 'bilinear' (trilinear in 3-D) or 'nearest'; padding_mode 'zeros', 'border' or
    'reflection'.

    forward: out[n, :, p] = \sum_{corners k} w_k(u_p) x[n, :, k]   (bilinear: the 2^d pixels around u_p, weights
             the products of u - u0 or 1 - (u - u0) per dim; nearest: the one pixel at round(u_p), weight 1;
             an out-of-range pixel reads 0)
    VJP:     gx = g scattered into the same pixels with the same weights (the gathers' VJP);
             ggrid = \sum_k g x[k] dw_k/du du/dgrid (bilinear; zero for nearest: the grid reaches no output)
    """
    op = "grid_sample"
    x, gr = tensor_input(input, op), tensor_input(grid, op, "grid")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode='bicubic' is not supported (only 'bilinear' and 'nearest')")
    align = _align_corners(align_corners)
    if x.ndim not in (4, 5) or gr.ndim != x.ndim or gr.shape[-1] != x.ndim - 2 or gr.shape[0] != x.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected a 4D or 5D input and a grid of the same batch size with "
                           f"{x.ndim - 2} coordinates in its last dim, but got input of shape {list(x.shape)} and "
                           f"grid of shape {list(gr.shape)}")
    if x.dtype != gr.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has {x.dtype} "
                           f"and grid has {gr.dtype}")
    nd, n, c = x.ndim - 2, x.shape[0], x.shape[1]
    ins, outs = tuple(x.shape[2:]), tuple(gr.shape[1:-1])
    # spatial dim i (of size ins[i]) is addressed by the grid's coordinate nd - 1 - i (x runs along the last)
    pos = [_source_position(gr[..., nd - 1 - i], ins[i], padding_mode, align) for i in range(nd)]
    flat = x.reshape(n, c, math.prod(ins))

    def read(corner):
        """x at integer positions corner (numpy (N, *out) each), zero where a position leaves the input."""
        inside = np.ones((n,) + outs, dtype=bool)
        for i in range(nd):
            inside &= (corner[i] >= 0) & (corner[i] < ins[i])
        clipped = [np.clip(corner[i], 0, ins[i] - 1) for i in range(nd)]
        idx = np.ravel_multi_index(clipped, ins).reshape(n, 1, -1)
        vals = flat.gather(2, Tensor._make(np.broadcast_to(idx, (n, c, idx.shape[2])).copy()))
        vals = vals.reshape(n, c, *outs)
        return vals * Tensor._make(inside[:, None].astype(x._array.dtype))

    if mode == "nearest":
        # round half to even, as PyTorch's nearbyint
        return read([np.rint(p.numpy(force=True)).astype(np.int64) for p in pos])
    lo = [np.floor(p.numpy(force=True)) for p in pos]
    frac = [p - Tensor._make(f.astype(x._array.dtype)) for p, f in zip(pos, lo)]  # u - u0: carries the gradient
    terms = []
    for bits in itertools.product((0, 1), repeat=nd):  # the 2^d corners around each sampling point
        weight = frac[0] if bits[0] else 1 - frac[0]
        for i in range(1, nd):
            weight = weight * (frac[i] if bits[i] else 1 - frac[i])
        terms.append(read([lo[i].astype(np.int64) + b for i, b in enumerate(bits)]) * weight.unsqueeze(1))
    out = terms[0]
    for term in terms[1:]:
        out = out + term
    return out


# ---- the Modules -------------------------------------------------------------------------------
class UpsamplingNearest2d(Upsample):
    """Upsample with mode='nearest' over (N, C, H, W)."""

    def __init__(self, size: int | tuple[int, int] | None = None,
                 scale_factor: float | tuple[float, float] | None = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode='bilinear' and align_corners=True over (N, C, H, W)."""

    def __init__(self, size: int | tuple[int, int] | None = None,
                 scale_factor: float | tuple[float, float] | None = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class ConstantPad3d(_ConstantPadNd):
    _n = 6


class ZeroPad3d(ZeroPad1d):
    _n = 6


class ReflectionPad3d(_PadNd):
    _n, _mode = 6, "reflect"


class ReplicationPad3d(_PadNd):
    _n, _mode = 6, "replicate"


class CircularPad1d(_PadNd):
    _n, _mode = 2, "circular"


class CircularPad2d(_PadNd):
    _n, _mode = 4, "circular"


class CircularPad3d(_PadNd):
    _n, _mode = 6, "circular"


FUNCTIONS: list[str] = ["upsample_nearest", "upsample_bilinear", "affine_grid", "grid_sample"]
MODULES: list[str] = [
    "UpsamplingNearest2d", "UpsamplingBilinear2d", "ConstantPad3d", "ZeroPad3d", "ReflectionPad3d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]
__all__ = MODULES  # what `from .sampling import *` gives minitensor.nn; the functions are in functional
