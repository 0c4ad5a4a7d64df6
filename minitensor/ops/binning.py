r"""`histogramdd` (issue 29, h-names29): the histogram of points in N dimensions.

input (..., N) holds points of N coordinates; each dim d is cut into bins (a count of equal-width bins
over `range` or the data's span, or increasing edges), and each point counts in the bin of every
coordinate's interval, the last interval of a dim closed on the right. With `weight` a bin sums the
weights of its points; with `density` the counts are divided by the total and by each bin's volume.
Counts are not differentiable (nothing here records a graph), as in PyTorch.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._util import return_type


class histogramdd_result(NamedTuple):
    hist: Tensor
    bin_edges: tuple[Tensor, ...]


return_type(histogramdd_result, "histogramdd")
_dims = range  # (the parameter `range` hides the builtin inside histogramdd)


def histogramdd(input: Tensor, bins: int | Sequence[int] | Sequence[Tensor], range: Sequence[float] | None = None,
                weight: Tensor | None = None, density: bool = False) -> histogramdd_result:
    """(hist, bin_edges): the N-d histogram of the points input[..., :] and each dim's bin edges."""
    op = "torch.histogramdd"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    x = input._array
    if _dtype.kind(x.dtype) != "f":
        raise NotImplementedError(f"{op}: not implemented for dtype {input.dtype} (floating point only)")
    if x.ndim < 2:
        raise RuntimeError(f"{op}: input tensor should have at least 2 dimensions, got shape {x.shape}")
    n = x.shape[-1]
    points = x.reshape(-1, n).astype(np.float64)
    span: list[tuple[float, float]] | None = None
    if range is not None:
        flat = [float(v) for v in range]
        if len(flat) != 2 * n:
            raise RuntimeError(f"{op}: for a {n}-dimensional histogram range should have {2 * n} elements, but got "
                               f"{len(flat)}")
        span = [(flat[2 * d], flat[2 * d + 1]) for d in _dims(n)]
        for d, (lo, hi) in enumerate(span):
            if lo > hi:
                raise RuntimeError(f"{op}: min should not exceed max, but got min {lo} max {hi} for dimension {d}")
    how = _bins(bins, n, points, span, x.dtype)
    w = None
    if weight is not None:
        if not isinstance(weight, Tensor) or tuple(weight.shape) != x.shape[:-1]:
            got = tuple(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
            raise RuntimeError(f"{op}: weight should have the same shape as the input excluding its innermost "
                               f"dimension {x.shape[:-1]}, got {got}")
        w = weight._array.reshape(-1).astype(np.float64)
    hist, edges = np.histogramdd(points, bins=how, weights=w, density=density)
    return histogramdd_result(Tensor._make(hist.astype(x.dtype)),
                              tuple(Tensor._make(e.astype(x.dtype)) for e in edges))


def _bins(bins: Any, n: int, points: np.ndarray, span: Any, dtype: np.dtype) -> list[np.ndarray]:
    """Each dim's bin edges (float64 arrays holding values of input's dtype): given, or equal-width ones."""
    op = "torch.histogramdd"
    if isinstance(bins, int) and not isinstance(bins, bool):
        bins = [bins] * n
    bins = list(bins)
    if len(bins) != n:
        raise RuntimeError(f"{op}: The size of bins must be equal to the innermost dimension of the input "
                           f"({len(bins)} bins for points of {n} coordinates).")
    out: list[Any] = []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            edges = b._array.astype(np.float64)
            if edges.ndim != 1 or edges.size < 1:
                raise RuntimeError(f"{op}: bins[{d}] must be a 1-d tensor of edges, got shape {edges.shape}")
            if np.any(np.diff(edges) < 0):
                raise ValueError(f"{op}: bin edges of dimension {d} must increase monotonically")
            out.append(edges)
        else:
            if int(b) <= 0:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for dimension {d}")
            lo, hi = span[d] if span is not None else _data_span(points[:, d])
            if lo == hi:  # a single value: a bin of width 1 around it
                lo, hi = lo - 0.5, hi + 0.5
            out.append(_linspace(lo, hi, int(b) + 1, dtype))
    return out


def _data_span(column: np.ndarray) -> tuple[float, float]:
    lo, hi = (float(column.min()), float(column.max())) if column.size else (0.0, 0.0)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"torch.histogramdd: range of [{lo}, {hi}] is not finite")
    return lo, hi


def _linspace(lo: float, hi: float, steps: int, dtype: np.dtype) -> np.ndarray:
    """Equal-width edges as PyTorch's linspace makes them (and so its histograms): a step in the dtype,
    the first half counted up from lo and the second down from hi, each edge one fused multiply-add
    rounded once (a wider float holds the product exactly enough)."""
    kind = np.float64 if dtype == np.float64 else np.float32
    wide = np.longdouble if kind == np.float64 else np.float64
    start, end = kind(lo), kind(hi)
    step = kind((end - start) / kind(steps - 1))
    i: Any = np.arange(steps)  # (numpy's stubs can't multiply a longdouble by an array)
    up = wide(start) + wide(step) * i.astype(wide)
    down = wide(end) - wide(step) * (steps - 1 - i).astype(wide)
    edges = np.where(i < steps // 2, up, down).astype(kind)
    return edges.astype(dtype).astype(np.float64)
