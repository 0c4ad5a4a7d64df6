r"""softmax and log_softmax along a dim, stable at any magnitude of the logits.

Both subtract the row maximum m first: e^{x - m} <= 1 can't overflow, and the largest term is
exactly 1, so the sum is >= 1 and its log is finite. log_softmax is computed as
x - m - log(sum(e^{x - m})), never as log(softmax(x)), which is -inf wherever softmax underflows.
"""
from __future__ import annotations

import numpy as np

from .._fperr import divide as _quiet_divide, exp as _exp, quiet
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..tensor import Tensor, _wrap_dim
from ..types import DTypeLike
from ._half import computed_in_float32_for_half
from ._util import finite_max, float_kernel, int_arg, tensor_input


class Softmax(Function):
    r"""out_i = e^{x_i} / \sum_j e^{x_j}   along `dim`
    VJP: gx = out * (g - \sum_j g_j out_j)   (the Jacobian dp_i/dx_j = p_i (delta_ij - p_j) applied to g)"""

    @staticmethod
    def forward(ctx, x, dim):
        e = _exp(_shift(x._array, finite_max(x._array, dim, keep_posinf=True)))
        return _quiet_divide(e, e.sum(axis=dim, keepdims=True))  # a row of only -inf: 0/0 = nan, as in PyTorch

    @staticmethod
    def backward(ctx, g):
        _, dim = ctx.inputs
        out = ctx.output
        return out * (g - (g * out).sum(dim=dim, keepdim=True)), None


class LogSoftmax(Function):
    r"""out_i = x_i - log \sum_j e^{x_j}   along `dim`
    VJP: gx = g - softmax(x) * \sum_j g_j = g - e^{out} * \sum_j g_j"""

    @staticmethod
    def forward(ctx, x, dim):
        return _log_softmax(_shift(x._array, finite_max(x._array, dim, keep_posinf=True)), dim)

    @staticmethod
    def backward(ctx, g):
        _, dim = ctx.inputs
        return g - ctx.output.exp() * g.sum(dim=dim, keepdim=True), None


# ---- the public functions -----------------------------------------------------------------------

@with_formulas(Softmax)
def softmax(input: Tensor, dim: int | None = None, dtype: DTypeLike | None = None) -> Tensor:
    """Probabilities along `dim` that are positive and sum to 1."""
    _dim_given(dim, "softmax")
    return _softmax(input, dim, dtype)


@with_formulas(LogSoftmax)
def log_softmax(input: Tensor, dim: int | None = None, dtype: DTypeLike | None = None) -> Tensor:
    """log(softmax(input)), computed stably."""
    _dim_given(dim, "log_softmax")
    return _log_softmax_of(input, dim, dtype)


@computed_in_float32_for_half  # (h-names29) as PyTorch's kernels: in float32, rounded once, its VJP too
def _softmax(input, dim, dtype):
    x, d = _dim_and_input(input, dim, dtype, "softmax")
    return Softmax.apply(x, d)


@computed_in_float32_for_half  # (h-names29) as softmax
def _log_softmax_of(input, dim, dtype):
    x, d = _dim_and_input(input, dim, dtype, "log_softmax")
    return LogSoftmax.apply(x, d)


# nn.functional's forms, in its order: PyTorch's F.softmax takes a `_stacklevel` (of a warning it no longer
# gives) before `dtype`, which torch.softmax and Tensor.softmax do not take at all
@with_formulas(Softmax)
def functional_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                       dtype: DTypeLike | None = None) -> Tensor:
    """Probabilities along `dim` that are positive and sum to 1."""
    int_arg(_stacklevel, "softmax", "_stacklevel")  # (unused, but PyTorch's code reads it as an int)
    return _softmax(input, dim, dtype)  # (F's dim may be left out: PyTorch's legacy implicit choice)


@with_formulas(LogSoftmax)
def functional_log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                           dtype: DTypeLike | None = None) -> Tensor:
    """log(softmax(input)), computed stably."""
    int_arg(_stacklevel, "log_softmax", "_stacklevel")  # (unused, but PyTorch's code reads it as an int)
    return _log_softmax_of(input, dim, dtype)


# torch.special's forms: `dim` required, `dtype` by keyword only
def special_softmax(input: Tensor, dim: int, *, dtype: DTypeLike | None = None) -> Tensor:
    """Probabilities along `dim` that are positive and sum to 1."""
    return softmax(input, dim, dtype)


def special_log_softmax(input: Tensor, dim: int, *, dtype: DTypeLike | None = None) -> Tensor:
    """log(softmax(input)), computed stably."""
    return log_softmax(input, dim, dtype)


# ---- numpy steps of the forwards, silent where PyTorch is ---------------------------------------

# A row holding +inf: inf - inf = nan, and the whole row is NaN, as in PyTorch (which does not warn).
_shift = quiet(np.subtract, "invalid")


# A row of only -inf: log 0 = -inf, and -inf - (-inf) = nan, as in PyTorch (which does not warn).
_log_softmax = quiet(lambda s, dim: s - np.log(np.exp(s).sum(axis=dim, keepdims=True)), "divide", "invalid", "over")


# ---- argument checks, named ---------------------------------------------------------------------

def _dim_given(dim, op):
    """torch.softmax and Tensor.softmax have no implicit dim (F's has): PyTorch's parser refuses the call."""
    if dim is None:
        raise TypeError(f'{op}() missing 1 required positional arguments: "dim"')


def _dim_and_input(input, dim, dtype, op):
    tensor_input(input, op)
    if dtype is not None:
        input = input.to(dtype)
    float_kernel(input, op)  # (PyTorch's softmax kernels exist for floating dtypes only)
    if dim is None:  # PyTorch's legacy implicit choice
        dim = 0 if input.ndim in (0, 1, 3) else 1
    d = _wrap_dim(dim, input.ndim, op)
    return input, (d if input.ndim else None)  # a 0-d tensor has no axis: axis=None reduces its one element
