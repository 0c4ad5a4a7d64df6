"""Comparisons and logic: bool results, no gradient (a step function has zero slope almost everywhere)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..tensor import Tensor, tensor_method
from .._fperr import quietly
from ._util import broadcast_shapes, in_common_dtype, operand, raw
from ..types import TensorOrNumber


def _compare(name: str, fn: Callable[..., object], bitwise: bool = False) -> Callable[[TensorOrNumber, TensorOrNumber], Tensor]:
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
    return tensor_method()(op)


eq = _compare("eq", np.equal)
ne = _compare("ne", np.not_equal)
lt = _compare("lt", np.less)
le = _compare("le", np.less_equal)
gt = _compare("gt", np.greater)
ge = _compare("ge", np.greater_equal)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
for _alias, _op in (("greater", gt), ("greater_equal", ge), ("less", lt), ("less_equal", le), ("not_equal", ne)):
    tensor_method(_alias)(_op)  # PyTorch's long names are Tensor methods too: `x.greater(y)`
logical_and = _compare("logical_and", np.logical_and)
logical_or = _compare("logical_or", np.logical_or)
logical_xor = _compare("logical_xor", np.logical_xor)
bitwise_and = _compare("bitwise_and", np.bitwise_and, bitwise=True)
bitwise_or = _compare("bitwise_or", np.bitwise_or, bitwise=True)
bitwise_xor = _compare("bitwise_xor", np.bitwise_xor, bitwise=True)



def _equality(fn):
    """`t == other` for an operand no op takes (None, a string ...): Python's own answer, as PyTorch
    gives: `t == None` is False and `t != None` True, so `if x == None:` and `slice(i, j) == slice(None)` work."""
    def method(self, other):
        try:
            return fn(self, other)
        except TypeError:
            return NotImplemented

    method.__name__ = fn.__name__
    return method


Tensor.__eq__ = _equality(eq)
Tensor.__ne__ = _equality(ne)
Tensor.__lt__ = lt
Tensor.__le__ = le
Tensor.__gt__ = gt
Tensor.__ge__ = ge
Tensor.__and__ = bitwise_and
Tensor.__or__ = bitwise_or
Tensor.__xor__ = bitwise_xor
Tensor.__rand__ = lambda self, other: bitwise_and(other, self)
Tensor.__ror__ = lambda self, other: bitwise_or(other, self)
Tensor.__rxor__ = lambda self, other: bitwise_xor(other, self)


@tensor_method()
def logical_not(input: Tensor) -> Tensor:
    """True where input is zero/False."""
    return Tensor._make(np.logical_not(input._array))


@tensor_method()
def bitwise_not(input: Tensor) -> Tensor:
    """`~x`: logical not on bool tensors, bitwise not on integers."""
    if input.dtype.kind == "f":
        raise TypeError(f"bitwise_not (~): only integer and bool tensors are supported, got {input.dtype}")
    return Tensor._make(np.invert(input._array))


Tensor.__invert__ = bitwise_not


@tensor_method()
def isnan(input: Tensor) -> Tensor:
    return Tensor._make(np.isnan(input._array))


@tensor_method()
def isinf(input: Tensor) -> Tensor:
    return Tensor._make(np.isinf(input._array))


@tensor_method()
def isfinite(input: Tensor) -> Tensor:
    return Tensor._make(np.isfinite(input._array))


@tensor_method()
def equal(input: Tensor, other: Tensor) -> bool:
    """True if both have the same shape and elements (a Python bool)."""
    return input.shape == other.shape and bool(np.array_equal(input._array, other._array))


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


@tensor_method()
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True if every element of `isclose(input, other, ...)` is (a Python bool)."""
    a, b = _close_operands("allclose", input, other, rtol, atol)
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


@tensor_method()
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities too; NaN only with equal_nan)."""
    a, b = _close_operands("isclose", input, other, rtol, atol)
    return Tensor._make(np.asarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))
