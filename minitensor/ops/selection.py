r"""Sorting, top-k, cumulative sums and sampling.

sort and topk return (values, indices); the values are read with `gather`, so their gradient is
indexing's: each value's gradient goes back to the element it came from.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import _dtype
from .._fperr import quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..random import Generator, _gen
from ..tensor import Tensor, _wrap_dim
from ..types import DTypeLike
from ._half import computed_in_float32_for_half
from ._util import integers_as_int64, no_bool, return_type, running_inplace_check
from .indexing import Index


class Cumsum(Function):
    r"""out_i = \sum_{j <= i} x_j   along `dim`
    VJP: gx_j = \sum_{i >= j} g_i   (a cumulative sum run backwards: flip, cumsum, flip)"""

    @staticmethod
    @quietly("over", "invalid")  # inf + -inf is NaN, silently as in PyTorch
    def forward(ctx, x, dim):
        return np.cumsum(x._array, axis=dim).reshape(x.shape)  # numpy makes a 0-d input 1-d

    @staticmethod
    def backward(ctx, g):
        _, dim = ctx.inputs
        if g.ndim == 0:  # the running sum of one element is that element
            return g, None
        return g.flip(dim).cumsum(dim).flip(dim), None


# ---- the public functions -----------------------------------------------------------------------

class sort_result(NamedTuple):
    """What `sort` returns: the sorted values, and where each came from."""

    values: Tensor
    indices: Tensor


class topk_result(NamedTuple):
    """What `topk` returns: the k values, and where each came from."""

    values: Tensor
    indices: Tensor


# printed under PyTorch's names: sort(values=..., indices=...)
return_type(sort_result, "sort")
return_type(topk_result, "topk")


@with_formulas(Index)
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> sort_result:
    """(values, indices) sorted along dim; equal elements keep their order."""
    d = _wrap_dim(dim, input.ndim, "sort")
    if input.ndim == 0:
        return sort_result(input, Tensor._make(np.zeros((), dtype=np.int64)))
    idx = Tensor._make(_order(input._array, d, descending))
    return sort_result(shown_as(input.gather(d, idx), "SortBackward0"), idx)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:
    """The indices that sort input along dim."""
    d = _wrap_dim(dim, input.ndim, "argsort")
    return Tensor._make(_order(input._array, d, descending))


@with_formulas(Index)
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> topk_result:
    """The k largest (or smallest) elements along dim, as (values, indices)."""
    d = _wrap_dim(dim, input.ndim, "topk")
    no_bool(input, "topk", RuntimeError)  # (PyTorch's CPU topk refuses bool itself)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: k ({k}) is out of range for dimension {d} of size {n}")
    if input.ndim == 0 and k == 1:  # as PyTorch: the one element, still 0-d
        return topk_result(input, Tensor._make(np.zeros((), dtype=np.int64)))
    idx = _order(input._array, d, largest)
    idx = Tensor._make(np.take(idx, np.arange(k), axis=d))
    return topk_result(shown_as(input.gather(d, idx), "TopkBackward0"), idx)


@with_formulas(Cumsum)
@computed_in_float32_for_half  # a float16 running sum of 0.1s would stop at 256
def cumsum(input: Tensor, dim: int, *, dtype: DTypeLike | None = None) -> Tensor:
    """Running sum along dim."""
    x = input if dtype is None else input.to(dtype)
    d = _wrap_dim(dim, x.ndim, "cumsum")
    return Cumsum.apply(integers_as_int64(x), d)

cumsum.inplace_check = running_inplace_check  # type: ignore[attr-defined]  # (`cumsum_` on bools, its dtype=)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Sample indices from the rows of `input` (non-negative weights, need not sum to 1).

    Uses the global generator seeded by `manual_seed`. Without replacement it takes the top
    `num_samples` of log(p) + Gumbel noise, which draws them in proportion to p one after another.
    """
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape {tuple(input.shape)}")
    if _dtype.kind(input.dtype) != "f":
        raise RuntimeError(f"multinomial: only floating-point dtypes are supported for input, got {input.dtype}")
    if num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample num_samples={num_samples} <= 0 samples")
    p = input._array.astype(np.float64)
    n = p.shape[-1]
    # one row for 1-d (the count written out: -1 can't be inferred with n = 0)
    rows = p.reshape(math.prod(p.shape[:-1]), n)
    if not replacement and num_samples > n:
        raise RuntimeError(f"multinomial: cannot sample num_samples={num_samples} > {n} categories without replacement")
    if (p < 0).any() or not np.isfinite(p).all():
        raise RuntimeError("multinomial: probability tensor contains either inf, nan or element < 0")
    total = rows.sum(axis=1, keepdims=True)
    if (total <= 0).any():
        raise RuntimeError("multinomial: invalid distribution, a row's weights sum to 0")
    # without replacement, once a row's categories of non-zero probability are drawn the rest come
    # next (log 0 = -inf sorts last), as in PyTorch
    gen = _gen(generator)
    if replacement:
        cdf = np.cumsum(rows / total, axis=1)
        u = gen.random((rows.shape[0], num_samples))
        out = np.stack([np.searchsorted(c, ui, side="right") for c, ui in zip(cdf, u)])
        out = np.minimum(out, n - 1)
    else:
        with np.errstate(divide="ignore"):
            keys = np.log(rows) + gen.gumbel(size=rows.shape)
        out = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return Tensor._make(out.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


# ---- the order sort and topk read, named --------------------------------------------------------

def _order(data, dim, descending):
    """Stable argsort along dim (ascending, or descending with equal elements kept in order).

    NaN counts as larger than every number, as in PyTorch: last ascending, first descending."""
    if data.ndim == 0:  # numpy's argsort makes a 0-d input 1-d; PyTorch's index stays 0-d
        return np.zeros((), dtype=np.int64)
    if descending:  # the ascending order of the reversed line, read backwards: equal elements keep their
        # order and NaNs come first (no negation, which wraps an int's minimum onto itself)
        ascending = np.argsort(np.flip(data, axis=dim), axis=dim, kind="stable")
        return data.shape[dim] - 1 - np.flip(ascending, axis=dim)
    return np.argsort(data, axis=dim, kind="stable")
