"""Comparisons and logic: bool results, no gradient (a step function has zero slope almost everywhere)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._fperr import quietly
from ..tensor import Tensor
from ..types import TensorOrNumber
from ._util import broadcast_shapes, in_common_dtype, operand


# (no Function here: nothing to differentiate. `_compare` makes the public comparisons below, so it
# comes first: they are made when the module is imported)
def _compare(name: str, fn: Callable[..., object],
             bitwise: bool = False) -> Callable[[TensorOrNumber, TensorOrNumber], Tensor]:
    @quietly("over")  # a Python float beyond float32 compares as inf, as in PyTorch
    def op(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
        # both in PyTorch's promoted dtype first, as PyTorch compares them: a uint8 tensor >= -1
        # compares with 255, float32 0.1 == a 0-d float64 0.1 is True (uint8 & a 0-d int8 is uint8)
        (a, b), want = in_common_dtype(operand(input, name), operand(other, name))
        if bitwise and want.kind == "f":
            raise RuntimeError(f"{name}: only integer and bool tensors are supported, got {want}")
        try:
            return Tensor._make(np.asarray(fn(a, b)))
        except ValueError:
            broadcast_shapes(name, np.shape(a), np.shape(b))
            raise

    op.__name__ = name
    op.__doc__ = f"Elementwise `{name}`: a bool tensor, no gradient."
    return op


eq = _compare("eq", np.equal)
ne = _compare("ne", np.not_equal)
lt = _compare("lt", np.less)
le = _compare("le", np.less_equal)
gt = _compare("gt", np.greater)
ge = _compare("ge", np.greater_equal)
logical_and = _compare("logical_and", np.logical_and)
logical_or = _compare("logical_or", np.logical_or)
logical_xor = _compare("logical_xor", np.logical_xor)
bitwise_and = _compare("bitwise_and", np.bitwise_and, bitwise=True)
bitwise_or = _compare("bitwise_or", np.bitwise_or, bitwise=True)
bitwise_xor = _compare("bitwise_xor", np.bitwise_xor, bitwise=True)


def equality(fn: Callable[[Any, Any], Tensor]) -> Callable[[Tensor, object], Tensor]:
    """`t == other` for an operand no op takes (None, a string ...): Python's own answer, as PyTorch
    gives: `t == None` is False and `t != None` True, so `if x == None:` and `slice(i, j) == slice(None)` work."""
    def method(self: Tensor, other: object) -> Tensor:
        try:
            return fn(self, other)
        except TypeError:
            return NotImplemented

    method.__name__ = fn.__name__
    return method


def logical_not(input: Tensor) -> Tensor:
    """True where input is zero/False."""
    return Tensor._make(np.logical_not(input._array))


def bitwise_not(input: Tensor) -> Tensor:
    """`~x`: logical not on bool tensors, bitwise not on integers."""
    if input.dtype.kind == "f":
        raise TypeError(f"bitwise_not (~): only integer and bool tensors are supported, got {input.dtype}")
    return Tensor._make(np.invert(input._array))


def isnan(input: Tensor) -> Tensor:
    return Tensor._make(np.isnan(input._array))


def isinf(input: Tensor) -> Tensor:
    return Tensor._make(np.isinf(input._array))


def isfinite(input: Tensor) -> Tensor:
    return Tensor._make(np.isfinite(input._array))


def equal(input: Tensor, other: Tensor) -> bool:
    """True if both have the same shape and elements (a Python bool)."""
    return input.shape == other.shape and bool(np.array_equal(input._array, other._array))


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True if every element of `isclose(input, other, ...)` is (a Python bool)."""
    a, b = _close_operands("allclose", input, other, rtol, atol)
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities too; NaN only with equal_nan)."""
    a, b = _close_operands("isclose", input, other, rtol, atol)
    return Tensor._make(np.asarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


# ---- argument checks, named ---------------------------------------------------------------------

def _close_operands(op, input, other, rtol, atol):
    """PyTorch's checks: `other` a tensor of input's dtype (float32 is not compared with float64),
    shapes that broadcast, tolerances >= 0."""
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' must be Tensor, not {type(other).__name__}")
    if input.dtype != other.dtype:
        raise RuntimeError(f"{op}: {input.dtype} did not match {other.dtype} (compare tensors of one dtype)")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{op}: {name} must be greater than or equal to zero, but got {tol}")
    broadcast_shapes(op, input.shape, other.shape)
    return input._array, other._array
