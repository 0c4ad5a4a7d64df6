r"""Order statistics: median, nanmedian, kthvalue, mode, quantile, nanquantile, msort.

Each finds its positions in numpy (a stable sort) and reads the values with `gather`, so the
gradient is indexing's: it goes back to the element that was picked (quantile's interpolation
splits it between the two neighbours it reads, by the weights of the lerp).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import _dtype
from ..tensor import Tensor, _wrap_dim
from ._util import no_bool, return_type
from .selection import _order
from .shape import stack


class median_result(NamedTuple):
    values: Tensor
    indices: Tensor


class nanmedian_result(NamedTuple):
    values: Tensor
    indices: Tensor


class kthvalue_result(NamedTuple):
    values: Tensor
    indices: Tensor


class mode_result(NamedTuple):
    values: Tensor
    indices: Tensor


return_type(median_result, "median")
return_type(nanmedian_result, "nanmedian")
return_type(kthvalue_result, "kthvalue")
return_type(mode_result, "mode")


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (the ((n - 1) // 2)-th smallest); with dim, (values, indices). A NaN in a line is its median.

    forward: the ((n - 1) // 2)-th smallest x along dim
    VJP:     g goes to the element picked   (indexing's)
    """
    no_bool(input, "median")  # (PyTorch's kernel has no bool form)
    return _median(input, dim, keepdim, "median", skip_nan=False)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median of the non-NaN elements (NaN for a line of NaNs); with dim, (values, indices).

    forward: the median of the non-NaN x along dim
    VJP:     g goes to the element picked   (indexing's)
    """
    no_bool(input, "nanmedian")  # (PyTorch's kernel has no bool form)
    return _median(input, dim, keepdim, "nanmedian", skip_nan=True)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> kthvalue_result:
    """(values, indices) of the k-th smallest element (k from 1) along dim.

    forward: the k-th smallest x along dim
    VJP:     g goes to the element picked   (indexing's)
    """
    x, d = _line_view(input, dim, "kthvalue")
    no_bool(input, "kthvalue")  # (PyTorch's kernel has no bool form)
    n = x.shape[d]
    if not 1 <= k <= max(n, 1) or n == 0:
        raise RuntimeError(f"kthvalue: selected number k out of range for dimension {d} of size {n} (k={k})")
    order = _order(x._array, d, False)
    idx = np.take(order, [k - 1], axis=d)
    return kthvalue_result(*_picked(input, x, d, idx, keepdim))


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> mode_result:
    """(values, indices): the most frequent value along dim (the smallest among equally frequent ones) and the
    index of its last occurrence.

    forward: the most frequent x along dim
    VJP:     g goes to the element picked   (indexing's)
    """
    x, d = _line_view(input, dim, "mode")
    a = np.moveaxis(x._array, d, -1)
    flat = a.reshape(-1, a.shape[-1])
    idx = np.zeros(flat.shape[0], np.int64)
    for r, line in enumerate(flat):
        values, counts = np.unique(line, return_counts=True)  # sorted: argmax picks the smallest of the most frequent
        best = values[np.argmax(counts)]
        idx[r] = np.flatnonzero((line == best) | (np.isnan(line) & np.isnan(best)))[-1]
    idx = np.expand_dims(idx.reshape(a.shape[:-1]), d)
    return mode_result(*_picked(input, x, d, idx, keepdim))


def msort(input: Tensor) -> Tensor:
    """input sorted along dim 0 (the values of sort(input, dim=0)).

    forward: x sorted along dim 0
    VJP:     each g goes back to the element that landed there   (indexing's)
    """
    return input.sort(dim=0).values


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles along dim (of the flattened input when None); q a float or a 1-D tensor in [0, 1]
    (its values then form a new first dim). interpolation between the two neighbours of the position
    q (n - 1): 'linear', 'lower', 'higher', 'nearest' (half to even) or 'midpoint'. A NaN in a line gives NaN.

    forward: lerp(sorted[lo], sorted[hi], frac) at position q (n - 1)
    VJP:     g (1 - frac) to the element at lo, g frac to the one at hi
    """
    return _quantile(input, q, dim, keepdim, interpolation, "quantile", skip_nan=False)


def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """quantile of the non-NaN elements (NaN for a line of NaNs).

    forward: quantile over the non-NaN x
    VJP:     g (1 - frac) to the element at lo, g frac to the one at hi
    """
    return _quantile(input, q, dim, keepdim, interpolation, "nanquantile", skip_nan=True)


# ---- the picking, named -------------------------------------------------------------------------

def _line_view(input, dim, op):
    d = _wrap_dim(dim, input.ndim, op)
    x = input.reshape(1) if input.ndim == 0 else input
    return x, (0 if input.ndim == 0 else d)


def _picked(input, x, d, idx, keepdim):
    index = Tensor._make(np.ascontiguousarray(idx))
    values = x.gather(d, index)
    if input.ndim == 0:
        return values.reshape(()), index.reshape(())
    if not keepdim:
        values, index = values.squeeze(d), index.squeeze(d)
    return values, index


def _median(input, dim, keepdim, op, skip_nan):
    if dim is None:
        flat = input.reshape(-1)
        if flat.shape[0] == 0:
            return Tensor._make(np.asarray(np.nan, input._array.dtype))  # PyTorch: the median of nothing is NaN
        return _median(flat, 0, False, op, skip_nan).values
    x, d = _line_view(input, dim, op)
    if x.shape[d] == 0:
        raise IndexError(f"{op}: Expected reduction dim {d} to have non-zero size, got shape {tuple(input.shape)}")
    a = x._array
    order = _order(a, d, False)  # NaNs sort last
    nans = np.isnan(a).sum(axis=d, keepdims=True) if _dtype.kind(a.dtype) == "f" else np.zeros_like(order[:1])
    n = a.shape[d]
    if skip_nan:
        k = np.maximum((n - nans - 1) // 2, 0)  # all NaN: position 0, a NaN
    else:
        k = np.where(nans > 0, n - nans, (n - 1) // 2)  # the first NaN, or the lower median
    idx = np.take_along_axis(order, k, axis=d)
    return (nanmedian_result if skip_nan else median_result)(*_picked(input, x, d, idx, keepdim))


def _quantile(input, q, dim, keepdim, interpolation, op, skip_nan):
    if _dtype.kind(input._array.dtype) != "f":
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype, got {input.dtype}")
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got "
                           f"{interpolation}")
    scalar_q = not isinstance(q, Tensor)
    qa = np.asarray(q if scalar_q else q._array, dtype=np.float64)
    if qa.ndim > 1:
        raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got shape {qa.shape}")
    if not scalar_q and q.dtype != input.dtype:
        raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor, got {q.dtype} and {input.dtype}")
    if np.any((qa < 0) | (qa > 1)):
        raise RuntimeError(f"{op}() q values must be in the range [0, 1]")
    if dim is None:
        x, d = input.reshape(-1), 0
    else:
        x, d = _line_view(input, dim, op)
    n = x.shape[d]
    if n == 0:
        raise IndexError(f"{op}() input tensor must be non-empty")
    a = x._array
    order = Tensor._make(_order(a, d, False))
    sorted_x = x.gather(d, order)
    valid = (n - np.isnan(a).sum(axis=d, keepdims=True)) if skip_nan else np.full(
        np.sum(a, axis=d, keepdims=True).shape, n)
    outs = []
    for qi in qa.reshape(-1):
        pos = qi * np.maximum(valid - 1, 0).astype(np.float64)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, np.maximum(valid - 1, 0))
        frac = pos - lo
        if interpolation == "lower":
            frac = np.zeros_like(frac)
        elif interpolation == "higher":
            frac = (frac > 0).astype(np.float64)
        elif interpolation == "midpoint":
            frac = np.where(frac > 0, 0.5, 0.0)
        elif interpolation == "nearest":
            frac = (np.round(pos) > lo).astype(np.float64)
        vlo = sorted_x.gather(d, Tensor._make(lo))
        vhi = sorted_x.gather(d, Tensor._make(hi))
        w = Tensor._make(frac.astype(a.dtype))
        out = vlo + (vhi - vlo) * w
        if not skip_nan:  # a NaN in a line makes its quantile NaN
            has_nan = np.isnan(a).any(axis=d, keepdims=True)
            if has_nan.any():
                out = out + Tensor._make(np.where(has_nan, np.nan, 0).astype(a.dtype))
        elif (valid == 0).any():
            out = out + Tensor._make(np.where(valid == 0, np.nan, 0).astype(a.dtype))
        if keepdim and dim is None:
            out = out.reshape((1,) * input.ndim)
        elif not keepdim:
            out = out.squeeze(d)
        if input.ndim == 0 and dim is not None:
            out = out.reshape(())
        outs.append(out)
    if scalar_q or qa.ndim == 0:
        return outs[0]
    return stack(outs, dim=0) if outs else Tensor._make(np.zeros((0,), a.dtype))

