r"""Reductions over dims: sum, mean, var, std, prod, amax/amin (and max/min), logsumexp, norm.

Every VJP first puts the reduced dims back as size 1 (`_keep`) and then broadcasts `g` over them
with `expand`: a reduction's adjoint copies the gradient to every element that was reduced.
"""
from __future__ import annotations

import builtins
import functools
import math
from typing import Any, Callable, NamedTuple, TypeVar, cast, overload

import numpy as np

from .. import _dtype
from .._fperr import log as _quiet_log, quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..tensor import Tensor, _wrap_dim
from ..types import Dims, DTypeLike
from ._half import computed_in_float32_for_half
from ._util import finite_max, float_only, integers_as_int64, norm_dims, return_type
from .arithmetic import Maximum, Minimum, maximum, minimum
from .decompositions import svdvals
from .indexing import where


class Sum(Function):
    r"""out = \sum_{dims} x
    VJP: gx = expand(g, x.shape)   (each summed element gets the full gradient)"""

    saves_values = False  # only x's shape

    @staticmethod
    @quietly("over", "invalid")  # inf + -inf is NaN, silently as in PyTorch
    def forward(ctx, x, dims, keepdim):
        return x._array.sum(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        x, dims, keepdim = ctx.inputs
        return _keep(g, x.shape, dims, keepdim).expand(x.shape), None, None


class Mean(Function):
    r"""out = (1/n) \sum_{dims} x,  n = number of elements reduced
    VJP: gx = expand(g, x.shape) / n"""

    saves_values = False

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        return _mean(x._array, dims, keepdim)

    @staticmethod
    def backward(ctx, g):
        x, dims, keepdim = ctx.inputs
        scale = 1.0 / builtins.max(_count(x._array.shape, dims), 1)
        return _keep(g, x.shape, dims, keepdim).expand(x.shape) * scale, None, None


class Var(Function):
    r"""out = \sum_{dims} (x - mean)^2 / (n - correction)   (two passes: never negative)
    VJP: gx = expand(g) * 2 (x - mean) / (n - correction)"""

    @staticmethod
    @quietly("over")  # a float64 variance beyond float32's range is inf, silently as in PyTorch
    def forward(ctx, x, dims, correction, keepdim):
        return _variance(x, dims, correction, keepdim).astype(x._array.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, dims, correction, keepdim = ctx.inputs
        denom = builtins.max(_count(x.shape, dims) - correction, 0)
        centered = x - x.mean(dim=dims, keepdim=True)
        scale = 2.0 / denom if denom > 0 else float("nan")  # forward was 0/0 = nan: so is its slope
        return _keep(g, x.shape, dims, keepdim) * centered * scale, None, None, None


class Std(Function):
    r"""out = sqrt(var_{dims}(x))   (the variance as `Var` computes it)
    VJP: gx = expand(g) * (x - mean) / ((n - correction) * out), and 0 where out = 0 (a constant row,
         or deviations whose squares underflow: the subgradient, as PyTorch and `Norm`)"""

    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        return np.sqrt(_variance(x, dims, correction, keepdim)).astype(x._array.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, dims, correction, keepdim = ctx.inputs
        denom = builtins.max(_count(x.shape, dims) - correction, 0)
        out = _keep(ctx.output, x.shape, dims, keepdim)
        centered = x - x.mean(dim=dims, keepdim=True)
        scale = 1.0 / denom if denom > 0 else float("nan")  # forward was 0/0 = nan: so is its slope
        gx = _keep(g, x.shape, dims, keepdim) * centered * scale / out
        return where(Tensor._make(out._array == 0), 0.0, gx), None, None, None


class Prod(Function):
    r"""out = \prod_{dim} x
    VJP: gx_i = g * \prod_{j != i} x_j   (computed without dividing by x_i, so zeros are fine)"""

    @staticmethod
    @quietly("over", "invalid")  # inf * 0 is NaN, silently as in PyTorch
    def forward(ctx, x, dim, keepdim):
        if dim is None:
            return np.prod(x._array)
        return np.prod(x._array, axis=dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        x, dim, keepdim = ctx.inputs
        if dim is None:
            flat = x.reshape(-1)
            return (_prod_of_others(flat, 0) * g).reshape(x.shape), None, None
        return _prod_of_others(x, dim) * _keep(g, x.shape, (dim,), keepdim), None, None


class Amax(Function):
    r"""out = max_{dims} x
    VJP: gx = expand(g) * [x == out] / (number of maxima): ties split the gradient evenly.
         With `nan_wins` (max, not amax, as in PyTorch) a NaN out counts the NaN elements as its maxima;
         without, [x == out] is all 0 there and the gradient 0/0 = NaN, as PyTorch's amax."""

    @staticmethod
    def forward(ctx, x, dims, keepdim, nan_wins):
        return x._array.max(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        return _tie_split(ctx, g)


class Amin(Function):
    r"""out = min_{dims} x
    VJP: gx = expand(g) * [x == out] / (number of minima): ties split the gradient evenly
         (`nan_wins` as in Amax)"""

    @staticmethod
    def forward(ctx, x, dims, keepdim, nan_wins):
        return x._array.min(axis=dims, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        return _tie_split(ctx, g)


class Logsumexp(Function):
    r"""out = log \sum_{dims} e^x = m + log \sum e^{x - m},  m = max x (so nothing overflows)
    VJP: gx = expand(g) * e^{x - out} = expand(g) * softmax(x)"""

    @staticmethod
    @quietly("over", "invalid")  # a huge or NaN x: inf or NaN, silently as in PyTorch
    def forward(ctx, x, dims, keepdim):
        m = finite_max(x._array, dims)
        out = m + _quiet_log(np.sum(np.exp(x._array - m), axis=dims, keepdims=True))  # all -inf: log 0 = -inf
        return out if keepdim else np.squeeze(out, axis=dims)

    @staticmethod
    def backward(ctx, g):
        x, dims, keepdim = ctx.inputs
        return _keep(g, x.shape, dims, keepdim) * (x - _keep(ctx.output, x.shape, dims, keepdim)).exp(), None, None


class CountNonzero(Function):
    r"""out = \sum_{dims} [x != 0]   (the "0-norm": how many elements are not zero)
    VJP: gx = 0   (a step function: its slope is 0 wherever it has one). Like PyTorch, backward
         passes no tensor of zeros on: x.grad stays None unless another path reaches x."""

    saves_values = False

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        return np.sum(x._array != 0, axis=dims, keepdims=keepdim).astype(x._array.dtype)

    @staticmethod
    def backward(ctx, g):
        return None, None, None


class Norm(Function):
    r"""out = sqrt(\sum_{dims} x^2)   (the 2-norm)
    VJP: gx = expand(g) * x / out, and 0 where out = 0 (the subgradient: |x| has no slope at 0)"""

    @staticmethod
    @quietly("over", "invalid")  # x^2 overflows to inf for |x| > 1.8e19 (float32), as in PyTorch
    def forward(ctx, x, dims, keepdim):
        if _count(x._array.shape, dims) == 1:  # one element: |x| itself, as PyTorch (x^2 overflows or underflows)
            return np.abs(x._array).sum(axis=dims, keepdims=keepdim)
        return np.sqrt(np.sum(x._array * x._array, axis=dims, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        x, dims, keepdim = ctx.inputs
        out = _keep(ctx.output, x.shape, dims, keepdim)
        zero = Tensor._make((out._array == 0).astype(out._array.dtype))
        # x / out first: of a subnormal x, g * x would lose the digits x / out = sign(x) keeps
        return _keep(g, x.shape, dims, keepdim) * (x / (out + zero)), None, None


# ---- the public functions -----------------------------------------------------------------------

_F = TypeVar("_F", bound=Callable[..., Any])


def numpy_names(fn: _F) -> _F:
    """Let a reduction take numpy's keyword names too, as PyTorch does: `axis` for `dim` and `keepdims`
    for `keepdim` (PyTorch's argument parser accepts them on these reductions; its signatures don't show them)."""
    @functools.wraps(fn)
    def reduction(*args: Any, **kwargs: Any) -> Any:
        if "axis" in kwargs or "keepdims" in kwargs:
            kwargs = _renamed(kwargs, fn.__name__)
        return fn(*args, **kwargs)

    return cast(_F, reduction)


def _renamed(kwargs, op):
    out = dict(kwargs)
    for numpy_name, name in (("axis", "dim"), ("keepdims", "keepdim")):
        if numpy_name in out:
            if name in out:
                raise TypeError(f"{op}(): got both {name!r} and its alias {numpy_name!r}")
            out[name] = out.pop(numpy_name)
    return out


@with_formulas(Sum)
@computed_in_float32_for_half
@numpy_names
def sum(input: Tensor, dim: Dims | None = None, keepdim: bool = False, *, dtype: DTypeLike | None = None) -> Tensor:
    """Sum over `dim` (all dims when None)."""
    x = input if dtype is None else input.to(dtype)
    dims = norm_dims(dim, x.ndim, "sum")
    out = Sum.apply(integers_as_int64(x), dims, keepdim)
    return out if dim is None or keepdim or len(dims) < x.ndim else shown_as(out, "SumBackward1")  # dims given


@with_formulas(Mean)
@computed_in_float32_for_half
@numpy_names
def mean(input: Tensor, dim: Dims | None = None, keepdim: bool = False, *, dtype: DTypeLike | None = None) -> Tensor:
    """Mean over `dim` (all dims when None)."""
    x = input if dtype is None else input.to(dtype)
    dims = norm_dims(dim, x.ndim, "mean")
    float_only(x, "mean")
    out = Mean.apply(x, dims, keepdim)
    return out if dim is None or keepdim or len(dims) < x.ndim else shown_as(out, "MeanBackward1")  # dims given


@with_formulas(Var)
@computed_in_float32_for_half
@numpy_names
def var(input: Tensor, dim: Dims | None = None, unbiased: bool = True, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance over `dim` with Bessel's correction by default (correction=1), as PyTorch."""
    c = _correction(correction, unbiased, "var")
    dims = norm_dims(dim, input.ndim, "var")
    float_only(input, "var")
    return Var.apply(input, dims, c, keepdim)


@with_formulas(Std)
@computed_in_float32_for_half
@numpy_names
def std(input: Tensor, dim: Dims | None = None, unbiased: bool = True, keepdim: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Standard deviation: sqrt(var(...)), correction=1 by default; gradient 0 where std = 0, as PyTorch."""
    c = _correction(correction, unbiased, "std")
    dims = norm_dims(dim, input.ndim, "std")
    float_only(input, "std")
    return Std.apply(input, dims, c, keepdim)


@with_formulas(Prod)
@numpy_names
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: DTypeLike | None = None) -> Tensor:
    """Product over `dim` (all elements when None)."""
    x = integers_as_int64(input) if dtype is None else input.to(dtype)  # uint8 and bool too, as PyTorch
    d = None if dim is None else _wrap_dim(dim, x.ndim, "prod")
    return Prod.apply(x, d if x.ndim else None, keepdim)  # a 0-d tensor has no axis: its product is itself


@with_formulas(Amax)
@numpy_names
def amax(input: Tensor, dim: Dims | None = (), keepdim: bool = False) -> Tensor:
    """Maximum over `dim` (all dims by default); ties share the gradient evenly."""
    if input._array.size == 0 and dim in ((), None):
        raise RuntimeError(f"amax: the maximum of an empty tensor (shape {tuple(input.shape)}) has no value; "
                           "give the dim to reduce")
    dims = norm_dims(dim, input.ndim, "amax")
    _check_not_empty(input, dims, "amax")
    return Amax.apply(input, dims, keepdim, False)


@with_formulas(Amin)
@numpy_names
def amin(input: Tensor, dim: Dims | None = (), keepdim: bool = False) -> Tensor:
    """Minimum over `dim` (all dims by default); ties share the gradient evenly."""
    if input._array.size == 0 and dim in ((), None):
        raise RuntimeError(f"amin: the minimum of an empty tensor (shape {tuple(input.shape)}) has no value; "
                           "give the dim to reduce")
    dims = norm_dims(dim, input.ndim, "amin")
    _check_not_empty(input, dims, "amin")
    return Amin.apply(input, dims, keepdim, False)


@with_formulas(Logsumexp)
@computed_in_float32_for_half
@numpy_names
def logsumexp(input: Tensor, dim: Dims, keepdim: bool = False) -> Tensor:
    """log(sum(exp(input))) over `dim`, computed without overflow (integers as the default float dtype)."""
    if input._array.dtype.kind in "biu":
        input = input.to(_dtype.get_default_dtype())
    dims = norm_dims(dim, input.ndim, "logsumexp")
    float_only(input, "logsumexp")
    return Logsumexp.apply(input, dims, keepdim)


@with_formulas(Norm)
@computed_in_float32_for_half
def norm(input: Tensor, p: float | str = "fro", dim: Dims | None = None, keepdim: bool = False,
         dtype: DTypeLike | None = None) -> Tensor:
    r"""The 2-norm (p=2 or 'fro') over `dim`; 'nuc' the sum of singular values over two dims; other p are
    composed from abs, pow and sum:

    forward: out = (\sum_{dims} |x|^p)^(1/p)   (p = inf: max |x|;  p = -inf: min |x|;  p = 0: the number of
             non-zeros;  p < 0: 0 where the slice holds a zero, whose |0|^p is inf)
    VJP:     gx = expand(g) * sign(x) |x|^(p-1) / out^(p-1), 0 where out = 0 (p = +-inf: Amax's, Amin's;
             p = 0: CountNonzero's)
    """
    if dtype is not None:  # PyTorch's: the input is cast first, the norm computed in dtype
        input = input.to(dtype)
    float_only(input, "norm")
    dims = norm_dims(dim, input.ndim, "norm")
    if p in ("fro", 2, 2.0):
        return Norm.apply(input, dims, keepdim)
    if p == "nuc":  # the sum of the singular values of the matrices over the two dims
        if input.ndim < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
        out = svdvals(input.movedim(dims, (-2, -1))).sum(dim=-1)
        return out.reshape(out.shape + (1, 1)).movedim((-2, -1), dims) if keepdim else out
    if p in ("inf", "-inf") or (not isinstance(p, str) and p < 0) or p == float("inf"):
        if input._array.size == 0 and (not dims or builtins.any(input.shape[d] == 0 for d in dims)):
            raise RuntimeError(f"norm: the {p} norm of an empty tensor (shape {tuple(input.shape)}) has no value "
                               "(the reduction has no identity)")
    if p in (float("inf"), "inf"):
        # the largest |x|; a NaN counts as the largest, as in PyTorch (its gradient sign(NaN) * g is 0)
        return shown_as(Amax.apply(input.abs(), dims, keepdim, True), "LinalgVectorNormBackward0", inputs=(input,))
    if p in (float("-inf"), "-inf"):  # the smallest |x| (a NaN counts as the smallest, as in PyTorch)
        return shown_as(Amin.apply(input.abs(), dims, keepdim, True), "LinalgVectorNormBackward0", inputs=(input,))
    if p == 0:  # the number of non-zeros: a step function, whose gradient is 0 (PyTorch's too)
        return CountNonzero.apply(input, dims, keepdim)
    p = cast(float, p)  # (for checkers: the names 'fro' and 'inf' were handled above)
    # (sum |x|^p)^(1/p), with PyTorch's subgradient 0 at zeros: the slopes of s^(1/p) at s = 0 and
    # (for p < 1) of |x|^p at x = 0 are infinite, and inf * 0 would make the gradient NaN, so where s
    # (or x) is 0 the power is taken of 1 instead and its result replaced by 0
    a = input.abs()
    if p < 1:
        zero = Tensor._make(a._array == 0)
        a = where(zero, 0.0, where(zero, 1.0, a) ** p)
    else:
        a = a ** p
    s = a.sum(dim=dims, keepdim=keepdim)
    if p < 0:  # a zero in the slice: its |0|^p is inf, so the sum is inf and the norm 0 (gradient 0, as PyTorch)
        out_zero = Tensor._make(np.asarray(zero._array.any(axis=dims, keepdims=keepdim)))
    else:
        out_zero = Tensor._make(s._array == 0)
    return shown_as(where(out_zero, 0.0, where(out_zero, 1.0, s) ** (1.0 / p)), "LinalgVectorNormBackward0",
                    inputs=(input,))


class max_result(NamedTuple):
    """What `max(x, dim)` returns: the largest values along dim, and their indices."""

    values: Tensor
    indices: Tensor


class min_result(NamedTuple):
    """What `min(x, dim)` returns: the smallest values along dim, and their indices."""

    values: Tensor
    indices: Tensor


# printed under PyTorch's names: max(values=..., indices=...)
return_type(max_result, "max")
return_type(min_result, "min")


@numpy_names
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the maximum (of the flattened tensor when dim is None); the first one on ties."""
    return _arg(np.argmax, input, dim, keepdim, "argmax")


@numpy_names
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the minimum (of the flattened tensor when dim is None); the first one on ties."""
    return _arg(np.argmin, input, dim, keepdim, "argmin")


@overload
def max(input: Tensor, dim: None = None, keepdim: bool = False, *, other: None = None) -> Tensor: ...
@overload
def max(input: Tensor, dim: int, keepdim: bool = False, *, other: None = None) -> max_result: ...
@overload
def max(input: Tensor, dim: Tensor, /) -> Tensor: ...
@overload
def max(input: Tensor, *, other: Tensor) -> Tensor: ...
@with_formulas(Amax, Maximum)
@numpy_names
def max(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,
        other: Tensor | None = None) -> Tensor | max_result:
    """max(x): the largest element. max(x, dim): (values, indices). max(x, y): elementwise maximum."""
    return _extreme(input, dim, keepdim, other, Amax, argmax, max_result, maximum, "max")


@overload
def min(input: Tensor, dim: None = None, keepdim: bool = False, *, other: None = None) -> Tensor: ...
@overload
def min(input: Tensor, dim: int, keepdim: bool = False, *, other: None = None) -> min_result: ...
@overload
def min(input: Tensor, dim: Tensor, /) -> Tensor: ...
@overload
def min(input: Tensor, *, other: Tensor) -> Tensor: ...
@with_formulas(Amin, Minimum)
@numpy_names
def min(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,
        other: Tensor | None = None) -> Tensor | min_result:
    """min(x): the smallest element. min(x, dim): (values, indices). min(x, y): elementwise minimum."""
    return _extreme(input, dim, keepdim, other, Amin, argmin, min_result, minimum, "min")


@numpy_names
def all(input: Tensor, dim: Dims | None = None, keepdim: bool = False) -> Tensor:
    """True where every element (over `dim`) is non-zero (a uint8 input gives 1/0 as uint8, as in PyTorch)."""
    axis = None if dim is None else norm_dims(dim, input.ndim, "all")
    return _truth(np.all(input._array, axis=axis, keepdims=keepdim), input)


@numpy_names
def any(input: Tensor, dim: Dims | None = None, keepdim: bool = False) -> Tensor:
    """True where some element (over `dim`) is non-zero (a uint8 input gives 1/0 as uint8, as in PyTorch)."""
    axis = None if dim is None else norm_dims(dim, input.ndim, "any")
    return _truth(np.any(input._array, axis=axis, keepdims=keepdim), input)


def count_nonzero(input: Tensor, dim: Dims | None = None, *, axis: Dims | None = None) -> Tensor:
    """How many elements (over dim) are not zero, as int64 (`axis` is numpy's name for dim, which PyTorch accepts)."""
    if axis is not None:
        if dim is not None:
            raise TypeError("count_nonzero(): got both 'dim' and its alias 'axis'")
        dim = axis
    axis = None if dim is None else norm_dims(dim, input.ndim, "count_nonzero")
    return Tensor._make(np.asarray(np.count_nonzero(input._array, axis=axis), dtype=np.int64))


class aminmax_result(NamedTuple):
    """What `aminmax` returns: the smallest and the largest values."""

    min: Tensor
    max: Tensor


return_type(aminmax_result, "aminmax")


@numpy_names
def nansum(input: Tensor, dim: Dims | None = None, keepdim: bool = False, *, dtype: DTypeLike | None = None) -> Tensor:
    r"""The sum with NaNs counted as 0 (a composite: where, then Sum; a NaN's gradient is 0).

    forward: out = \sum x over the non-NaN elements
    VJP:     gx = g where x is not NaN, 0 where it is
    """
    x = input if dtype is None else input.to(dtype)
    if _dtype.kind(x._array.dtype) == "f":
        x = where(Tensor._make(np.isnan(x._array)), 0.0, x)
    return sum(x, dim, keepdim)


@numpy_names
def nanmean(input: Tensor, dim: Dims | None = None, keepdim: bool = False, *,
            dtype: DTypeLike | None = None) -> Tensor:
    r"""The mean of the non-NaN elements: nansum / their count (NaN where all are NaN).

    forward: out = \sum x / count over the non-NaN elements
    VJP:     gx = g / count where x is not NaN, 0 where it is
    """
    x = input if dtype is None else input.to(dtype)
    float_only(x, "nanmean")
    count = Tensor._make(~np.isnan(x._array)).sum(dim=dim, keepdim=keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):
        return nansum(x, dim, keepdim) / count.to(x.dtype)


@numpy_names
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> aminmax_result:
    """(min, max) over dim (over everything when None).

    forward: (min x, max x) over dim
    VJP:     each element equal to the min (max) shares its g evenly
    """
    d = () if dim is None else dim
    return aminmax_result(amin(input, d, keepdim), amax(input, d, keepdim))


@numpy_names
def var_mean(input: Tensor, dim: Dims | None = None, unbiased: bool = True, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    """(var, mean) over dim, as var(...) and mean(...).

    forward: (var(x), mean(x)) over dim
    VJP:     Var's and Mean's, summed
    """
    return (var(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


@numpy_names
def std_mean(input: Tensor, dim: Dims | None = None, unbiased: bool = True, keepdim: bool = False, *,
             correction: float | None = None) -> tuple[Tensor, Tensor]:
    """(std, mean) over dim, as std(...) and mean(...).

    forward: (std(x), mean(x)) over dim
    VJP:     Std's and Mean's, summed
    """
    return (std(input, dim, unbiased, keepdim, correction=correction), mean(input, dim, keepdim))


# ---- the math the forwards and backwards share --------------------------------------------------

def _keep(g, shape, dims, keepdim):
    """`g` reshaped to `shape` with size 1 at each reduced dim (a no-op when keepdim was True)."""
    if keepdim:
        return g
    return g.reshape(tuple(1 if i in dims else n for i, n in enumerate(shape)))


def _count(shape, dims):
    """How many elements a reduction over `dims` takes into each result (1 for no dims)."""
    return math.prod([shape[d] for d in dims])


@quietly("over", "invalid", "divide")  # inf - inf, overflow, 0/0 for too few elements: NaN and inf, as PyTorch
def _variance(x, dims, correction, keepdim):
    """Var's forward in float64 whatever x's dtype, as PyTorch accumulates float32: in float32 the
    squares of deviations under 1e-19 underflow to 0 (std of [0, 1e-30] would be 0, not 7.07e-31)."""
    a = x._array.astype(np.float64, copy=False)
    d = a - _mean(a, dims, True)
    denom = builtins.max(_count(x.shape, dims) - correction, 0)
    return np.asarray(np.sum(d * d, axis=dims, keepdims=keepdim) / denom)


@quietly("over", "invalid", "divide")
def _mean(a, dims, keepdim):
    """np.mean over `dims`, silent as PyTorch: inf + -inf is NaN, and the mean of nothing 0/0 = NaN
    (where numpy warns "Mean of empty slice")."""
    if _count(a.shape, dims) == 0:
        return np.sum(a, axis=dims, keepdims=keepdim) / 0
    return np.mean(a, axis=dims, keepdims=keepdim)


def _prod_of_others(x, dim):
    """For each i along `dim`: the product of all the other elements (a Tensor op, so differentiable)."""
    xt = x.transpose(dim, -1)  # (..., n)
    n = xt.shape[-1]
    eye = Tensor._make(np.eye(n, dtype=bool))
    others = where(eye, 1.0, xt.unsqueeze(-2))  # (..., n, n): row i is x with x_i replaced by 1
    return others.prod(dim=-1).transpose(dim, -1)


def _tie_split(ctx, g):
    """Amax's and Amin's VJP: g shared evenly among the elements equal to the result (the ties)."""
    x, dims, keepdim, nan_wins = ctx.inputs
    out = _keep(ctx.output, x.shape, dims, keepdim)._array
    hit = x._array == out
    if nan_wins:
        hit |= np.isnan(x._array) & np.isnan(out)
    with np.errstate(invalid="ignore"):  # amax over a NaN: no element equals it, 0/0 = NaN as in PyTorch
        share = hit / np.sum(hit, axis=dims, keepdims=True)
    return _keep(g, x.shape, dims, keepdim) * Tensor._make(share.astype(g.dtype)), None, None, None


# ---- edge cases, argument checks and dtype rules, named -----------------------------------------

def _check_not_empty(x, dims, op):
    """A max over nothing has no value; an empty dim that is not reduced just gives an empty result."""
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{op}: expected reduction dim {d} to have non-zero size, got shape {tuple(x.shape)}")


def _correction(correction, unbiased, op):
    """PyTorch's two overloads: `unbiased` (True by default: correction 1) or `correction`, never both."""
    if correction is None:
        return 1 if unbiased else 0
    if unbiased is not True:  # (an explicit unbiased=True is PyTorch's default, so it can't be told apart)
        raise TypeError(f"{op}(): takes either unbiased or correction, not both (got unbiased={unbiased!r}, "
                        f"correction={correction!r})")
    return correction


def _arg(np_arg, input, dim, keepdim, op):
    if input._array.dtype == np.bool_:
        raise RuntimeError(f"{op}: does not support bool input (convert it with .long() or .float())")
    if dim is None:
        if input._array.size == 0:
            raise IndexError(f"{op}: an empty tensor (shape {tuple(input.shape)}) has no {op} index; give the dim")
        return Tensor._make(np.asarray(np_arg(input._array), dtype=np.int64))
    d = _wrap_dim(dim, input.ndim, op)
    if input.ndim:
        _check_not_empty(input, (d,), op)
    idx = np_arg(input._array, axis=d)
    return Tensor._make(np.expand_dims(idx, d) if keepdim and input.ndim else idx)  # 0-d stays 0-d


def _extreme(input, dim, keepdim, other, reduce, arg, result, elementwise, op):
    if isinstance(dim, Tensor):  # torch.max(a, b) is the elementwise maximum
        other, dim = dim, None
    if other is not None:
        return elementwise(input, other)
    dims = norm_dims(dim, input.ndim, op)
    _check_not_empty(input, dims, reduce.__name__.lower())  # (the message names amax or amin)
    # the gradient of a NaN max goes to the NaN elements (PyTorch's max, unlike its amax)
    values = reduce.apply(input, dims, keepdim and dim is not None, True)
    if dim is None:  # PyTorch's max() is its overload 1, max(dim) overload 0
        return shown_as(values, op.capitalize() + "Backward1")
    shown_as(values, op.capitalize() + "Backward0")
    # bool has an order (False < True) for max and min; only argmax refuses bool, so its indices come from uint8
    index_source = input.to(_dtype.uint8) if input._array.dtype == np.bool_ else input
    return result(values, arg(index_source, dim, keepdim))


def _truth(answer: object, input: Tensor) -> Tensor:
    answer = np.asarray(answer)
    return Tensor._make(answer.astype(np.uint8) if input._array.dtype == np.uint8 else answer)
