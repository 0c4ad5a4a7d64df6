"""Comparisons and logic: bool results, no gradient (a step function has zero slope almost everywhere).

The one op here, Compared, is for the in-place forms (`x.eq_(y)` writes 1 or 0 in x's dtype, recorded
with a zero gradient, as PyTorch)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _dtype
from .._fperr import quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
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
        if bitwise and _dtype.kind(want) == "f":
            raise NotImplementedError(f"{name}: only integer and bool tensors are supported, got {want}")
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
    if _dtype.kind(input.dtype) == "f":
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


# ---- issue 29: sign and infinity tests, membership, shifts, and the in-place comparisons -------------

def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set (negative numbers, -0.0 and a negative NaN)."""
    return Tensor._make(np.asarray(np.signbit(_tensor(input, "signbit")._array)))


def isposinf(input: Tensor) -> Tensor:
    """True where input is +inf."""
    return Tensor._make(np.asarray(np.isposinf(_tensor(input, "isposinf")._array)))


def isneginf(input: Tensor) -> Tensor:
    """True where input is -inf."""
    return Tensor._make(np.asarray(np.isneginf(_tensor(input, "isneginf")._array)))


def isreal(input: Tensor) -> Tensor:
    """True everywhere: minitensor has no complex dtypes, so every element is real."""
    return Tensor._make(np.ones(_tensor(input, "isreal")._array.shape, dtype=bool))


def isin(elements: TensorOrNumber, test_elements: TensorOrNumber, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """True where an element of `elements` is among `test_elements` (False with `invert`), compared
    in the two's promoted dtype; one of them may be a number."""
    a, b = operand(elements, "isin"), operand(test_elements, "isin")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError("isin: expected at least one Tensor argument")
    (x, y), want = in_common_dtype(a, b)
    if want.kind == "b":
        raise RuntimeError("isin: unsupported input type bool (convert with .long())")
    return Tensor._make(np.asarray(np.isin(x, y, assume_unique=assume_unique, invert=invert)))


def _shift(name: str, left: bool) -> Callable[[TensorOrNumber, TensorOrNumber], Tensor]:
    def op(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
        (a, b), want = in_common_dtype(operand(input, name), operand(other, name))
        if want.kind not in "iu":
            raise NotImplementedError(f"{name}: not implemented for {want} tensors (integers only)")
        broadcast_shapes(name, np.shape(a), np.shape(b))
        return Tensor._make(np.asarray(_shifted(np.asarray(a), np.asarray(b), left)))

    op.__name__ = name
    op.__doc__ = (f"input {'<<' if left else '>>'} other, elementwise (integers only); a shift by a negative "
                  "amount or by the dtype's width or more gives " + ("0" if left else "0, or -1 for a negative input")
                  + ", as PyTorch. No gradient.")
    return op


bitwise_left_shift = _shift("bitwise_left_shift", left=True)
bitwise_right_shift = _shift("bitwise_right_shift", left=False)


def _shifted(a, b, left):
    bits = a.dtype.itemsize * 8
    out_of_range = (b < 0) | (b >= bits)
    safe = np.where(out_of_range, 0, b).astype(a.dtype)
    if left:
        return np.where(out_of_range, 0, np.left_shift(a, safe)).astype(a.dtype)
    return np.where(out_of_range, np.where(a < 0, -1, 0), np.right_shift(a, safe)).astype(a.dtype)


class Compared(Function):
    r"""out = compare(a, b) (a comparison, logical or bitwise op) written in a's dtype: 1 or 0 for a
    comparison, what `x.eq_(y)`, `x.logical_and_(y)` ... put into x
    VJP: ga = 0;  gb = 0   (a step function: its slope is 0 wherever it has one, as PyTorch)"""

    saves_values = False  # only the shapes

    @staticmethod
    def forward(ctx, a, b, compare):
        return compare(a, *(() if b is None else (b,)))._array.astype(a._array.dtype)

    @staticmethod
    def backward(ctx, g):
        a, b, _ = ctx.inputs

        def zeros(t, need):
            return Tensor._make(np.zeros(t._array.shape, g.dtype)) if need and isinstance(t, Tensor) else None
        return zeros(a, ctx.needs_input_grad[0]), zeros(b, ctx.needs_input_grad[1]), None


def in_place(name: str, compare: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The in-place method `x.<name>(other)` (`x.eq_(y)` ...): compare(x, other) written into x in
    x's dtype (1 or 0 for a comparison) through a Compared node, so x's gradient becomes 0, as PyTorch."""
    def method(self: Tensor, other: TensorOrNumber) -> Tensor:
        from .inplace import inplace  # (inplace.py sits above the op modules)
        return inplace(self, name, Compared.apply, other, compare)

    def unary_method(self: Tensor) -> Tensor:
        from .inplace import inplace
        return inplace(self, name, Compared.apply, None, compare)

    chosen = unary_method if compare in (logical_not, bitwise_not) else method
    chosen.__name__ = chosen.__qualname__ = name
    chosen.__doc__ = (f"In place: x becomes `{compare.__name__}(x, ...)` in x's dtype (recorded in the graph, "
                      "with a zero gradient).")
    return with_formulas(Compared)(chosen)


def _tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    return x


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
