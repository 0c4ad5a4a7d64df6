r"""Running (cumulative) ops along a dim: cumprod, cummax, cummin, logcumsumexp; differences and the
trapezoid rule. cummax and cummin pick elements (their values are read with `gather`, so the gradient
is indexing's); diff and the trapezoid rules are composed of narrow, sub and sum.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _dtype
from .._fperr import quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..tensor import Tensor, _wrap_dim
from ..types import DTypeLike
from ._util import integers_as_int64, no_bool, return_type, running_inplace_check, tensor_input
from .indexing import where
from .shape import cat


class Cumprod(Function):
    r"""out_i = \prod_{j <= i} x_j   along `dim`
    VJP: gx_j = \sum_{i >= j} g_i \prod_{k <= i, k != j} x_k   (without zeros in x: revcumsum(g out)_j / x_j;
         with zeros the products of the others are formed directly, O(n^2), so nothing divides by 0)"""

    @staticmethod
    @quietly("over", "invalid")
    def forward(ctx, x, dim):
        return np.cumprod(x._array, axis=dim).reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        x, dim = ctx.inputs
        if x.ndim == 0:
            return g, None
        if np.all(x._array != 0):
            return (g * ctx.output).flip(dim).cumsum(dim).flip(dim) / x, None
        xl, gl = x.movedim(dim, -1), g.movedim(dim, -1)  # (..., n)
        n = xl.shape[-1]
        eye = Tensor._make(np.eye(n, dtype=bool))
        others = Cumprod.apply(where(eye, 1.0, xl.unsqueeze(-2)), xl.ndim)  # [j, i]: prod_{k<=i, k!=j} x_k
        upper = Tensor._make(np.triu(np.ones((n, n), dtype=bool)))  # i >= j
        gx = (where(upper, others, 0.0) * gl.unsqueeze(-2)).sum(dim=-1)
        return gx.movedim(-1, dim), None


class Logcumsumexp(Function):
    r"""out_i = log \sum_{j <= i} e^{x_j}   along `dim` (numpy's logaddexp.accumulate: no overflow)
    VJP: gx_j = \sum_{i >= j} g_i e^{x_j - out_i}   (each exponent <= 0, since out_i >= x_j)"""

    @staticmethod
    @quietly("over", "invalid", "under")
    def forward(ctx, x, dim):
        if x.ndim == 0:
            return x._array.copy()
        return np.logaddexp.accumulate(x._array, axis=dim)

    @staticmethod
    def backward(ctx, g):
        x, dim = ctx.inputs
        if x.ndim == 0:
            return g, None
        xl, ol, gl = x.movedim(dim, -1), ctx.output.movedim(dim, -1), g.movedim(dim, -1)
        n = xl.shape[-1]
        later = Tensor._make(np.triu(np.ones((n, n), dtype=bool)))  # [j, i]: i >= j
        expo = where(later, xl.unsqueeze(-1) - ol.unsqueeze(-2), float("-inf"))
        return (expo.exp() * gl.unsqueeze(-2)).sum(dim=-1).movedim(-1, dim), None


# ---- the public functions -----------------------------------------------------------------------

class cummax_result(NamedTuple):
    """What `cummax` returns: the running maxima, and where each was found."""

    values: Tensor
    indices: Tensor


class cummin_result(NamedTuple):
    """What `cummin` returns: the running minima, and where each was found."""

    values: Tensor
    indices: Tensor


return_type(cummax_result, "cummax")
return_type(cummin_result, "cummin")


@with_formulas(Cumprod)
def cumprod(input: Tensor, dim: int, *, dtype: DTypeLike | None = None) -> Tensor:
    """Running product along dim (integers and bools as int64, as PyTorch)."""
    x = input if dtype is None else input.to(dtype)
    d = _wrap_dim(dim, x.ndim, "cumprod")
    return Cumprod.apply(integers_as_int64(x), d)

cumprod.inplace_check = running_inplace_check  # type: ignore[attr-defined]  # (`cumprod_` on bools, its dtype=)


@with_formulas(Logcumsumexp)
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """log of the running sum of exp along dim, without overflow."""
    if _dtype.kind(input._array.dtype) != "f":
        raise NotImplementedError(f"logcumsumexp: expected a floating point tensor, got {input.dtype}")
    return Logcumsumexp.apply(input, _wrap_dim(dim, input.ndim, "logcumsumexp"))


def cummax(input: Tensor, dim: int) -> cummax_result:
    r"""(values, indices): the running maximum along dim and the index it came from (the latest on ties;
    a NaN, once met, stays), its gradient going to that element.

    forward: out_i = max_{j <= i} x_j
    VJP:     gx_j = \sum over the i whose max came from j of g_i   (indexing's)
    """
    return cummax_result(*_running(input, dim, "cummax", np.greater_equal))


def cummin(input: Tensor, dim: int) -> cummin_result:
    r"""(values, indices): the running minimum along dim (see cummax).

    forward: out_i = min_{j <= i} x_j
    VJP:     gx_j = \sum over the i whose min came from j of g_i   (indexing's)
    """
    return cummin_result(*_running(input, dim, "cummin", np.less_equal))


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along dim, x[i + 1] - x[i] (bools: x[i + 1] != x[i]), after joining
    prepend and append to input along dim.

    forward: out_i = x_{i+1} - x_i   (n times)
    VJP:     gx_i = g_{i-1} - g_i   (n times)
    """
    if input.ndim == 0:
        raise RuntimeError("diff: diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"diff: order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim, "diff")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat(parts, dim=d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = hi != lo if x._array.dtype == np.bool_ else hi - lo
    return x


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float = 1, dim: int = -1) -> Tensor:
    r"""\sum_i (x_{i+1} - x_i) (y_i + y_{i+1}) / 2 along dim (spacing dx, 1 by default, when x is None).

    forward: out = \sum_i (x_{i+1} - x_i)(y_i + y_{i+1}) / 2
    VJP:     gy_i = g (dx_{i-1} + dx_i) / 2;  gx through the differences
    """
    tensor_input(y, "trapezoid", "y")
    _x_or_dx(x, dx, "trapezoid")
    no_bool(y, "trapezoid", RuntimeError)  # (PyTorch refuses a bool y itself)
    d = _wrap_dim(dim, y.ndim, "trapezoid")
    n = y.shape[d]
    if n == 0:
        return y.sum(dim=d) * 0.0
    mid = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    if x is None:
        return mid.sum(dim=d) * (dx / 2)
    return (diff(x, dim=dim if x.ndim > 1 else -1) * mid).sum(dim=d) / 2


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float = 1, dim: int = -1) -> Tensor:
    r"""The running trapezoid rule along dim: one element shorter than y there.

    forward: out_k = \sum_{i <= k} (x_{i+1} - x_i)(y_i + y_{i+1}) / 2
    VJP:     a reversed cumulative sum of g, then trapezoid's
    """
    tensor_input(y, "cumulative_trapezoid", "y")
    _x_or_dx(x, dx, "cumulative_trapezoid")
    no_bool(y, "cumulative_trapezoid", RuntimeError)  # (PyTorch refuses a bool y itself)
    d = _wrap_dim(dim, y.ndim, "cumulative_trapezoid")
    n = y.shape[d]
    if n == 0:
        return y
    mid = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    steps = mid * (dx / 2) if x is None else diff(x, dim=dim if x.ndim > 1 else -1) * mid / 2
    return steps.cumsum(d)


def _x_or_dx(x: Tensor | None, dx: float, op: str) -> None:
    """PyTorch's overloads take the points `x` or the spacing `dx`, not both (dx's default, 1, can't be told apart)."""
    if x is not None and dx != 1:
        raise TypeError(f"{op}(): takes either the sample points x or the spacing dx, not both (got dx={dx})")


# ---- the running picks, named -------------------------------------------------------------------

def _running(input, dim, op, better):
    """(values, indices) of a running max or min: indices found in numpy, values gathered (differentiable)."""
    d = _wrap_dim(dim, input.ndim, op)
    if input.ndim == 0:
        return input.clone(), Tensor._make(np.zeros((), np.int64))
    a = np.moveaxis(input._array, d, -1)
    idx = np.zeros(a.shape, np.int64)
    best = a[..., :1].copy() if a.shape[-1] else a[..., :0]
    for i in range(1, a.shape[-1]):
        v = a[..., i:i + 1]
        with np.errstate(invalid="ignore"):
            take = (better(v, best) | np.isnan(v)) & ~np.isnan(best)
        best = np.where(take, v, best)
        idx[..., i] = np.where(take[..., 0], i, idx[..., i - 1])
    index = Tensor._make(np.ascontiguousarray(np.moveaxis(idx, -1, d)))
    return input.gather(d, index), index
