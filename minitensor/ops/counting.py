r"""Counting, binning and searching (issue 29): argwhere, unique, unique_consecutive, bincount, histc,
histogram, bucketize, searchsorted, tril_indices/triu_indices and unravel_index.

Their results are counts, indices or bin edges: integers (or a histogram), so nothing here records
a gradient, as in PyTorch.
"""
from __future__ import annotations

from typing import Any, Literal, NamedTuple, Sequence

import numpy as np

from .. import _dtype
from ..tensor import Tensor, _wrap_dim
from ..types import DTypeLike, Number
from ._util import int_arg, return_type
from .indexing import nonzero


def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each (`nonzero(input)`)."""
    return nonzero(input)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None) -> Tensor | tuple[Tensor, ...]:
    """The distinct elements (or, with `dim`, the distinct slices along dim), in ascending order; with
    return_inverse, where each element went; with return_counts, how often each occurs. The result is
    sorted whatever `sorted` says (PyTorch's CPU result is too)."""
    x = input._array
    if dim is None:
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inverse = inverse.reshape(x.shape)
    else:
        d = _wrap_dim(dim, input.ndim, "unique")
        if x.shape[d] == 0 and x.size == 0 and x.ndim > 1 and any(n == 0 for i, n in enumerate(x.shape) if i != d):
            raise RuntimeError(f"unique: number of elements along dim {d} is 0 in a tensor of shape {x.shape}")
        values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Tensor | tuple[Tensor, ...]:
    """Every run of equal consecutive elements (or slices along `dim`) kept once, in order; with
    return_inverse, which run each element is in; with return_counts, each run's length."""
    x = input._array
    if dim is None:
        flat = x.reshape(-1)
        starts = np.ones(flat.size, bool)
        starts[1:] = flat[1:] != flat[:-1]
        values = flat[starts]
        run = np.cumsum(starts) - 1
        inverse = run.reshape(x.shape)
    else:
        d = _wrap_dim(dim, input.ndim, "unique_consecutive")
        lines = np.moveaxis(x, d, 0).reshape(x.shape[d], -1)
        starts = np.ones(len(lines), bool)
        starts[1:] = (lines[1:] != lines[:-1]).any(axis=1)
        values = np.compress(starts, x, axis=d)
        inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), starts.size))
    return _unique_result(values, inverse, counts, return_inverse, return_counts)


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = [Tensor._make(np.ascontiguousarray(values))]
    if return_inverse:
        out.append(Tensor._make(np.asarray(inverse, np.int64)))
    if return_counts:
        out.append(Tensor._make(np.asarray(counts, np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value 0, 1, ..., max occurs in a 1-d tensor of non-negative integers (at least
    `minlength` counts); with weights, the sum of the weights of each value's elements instead (float32
    weights give float32 sums, any others float64, as in PyTorch)."""
    minlength = int_arg(minlength, "bincount", "minlength")  # (its type first, as PyTorch's parser)
    x = input._array
    if x.dtype.kind not in "iu":  # (bool too is refused by PyTorch's kernel)
        raise NotImplementedError(f"bincount: not implemented for dtype {input.dtype} (integers only)")
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount: only supports 1-d non-negative integral inputs.")
    if weights is None:
        return Tensor._make(np.bincount(x.astype(np.int64), minlength=minlength).astype(np.int64))
    w = weights._array
    if w.shape != x.shape:
        raise RuntimeError(f"bincount: weights should be 1-d and have the same length as input, got shapes "
                           f"{w.shape} and {x.shape}")
    dtype = np.float32 if w.dtype == np.float32 else np.float64
    return Tensor._make(np.bincount(x.astype(np.int64), w.astype(np.float64), minlength=minlength).astype(dtype))


def histc(input: Tensor, bins: int = 100, min: Number = 0, max: Number = 0) -> Tensor:
    """Counts of input's elements in `bins` equal-width bins over [min, max] (min = max = 0: the
    data's own range), of input's dtype; elements outside are left out. Floating-point input only."""
    x = input._array
    if _dtype.kind(x.dtype) != "f":
        raise NotImplementedError(f"histc: not implemented for dtype {input.dtype} (floating point only)")
    if bins <= 0:
        raise RuntimeError(f"histc: bins must be > 0, but got {bins}")
    lo, hi = float(min), float(max)
    if lo == hi and x.size:
        lo, hi = float(np.min(x)), float(np.max(x))
    if lo == hi:  # one value (or none): a bin of width 2 around it
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("histc: max must be larger than min")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"histc: range of [{lo}, {hi}] is not finite")
    counts, _ = np.histogram(x[(x >= lo) & (x <= hi)], bins=bins, range=(lo, hi))
    return Tensor._make(counts.astype(x.dtype))


class histogram_result(NamedTuple):
    """What `histogram` returns: the counts (or densities) and the bin edges."""

    hist: Tensor
    bin_edges: Tensor


return_type(histogram_result, "histogram")


def histogram(input: Tensor, bins: int | Tensor = 100, *, range: Sequence[float] | None = None,
              weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, Tensor]:
    """(hist, bin_edges): counts of input's elements in `bins` equal-width bins over `range` (default
    the data's min to max), or in the bins between the given increasing edges; with weight, sums of
    weights; with density, normalized so the histogram integrates to 1. Floating-point input only."""
    x = input._array
    if _dtype.kind(x.dtype) != "f":
        raise NotImplementedError(f"histogram: not implemented for dtype {input.dtype} (floating point only)")
    if isinstance(bins, Tensor):
        edges = bins._array
        if edges.ndim != 1 or edges.size < 1:
            raise RuntimeError(f"histogram: bins must be a 1-d tensor of edges, got shape {edges.shape}")
        if np.any(np.diff(edges) < 0):
            raise ValueError("histogram: bin edges must increase monotonically")
        how: int | np.ndarray = edges.astype(np.float64)
        span = None
    else:
        if bins <= 0:
            raise RuntimeError(f"histogram: bins must be > 0, but got {bins} for dimension 0")
        how = int(bins)
        span = _histogram_range(x, range)
    w = None
    if weight is not None:
        if weight.shape != input.shape:
            raise RuntimeError(f"histogram: weight of shape {tuple(weight.shape)} must have input's shape "
                               f"{tuple(input.shape)}")
        w = weight._array.reshape(-1).astype(np.float64)
    hist, edges = np.histogram(x.reshape(-1).astype(np.float64), bins=how, range=span, weights=w, density=density)
    return histogram_result(Tensor._make(hist.astype(x.dtype)), Tensor._make(edges.astype(x.dtype)))


def _histogram_range(x, range_):
    """histogram's (lo, hi): the one given, else the data's; an empty span is widened by 1 each side (as numpy)."""
    if range_ is not None:
        lo, hi = (float(v) for v in range_)
        if lo > hi:
            raise RuntimeError(f"histogram: min should not exceed max, but got min {lo} max {hi}")
    else:
        lo, hi = (float(np.min(x)), float(np.max(x))) if x.size else (0.0, 0.0)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"histogram: range of [{lo}, {hi}] is not finite")
    return lo, hi


def searchsorted(sorted_sequence: Tensor, input: Tensor | Number, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where each of input's values would go in `sorted_sequence`'s innermost dim to keep it sorted: the
    first such place (or, right=True / side='right', the last). A sequence of more than 1 dim is
    searched row by row against input's rows (their leading dims must match)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"searchsorted: side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("searchsorted: side and right can't be set to opposites, got side of left while "
                               "right was True")
        right = side == "right"
    seq = sorted_sequence._array
    scalar = not isinstance(input, Tensor)
    values: Any = input._array if isinstance(input, Tensor) else np.asarray(input)
    if sorter is not None:
        if sorter.shape != sorted_sequence.shape or sorter._array.dtype.kind not in "iu":
            raise RuntimeError(f"searchsorted: sorter must be an integer tensor of the boundaries' shape "
                               f"{tuple(sorted_sequence.shape)}, got {sorter.dtype} {tuple(sorter.shape)}")
        seq = np.take_along_axis(seq, sorter._array.astype(np.int64), axis=-1)
    if seq.ndim == 0:
        raise RuntimeError("searchsorted: boundaries tensor should have at least 1 dimension, got a 0-d tensor")
    how: Literal["left", "right"] = "right" if right else "left"
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=how)
    else:
        if scalar or values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(f"searchsorted: boundaries tensor should be 1 dimension or the first N-1 dimensions "
                               f"of boundaries tensor and input value tensor must match, but we got boundaries "
                               f"tensor {list(seq.shape)} and input value tensor {list(values.shape)}")
        rows, lines = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
        out = np.stack([np.searchsorted(s, v, side=how) for s, v in zip(rows, lines)]).reshape(values.shape)
    return Tensor._make(np.asarray(out, np.int32 if out_int32 else np.int64))


def bucketize(input: Tensor | Number, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:
    """The bucket of each of input's values between the increasing 1-d `boundaries`: i such that
    boundaries[i-1] < x <= boundaries[i] (right=True: boundaries[i-1] <= x < boundaries[i])."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"bucketize: boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: DTypeLike | None = None, device: object = None,
                 layout: object = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The (row, column) indices of the lower triangle (j <= i + offset) of a row x col matrix, as a
    2 x N tensor in row-major order."""
    from ..factories import check_memory
    check_memory("tril_indices", layout, pin_memory)
    out = _tri_indices(row, col, offset, dtype, np.tril_indices, "tril_indices")
    return out.requires_grad_(True) if requires_grad else out


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: DTypeLike | None = None, device: object = None,
                 layout: object = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The (row, column) indices of the upper triangle (j >= i + offset) of a row x col matrix, as a
    2 x N tensor in row-major order."""
    from ..factories import check_memory
    check_memory("triu_indices", layout, pin_memory)
    out = _tri_indices(row, col, offset, dtype, np.triu_indices, "triu_indices")
    return out.requires_grad_(True) if requires_grad else out


def _tri_indices(row, col, offset, dtype, which, op):
    if row < 0:
        raise RuntimeError(f"{op}: row must be non-negative, got {row}")
    if col < 0:
        raise RuntimeError(f"{op}: col must be non-negative, got {col}")
    dt = np.dtype(np.int64) if dtype is None else _dtype.as_dtype(dtype, op)
    if dt.kind not in "iu":
        raise RuntimeError(f"{op}: not implemented for dtype {dt} (integer dtypes only)")
    i, j = which(row, offset, col)
    return Tensor._make(np.stack([i, j]).astype(dt).reshape(2, -1))


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates, in a tensor of `shape`, of each flat (row-major) index: one tensor per dim.
    As in PyTorch, an index outside the shape wraps around (each coordinate is taken modulo its dim)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index: expected 'indices' to be a Tensor, got {type(indices).__name__}")
    if indices._array.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = [shape] if isinstance(shape, int) else list(shape)
    if any(n < 0 for n in dims):
        raise ValueError(f"unravel_index: 'shape' cannot have negative values, but got {tuple(dims)}")
    rest = indices._array.astype(np.int64)
    out = []
    for n in reversed(dims):
        out.append(rest % n if n else np.zeros_like(rest))
        rest = rest // n if n else rest
    return tuple(Tensor._make(c) for c in reversed(out))
