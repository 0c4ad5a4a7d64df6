r"""Arithmetic with broadcasting: + - * / ** //, %, fmod, maximum, minimum, lerp, addcmul, addcdiv.

Notation in every docstring: `g` is the gradient flowing into the op's output, `out` is the
forward result, and `unbroadcast(·, a.shape)` sums a gradient back down to the shape of input `a`
(the adjoint of broadcasting, called in each VJP where it happens). Each VJP is written with Tensor
ops, so it can be differentiated again (`create_graph=True`).

The file reads top down: the ops (`Function` classes, formula docstring, forward, backward), then
the public functions that apply them (argument checks live there), then the named edge cases and
dtype rules the ops call.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np

from .. import _dtype
from .._fperr import divide as _divide, quiet, quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..tensor import Tensor
from ..types import DType, Number, TensorOrNumber
from ._util import (
    apply_elementwise,
    broadcast_shapes,
    float_only,
    in_common_dtype,
    operand,
    raw,
    tensor_input,
    unbroadcast,
)
from .conversion import cast, prepare_division, prepare_operands
from .indexing import where
from .unary import log

# ---- the ops -------------------------------------------------------------------------------------

class Add(Function):
    r"""out = a + b
    VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(g, b.shape)"""

    saves_values = False  # only the shapes


    @staticmethod
    def forward(ctx, a, b):
        return _add_arrays(raw(a), raw(b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return (unbroadcast(g, a._array.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(g, b._array.shape) if ctx.needs_input_grad[1] else None)


class Sub(Function):
    r"""out = a - b
    VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(-g, b.shape)"""

    saves_values = False


    @staticmethod
    def forward(ctx, a, b):
        return _subtract_arrays(raw(a), raw(b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return (unbroadcast(g, a._array.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-g, b._array.shape) if ctx.needs_input_grad[1] else None)


class Mul(Function):
    r"""out = a * b
    VJP: ga = unbroadcast(g * b, a.shape);  gb = unbroadcast(g * a, b.shape)"""


    @staticmethod
    def forward(ctx, a, b):
        return _multiply_arrays(raw(a), raw(b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return (unbroadcast(g * b, a._array.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(g * a, b._array.shape) if ctx.needs_input_grad[1] else None)


class Div(Function):
    r"""out = a / b   (true division: integer inputs give the default float dtype)
    VJP: ga = unbroadcast(g / b, a.shape);  gb = unbroadcast(-g * (a / b) / b, b.shape)
         (a / b / b, not a / b^2: b^2 underflows to 0 for |b| < 1e-19 in float32, 1e-154 in float64)"""


    @staticmethod
    def forward(ctx, a, b):
        return _divide(raw(a), raw(b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return (unbroadcast(g / b, a._array.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-g * (a / b / b), b._array.shape) if ctx.needs_input_grad[1] else None)


class Pow(Function):
    r"""out = a ** b   (either may be a Python number)
    VJP: ga = unbroadcast(g * b * a^(b-1), a.shape), 0 where b == 0 (even at a = 0, NaN or subnormal, as PyTorch)
         gb = unbroadcast(g * out * log(a), b.shape), with log(a) taken as 0 where a == 0 and
              b >= 0 (PyTorch's rule; elsewhere log 0 = -inf and log of a negative a = NaN)"""


    @staticmethod
    def forward(ctx, a, b):
        return _power(a, b)  # in the result's dtype, as PyTorch computes each dtype's power

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        ga = gb = None
        if ctx.needs_input_grad[0]:
            base, b_ = _base_for_slope(a, b)
            ga = unbroadcast(g * (b_ * base ** (b_ - 1)), a._array.shape)  # (b a^(b-1) first, as PyTorch: may overflow)
        if ctx.needs_input_grad[1]:
            gb = unbroadcast(g * ctx.output * _log_of_base(a, b, g._array.dtype), b._array.shape)
        return ga, gb


class Maximum(Function):
    r"""out = max(a, b) elementwise
    VJP: ga = unbroadcast(g * wa, a.shape);  gb = unbroadcast(g * wb, b.shape),
         wa = 0 if a < b, 1/2 if a == b (a tie splits the gradient), 1 otherwise;  wb likewise with a > b
         (so where a or b is NaN, out is NaN and both get g, as in PyTorch)"""


    @staticmethod
    def forward(ctx, a, b):
        return _maximum_arrays(raw(a), raw(b))

    @staticmethod
    def backward(ctx, g):
        x, y = (raw(t) for t in ctx.inputs)  # (one dtype: `maximum` promoted the tensors)
        return _extreme_vjp(ctx, g, x < y, x > y, x == y)


class Minimum(Function):
    r"""out = min(a, b) elementwise
    VJP: ga = unbroadcast(g * wa, a.shape);  gb = unbroadcast(g * wb, b.shape),
         wa = 0 if a > b, 1/2 if a == b, 1 otherwise;  wb likewise with a < b (both get g at a NaN)"""


    @staticmethod
    def forward(ctx, a, b):
        return _minimum_arrays(raw(a), raw(b))

    @staticmethod
    def backward(ctx, g):
        x, y = (raw(t) for t in ctx.inputs)  # (one dtype: `minimum` promoted the tensors)
        return _extreme_vjp(ctx, g, x > y, x < y, x == y)


class RoundedDiv(Function):
    r"""out = trunc(a / b) (rounding_mode='trunc') or floor(a / b) ('floor', which is `a // b`)
    VJP: ga = 0;  gb = 0   (a step function: its slope is 0 wherever it has one, as in PyTorch)"""

    saves_values = False  # only the shapes

    @staticmethod
    def forward(ctx, a, b, mode):
        x, y = _rounding_operands(a, b)
        return _trunc_div(x, y) if mode == "trunc" else _floor_div(x, y)

    @staticmethod
    def backward(ctx, g):
        a, b, _ = ctx.inputs
        return (Tensor._make(np.zeros(a.shape, g._array.dtype)) if ctx.needs_input_grad[0] else None,
                Tensor._make(np.zeros(b.shape, g._array.dtype)) if ctx.needs_input_grad[1] else None, None)


class Remainder(Function):
    r"""out = a - b * floor(a / b)   (the sign of b, as Python's %: -5 % 3 = 1, 5 % -3 = -1)
    VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(-g * floor(a / b), b.shape)"""

    @staticmethod
    def forward(ctx, a, b):
        x, y = _rounding_operands(a, b)
        mod = _fmod(x, y)
        # fmod has the sign of a: where that differs from b's, one more b brings it to b's side
        return np.where((mod != 0) & ((mod < 0) != (y < 0)), mod + y, mod)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return (unbroadcast(g, a.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-g * RoundedDiv.apply(a, b, "floor"), b.shape) if ctx.needs_input_grad[1] else None)


class Fmod(Function):
    r"""out = a - b * trunc(a / b)   (the sign of a, as C's fmod: fmod(-5, 3) = -2)
    VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(-g * trunc(a / b), b.shape)"""

    @staticmethod
    def forward(ctx, a, b):
        return _fmod(*_rounding_operands(a, b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return (unbroadcast(g, a.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-g * RoundedDiv.apply(a, b, "trunc"), b.shape) if ctx.needs_input_grad[1] else None)


class Lerp(Function):
    r"""out = a + w (b - a), computed as PyTorch does: a + w (b - a) for |w| < 1/2, else b - (b - a)(1 - w)
    (so w = 1 gives b exactly)
    VJP: ga = unbroadcast(g (1 - w), a.shape);  gb = unbroadcast(g w, b.shape);  gw = unbroadcast(g (b - a), w.shape)"""

    @staticmethod
    @quietly("over", "invalid")  # inf - inf, inf * 0: NaN, silently as in PyTorch
    def forward(ctx, a, b, w):
        x, y, t = a._array, b._array, raw(w)
        d = y - x
        return np.where(np.abs(t) < 0.5, x + t * d, y - d * (1 - t)).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        a, b, w = ctx.inputs
        need = ctx.needs_input_grad
        return (unbroadcast(g * (1 - w), a._array.shape) if need[0] else None,
                unbroadcast(g * w, b._array.shape) if need[1] else None,
                unbroadcast(g * (b - a), w._array.shape) if need[2] else None)



# ---- issue 29's binary ops: float results of two operands (they share the operands' promoted dtype) ----

class Atan2(Function):
    r"""out = atan2(a, b), the angle of the point (b, a) in (-pi, pi]
    VJP: ga = unbroadcast(g * b / (a^2 + b^2), a.shape);  gb = unbroadcast(-g * a / (a^2 + b^2), b.shape)"""

    @staticmethod
    def forward(ctx, a, b):
        return _on_data(np.arctan2, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        r2 = a * a + b * b
        return _binary_grads(ctx, g * b / r2, -g * a / r2)


class Hypot(Function):
    r"""out = sqrt(a^2 + b^2)   (without overflow of the squares)
    VJP: ga = unbroadcast(g * a / out, a.shape);  gb = unbroadcast(g * b / out, b.shape)"""

    @staticmethod
    def forward(ctx, a, b):
        return _on_data(np.hypot, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        out = ctx.output
        return _binary_grads(ctx, g * a / out, g * b / out)


class Logaddexp(Function):
    r"""out = ln(e^a + e^b)   (computed as max + ln(1 + e^-|a - b|): no overflow)
    VJP: ga = unbroadcast(g / (1 + e^(b - a)), a.shape);  gb = unbroadcast(g / (1 + e^(a - b)), b.shape)"""

    @staticmethod
    def forward(ctx, a, b):
        return _on_data(np.logaddexp, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return _binary_grads(ctx, g / (1 + _exp_t(b - a)), g / (1 + _exp_t(a - b)))


class Logaddexp2(Function):
    r"""out = log2(2^a + 2^b)
    VJP: ga = unbroadcast(g / (1 + 2^(b - a)), a.shape);  gb = unbroadcast(g / (1 + 2^(a - b)), b.shape)"""

    @staticmethod
    def forward(ctx, a, b):
        return _on_data(np.logaddexp2, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return _binary_grads(ctx, g / (1 + 2 ** (b - a)), g / (1 + 2 ** (a - b)))


class Copysign(Function):
    r"""out = |a| with the sign of b   (b = -0.0 counts as negative)
    VJP: ga = unbroadcast(g * out / a, a.shape), 0 where a = 0 (as PyTorch);  gb = 0"""

    @staticmethod
    def forward(ctx, a, b):
        return _on_data(np.copysign, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        flips = np.where(raw(a) == 0, 0, np.sign(raw(ctx.output)) * np.sign(raw(a))).astype(g._array.dtype)  # out / a
        return _binary_grads(ctx, g * Tensor._make(flips), Tensor._make(np.zeros(g._array.shape, g._array.dtype)))


class Fmax(Function):
    r"""out = max(a, b) elementwise, ignoring a NaN (NaN only where both are)
    VJP: ga = unbroadcast(g * [a >= b or b is NaN], a.shape);
         gb = unbroadcast(g * [not (a >= b or b is NaN)], b.shape)
         (a tie gives all of g to a, as PyTorch)"""

    @staticmethod
    def forward(ctx, a, b):
        return _on_data(np.fmax, a, b)

    @staticmethod
    def backward(ctx, g):
        x, y = (raw(t) for t in ctx.inputs)
        return _picked_vjp(ctx, g, (x >= y) | np.isnan(y))


class Fmin(Function):
    r"""out = min(a, b) elementwise, ignoring a NaN (NaN only where both are)
    VJP: ga = unbroadcast(g * [a <= b or b is NaN], a.shape);
         gb = unbroadcast(g * [not (a <= b or b is NaN)], b.shape)"""

    @staticmethod
    def forward(ctx, a, b):
        return _on_data(np.fmin, a, b)

    @staticmethod
    def backward(ctx, g):
        x, y = (raw(t) for t in ctx.inputs)
        return _picked_vjp(ctx, g, (x <= y) | np.isnan(y))


class Xlogy(Function):
    r"""out = x * ln y, and 0 where x = 0 (unless y is NaN), so 0 * ln 0 = 0
    VJP: gx = unbroadcast(xlogy(g, y), x.shape), 0 where x = 0 and y <= 0 (PyTorch's rule);
         gy = unbroadcast(g * x / y, y.shape)"""

    @staticmethod
    def forward(ctx, x, y):
        return _on_data(_xlogy, x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.inputs
        gx = gy = None
        if ctx.needs_input_grad[0]:
            dropped = Tensor._make(np.asarray((raw(x) == 0) & (raw(y) <= 0)))
            gx = unbroadcast(where(dropped, 0.0, Xlogy.apply(g, y)), raw(x).shape)
        if ctx.needs_input_grad[1]:
            gy = unbroadcast(g * x / y, raw(y).shape)
        return gx, gy


# ---- the public functions ------------------------------------------------------------------------

def _binary(cls: type[Function], name: str) -> Callable[[TensorOrNumber, TensorOrNumber], Tensor]:
    prepare = prepare_division if cls is Div else prepare_operands  # (`sub` checks its bools first itself)

    def fn(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
        return apply_elementwise(cls, name, *prepare(operand(input, name), operand(other, name)))

    fn.__name__ = name
    return with_formulas(cls)(fn)


_add = _binary(Add, "add")


@with_formulas(Add)
def add(input: TensorOrNumber, other: TensorOrNumber, *, alpha: Number = 1) -> Tensor:
    """input + alpha * other (alpha != 1 multiplies other first: a Mul node before the Add)"""
    input, other = _bfloat16_addend(input, other)
    return _add(input, _scaled("add", input, other, alpha))


_sub = _binary(Sub, "sub")


@with_formulas(Sub)
def sub(input: TensorOrNumber, other: TensorOrNumber, *, alpha: Number = 1) -> Tensor:
    """input - alpha * other (alpha != 1 multiplies other first: a Mul node before the Sub)"""
    check_subtraction(input, other)
    input, other = _bfloat16_addend(input, other)
    return _sub(input, _scaled("sub", input, other, alpha))


mul = _binary(Mul, "mul")
_div = _binary(Div, "div")


@with_formulas(Div, RoundedDiv)
def div(input: TensorOrNumber, other: TensorOrNumber, *, rounding_mode: str | None = None) -> Tensor:
    """input / other; rounding_mode='trunc' rounds the quotient toward zero, 'floor' down."""
    if rounding_mode is None:
        return _div(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div: expected rounding_mode to be one of None, 'trunc' or 'floor', got {rounding_mode!r}")
    return _rounded("div" if rounding_mode == "trunc" else "floor_divide", RoundedDiv, input, other, rounding_mode)


@with_formulas(Div)
def true_divide(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """input / other: `div` without a rounding mode (PyTorch's true_divide takes none)."""
    return div(input, other)


@with_formulas(Maximum)
def maximum(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """The elementwise larger of input and other (two tensors of different dtypes are compared in their
    promoted dtype, as PyTorch compares them)."""
    a, b = prepare_operands(operand(input, "maximum"), operand(other, "maximum"))
    return apply_elementwise(Maximum, "maximum", a, b)


@with_formulas(Minimum)
def minimum(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """The elementwise smaller of input and other (compared in the promoted dtype, as `maximum`)."""
    a, b = prepare_operands(operand(input, "minimum"), operand(other, "minimum"))
    return apply_elementwise(Minimum, "minimum", a, b)


@with_formulas(Pow)
def pow(input: TensorOrNumber, exponent: TensorOrNumber) -> Tensor:
    """input ** exponent (either may be a number)."""
    input, exponent = operand(input, "pow"), operand(exponent, "pow")
    check_power(input, exponent)
    return apply_elementwise(Pow, "pow", input, exponent)


@with_formulas(RoundedDiv)
def floor_divide(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """floor(input / other), what `input // other` computes (integer tensors stay integer)."""
    return _rounded("floor_divide", RoundedDiv, input, other, "floor")


@with_formulas(Remainder)
def remainder(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """input - other * floor(input / other): the sign of other, as Python's `%`."""
    return _rounded("remainder", Remainder, input, other)


@with_formulas(Fmod)
def fmod(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """input - other * trunc(input / other): the sign of input, as C's fmod."""
    return _rounded("fmod", Fmod, input, other)


def _rounded(name: str, op: type[Function], input: TensorOrNumber, other: TensorOrNumber, *mode: str) -> Tensor:
    """op applied to the two operands after PyTorch's checks of a rounded division (`_check_rounding`)."""
    a, b = operand(input, name), operand(other, name)
    _check_rounding(name, a, b)
    return op.apply(a, b, *mode)


@with_formulas(Lerp)
def lerp(input: Tensor, end: Tensor, weight: TensorOrNumber) -> Tensor:
    """input + weight * (end - input); end, and a weight tensor, must have input's floating dtype (as in PyTorch)."""
    float_only(tensor_input(input, "lerp"), "lerp")
    tensor_input(end, "lerp", "end")
    for name, t in (("end", end), ("weight", weight)):  # (a 0-d weight counts as a number)
        if isinstance(t, Tensor) and t.dtype != input.dtype and (name == "end" or t.ndim):
            raise RuntimeError(f"lerp: expected dtype {input.dtype} for `{name}` but got dtype {t.dtype}")
    if isinstance(weight, Tensor) and weight.dtype != input.dtype:
        weight = cast(weight, input._array.dtype)
    broadcast_shapes("lerp", input.shape, end.shape, *((weight.shape,) if isinstance(weight, Tensor) else ()))
    return Lerp.apply(input, end, weight)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """input + value * tensor1 * tensor2 (for integer tensors value is read as an int: 0.5 is 0, as in PyTorch),
    composed of Mul and Add nodes on the operands converted to their promoted dtype and broadcast together.

    forward: out = x + v t1 t2
    VJP:     gx = unbroadcast(g);  gt1 = unbroadcast(v g t2);  gt2 = unbroadcast(v g t1)
    """
    want, (x, t1, t2) = _ternary_dtype("addcmul", input, tensor1, tensor2)
    return shown_as(x + (value if _dtype.kind(want) == "f" else int(value)) * t1 * t2, "AddcmulBackward0",
                    inputs=(input, tensor1, tensor2))


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """input + value * tensor1 / tensor2 (tensor1 and tensor2 not both integers, as PyTorch requires),
    composed of Mul, Div and Add nodes on the operands converted to their promoted dtype and broadcast together.

    forward: out = x + v t1 / t2
    VJP:     gx = unbroadcast(g);  gt1 = unbroadcast(v g / t2);  gt2 = unbroadcast(-v g t1 / t2^2)
    """
    if raw(tensor1).dtype.kind in "biu" and raw(tensor2).dtype.kind in "biu":
        raise RuntimeError("addcdiv: integer division with addcdiv is not supported; convert tensor1 or tensor2 "
                           "to a floating dtype")
    _, (x, t1, t2) = _ternary_dtype("addcdiv", input, tensor1, tensor2)
    return shown_as(x + value * t1 / t2, "AddcdivBackward0", inputs=(input, tensor1, tensor2))



# ---- issue 29's public functions ------------------------------------------------------------------

@with_formulas(Atan2)
def atan2(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """The angle of the point (other, input), elementwise (integers become the default float dtype)."""
    return Atan2.apply(*_float_operands("atan2", input, other))


@with_formulas(Hypot)
def hypot(input: Tensor, other: TensorOrNumber) -> Tensor:
    """sqrt(input^2 + other^2), elementwise (floats only, as PyTorch)."""
    return Hypot.apply(*_float_operands("hypot", input, other, floats_only=True))


@with_formulas(Logaddexp)
def logaddexp(input: Tensor, other: TensorOrNumber) -> Tensor:
    """ln(e^input + e^other) without overflow (floats only, as PyTorch)."""
    return Logaddexp.apply(*_float_operands("logaddexp", input, other, floats_only=True))


@with_formulas(Logaddexp2)
def logaddexp2(input: Tensor, other: TensorOrNumber) -> Tensor:
    """log2(2^input + 2^other) without overflow (floats only, as PyTorch)."""
    return Logaddexp2.apply(*_float_operands("logaddexp2", input, other, floats_only=True))


@with_formulas(Copysign)
def copysign(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """|input| with the sign of other, elementwise (integers become the default float dtype)."""
    return Copysign.apply(*_float_operands("copysign", input, other))


@with_formulas(Fmax)
def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise larger of input and other, a NaN losing to a number (compared in the promoted dtype)."""
    broadcast_shapes("fmax", tensor_input(input, "fmax").shape, tensor_input(other, "fmax", "other").shape)
    return Fmax.apply(*prepare_operands(input, other))


@with_formulas(Fmin)
def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise smaller of input and other, a NaN losing to a number (compared in the promoted dtype)."""
    broadcast_shapes("fmin", tensor_input(input, "fmin").shape, tensor_input(other, "fmin", "other").shape)
    return Fmin.apply(*prepare_operands(input, other))


@with_formulas(Xlogy)
def xlogy(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """input * ln(other), 0 where input is 0 (integers become the default float dtype)."""
    return Xlogy.apply(*_float_operands("xlogy", input, other))


def float_power(input: TensorOrNumber, exponent: TensorOrNumber) -> Tensor:
    """input ** exponent computed in float64, whatever the operands' dtypes: Cast nodes, then a Pow node.

    forward: out = x ** y   (in float64)
    VJP:     gx = g y x^(y-1);  gy = g out ln x   (Pow's, converted back to each input's dtype by Cast)
    """
    a, b = operand(input, "float_power"), operand(exponent, "float_power")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError("float_power: expected at least one Tensor operand")
    return pow(*(cast(t, _dtype.float64) if isinstance(t, Tensor) else float(t) for t in (a, b)))


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """input * 2^other (integers become the default float dtype): a Pow node and a Mul node.

    forward: out = x * 2^e
    VJP:     gx = g * 2^e;  ge = g * x * 2^e * ln 2
    """
    return tensor_input(input, "ldexp") * pow(2.0, tensor_input(other, "ldexp", "other"))


def rsub(input: TensorOrNumber, other: TensorOrNumber, *, alpha: Number = 1) -> Tensor:
    """other - alpha * input (sub with its operands swapped): Sub's formulas.

    forward: out = y - alpha x
    VJP:     gx = -alpha g;  gy = g
    """
    return sub(other, input, alpha=alpha)  # (a Python float next to bfloat16 is rounded there first)


def nextafter(input: Tensor, other: Tensor) -> Tensor:
    """The next float after input toward other, elementwise (floats only). No gradient: PyTorch
    defines none (its backward raises; here the result does not require grad)."""
    (a, b), _ = _float_operands("nextafter", input, other, floats_only=True, arrays=True)
    broadcast_shapes("nextafter", a.shape, b.shape)
    return Tensor._make(np.asarray(np.nextafter(a, b)))


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 where input < 0, `values` where input == 0, 1 where input > 0 (NaN stays
    NaN). input and values must have one dtype, as in PyTorch. No gradient: PyTorch defines none
    (its backward raises; here the result does not require grad)."""
    tensor_input(input, "heaviside")
    tensor_input(values, "heaviside", "values")
    if input.dtype != values.dtype:
        raise RuntimeError(f"heaviside: not implemented for tensors of different dtypes ({input.dtype} and "
                           f"{values.dtype}): convert one of them")
    broadcast_shapes("heaviside", input.shape, values.shape)
    x, v = input._array, values._array
    if x.dtype == _dtype.bool_:
        return Tensor._make(np.asarray(np.where(x, True, v)))
    return Tensor._make(np.asarray(np.heaviside(x, v).astype(x.dtype, copy=False)))


def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The greatest common divisor, elementwise (integers only; gcd(0, 0) = 0). No gradient."""
    a, b = _integer_operands("gcd", input, other)
    return Tensor._make(np.asarray(np.gcd(a, b)))


def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The least common multiple, elementwise (integers only; 0 where either is 0). No gradient."""
    a, b = _integer_operands("lcm", input, other)
    return Tensor._make(np.asarray(np.lcm(a, b)))


# ---- edge cases and dtype rules, named -----------------------------------------------------------

# inf - inf, inf * 0, overflow: NaN and inf, silently as in PyTorch
_add_arrays = quiet(np.add, "over", "invalid")
_subtract_arrays = quiet(np.subtract, "over", "invalid")
_multiply_arrays = quiet(np.multiply, "over", "invalid")
_maximum_arrays = quiet(np.maximum, "invalid")
_minimum_arrays = quiet(np.minimum, "invalid")


def prepare_addition(a, b):
    """`+`'s operands: as `prepare_operands`, with a Python float next to bfloat16 rounded as PyTorch does."""
    return prepare_operands(*_bfloat16_addend(a, b))


def prepare_subtraction(a, b):
    """`-`'s operands: PyTorch's refusals of bools first (`check_subtraction`), then as `prepare_addition`."""
    check_subtraction(a, b)
    return prepare_addition(a, b)


def _raise_to(a, b):
    """a ** b. A float array to the power 2, 3, -1 or -2 is multiplied out, and to the power 1/2 or
    -1/2 is a square root, as PyTorch computes those powers: the same numbers bit for bit (so
    (-inf) ** 0.5 is NaN, not C's inf), and ~30x faster than numpy's general pow (GELU's x^3)."""
    if (type(b) in (int, float) and b in (2, 3, -1, -2, 0.5, -0.5) and isinstance(a, np.ndarray)
            and _dtype.is_floating(a.dtype)):
        power = a * a if b in (2, -2) else a * a * a if b == 3 else np.sqrt(a) if b in (0.5, -0.5) else a
        return power if b > 0 else np.reciprocal(power)
    return np.power(a, b)


# Powers make inf and nan on purpose (0 ** -1, beyond the float range), as PyTorch does without a
# word; numpy would warn.
_float_power = quiet(_raise_to, "divide", "invalid", "over")


def _power(a, b):
    """a ** b computed as PyTorch computes a power of the result's dtype: a bool to a Python bool
    power is itself or all True; integers as `_integer_power`; a Python exponent that a float32
    would change (5e-324, 2^24 + 1) is applied in float64, as PyTorch reads it as a double."""
    want = _dtype.result_dtype(raw(a), raw(b))
    if want == _dtype.bool_:  # (`pow` let through only a Python bool exponent)
        return a._array if b else np.ones_like(a._array)
    if want.kind in "iu":
        return _integer_power(*in_common_dtype(a, b)[0])
    if type(b) in (int, float) and _exponent_changes(b, want):
        return _float_power(raw(a).astype(np.float64), b).astype(want)
    return _float_power(*in_common_dtype(a, b, dtype=want)[0])


def check_power(a, b):
    """PyTorch's refusals of a power: of bool tensors (a bool to a Python bool power is allowed), of
    integers to a negative Python integer power, of a Python exponent that doesn't fit the integer dtype."""
    if isinstance(a, Tensor) and _dtype.kind(a._array.dtype) == "f":
        return  # a float base: a float power, which PyTorch computes for any exponent
    want = _dtype.result_dtype(raw(a), raw(b))
    if want == _dtype.bool_ and type(b) is not bool:
        raise NotImplementedError("pow: not implemented for bool tensors (convert the base with .long() or .float())")
    if want.kind in "iu" and type(b) is int:  # a Python exponent must be a 64-bit int, not negative, and fit
        _dtype.wrapped_int(b, want)
        if b < 0:
            raise RuntimeError(f"pow: integers to negative integer powers are not allowed, got {b}")
        _dtype.scalar_to(b, want, "pow")


def _base_for_slope(a, b):
    """(base, b) for Pow's ga = b * base^(b - 1): a ** 0 has slope 0 everywhere, but b * a^(b - 1) is
    0 * inf at a = 0 or subnormal and 0 * NaN at a = NaN, so there the base becomes 1 (a Python False
    is no 0 to PyTorch's check: NaN stays); a bool exponent tensor is read in a's dtype (b - 1 of a
    bool is refused)."""
    base = a
    if isinstance(b, Tensor) and b._array.dtype == _dtype.bool_:
        b = cast(b, a.dtype)
    if isinstance(b, Tensor) or (b == 0 and type(b) is not bool):
        with np.errstate(divide="ignore", over="ignore"):
            ones = (raw(b) == 0) & ~np.isfinite(1 / a._array)
        if ones.any():  # so that b * base ** (b - 1) = 0 exactly
            base = where(Tensor._make(ones), 1.0, a)
    return base, b


def _log_of_base(a, b, dtype):
    """log(a) for Pow's gb = g * out * log(a), with a == 0 counted as log 0 = 0 where b >= 0
    (PyTorch's rule; elsewhere log 0 = -inf and the log of a negative a is NaN), in the gradient's
    dtype; `a` a tensor or a Python number."""
    if isinstance(a, Tensor):  # a replaced by 1 where it counts as 0 (an integer a in the gradient's precision)
        ones = (a._array == 0) & (b._array >= 0)
        return log(cast(a, dtype) + Tensor._make(ones.astype(dtype)))
    if a != 0:  # a number (math.log would raise for a negative one)
        return math.log(a) if a > 0 else math.nan
    return Tensor._make(np.where(b._array >= 0, 0.0, -np.inf).astype(dtype))


def _integer_power(a, b):
    """a ** b for integer arrays, as PyTorch: a negative exponent gives 1 / a^|b| rounded toward 0,
    which is 1 for a = 1, +-1 for a = -1 and 0 otherwise (numpy refuses negative powers)."""
    negative = b < 0
    if not np.any(negative):
        return np.power(a, b)
    out = np.power(a, np.where(negative, 0, b))
    odd = (b % 2).astype(bool)
    reciprocal = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, reciprocal, out).astype(out.dtype)


def _is_bool(x):
    return isinstance(x, bool) or (isinstance(x, Tensor) and x._array.dtype == _dtype.bool_)


def check_subtraction(a, b):
    """PyTorch refuses `-` with a bool operand (a mask is inverted with `~`, not `1 - mask` of bools)."""
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("sub: subtraction, the `-` operator, with two bool tensors is not supported; "
                           "use the `^` or `logical_xor()` operator instead")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("sub: subtraction, the `-` operator, with a bool tensor is not supported; to invert "
                           "a mask, use the `~` or `logical_not()` operator instead (or convert it with .long())")


@functools.lru_cache(maxsize=1024, typed=True)  # (typed: the int 2 and the float 2.0 are two exponents)
def _exponent_changes(v, dtype):
    """Whether Python exponent `v` changes as a power in float `dtype`: a float that becomes 0 or inf
    without being so (5e-324 or 1e39 in float32), an int that rounds (2^24 + 1 in float32: its parity
    decides the sign of (-1) ** v)."""
    with np.errstate(over="ignore"):
        kept = dtype.type(v)
    if type(v) is int:
        return not np.isfinite(kept) or int(kept) != v
    return (kept == 0) != (v == 0) or bool(np.isinf(kept)) != math.isinf(v)


def _extreme_vjp(ctx, g, a_loses, b_loses, tie):
    """Maximum's and Minimum's VJP: g to each input except where it loses, half of g on a tie."""
    a, b = ctx.inputs

    def share(loses, shape):
        return unbroadcast(g * Tensor._make(np.asarray(1.0 - loses - 0.5 * tie).astype(g.dtype)), shape)
    return (share(a_loses, a._array.shape) if ctx.needs_input_grad[0] else None,
            share(b_loses, b._array.shape) if ctx.needs_input_grad[1] else None)


def _scaled(op: str, input: TensorOrNumber, other: TensorOrNumber, alpha: Number) -> TensorOrNumber:
    """alpha * other, with PyTorch's checks of alpha against the result's dtype: no float alpha for
    an integer or bool result, no bool alpha for a number result; a bool result reads alpha as a bool."""
    if alpha == 1 and type(alpha) is int:
        return other
    other = operand(other, op)
    want = _dtype.result_dtype(raw(operand(input, op)), raw(other))
    if _dtype.kind(want) != "f" and isinstance(alpha, float):
        raise RuntimeError(f"{op}: for integral input tensors, argument alpha must not be a floating point number, "
                           f"got alpha={alpha}")
    if isinstance(alpha, bool) and want != _dtype.bool_:
        raise RuntimeError(f"{op}: a bool alpha is only supported for bool results, got alpha={alpha} for {want}")
    if isinstance(other, Tensor) and other.dtype != want:
        other = cast(other, want)  # scaled in the result's dtype: float32 + 2 * int64 max must not wrap
    if want == _dtype.bool_:  # alpha * other among bools: other itself, or all False
        return other if alpha else other & False  # type: ignore[operator]  # (a bool or a bool tensor here)
    return other * alpha


def _bfloat16_addend(a, b):
    """PyTorch rounds a Python float added to or subtracted from a bfloat16 tensor to bfloat16 first (a
    factor or divisor it keeps in float32): (a, b) with such a float so rounded, else as they were."""
    if not _dtype.has_bfloat16 or (type(a) is not float and type(b) is not float):
        return a, b

    def rounded(x, other):
        if type(x) is float and isinstance(other, Tensor) and other._array.dtype == _dtype.bfloat16:
            return float(np.asarray(x, dtype=np.float32).astype(_dtype.bfloat16))
        return x
    return rounded(a, b), rounded(b, a)


def _rounding_operands(a, b):
    """The operands' data in PyTorch's result dtype (integers stay integers), as `//`, `%` and fmod compute."""
    (x, y), want = in_common_dtype(a, b)
    with np.errstate(over="ignore"):  # a Python float beyond float32 is inf there, as in PyTorch
        return np.asarray(x, dtype=want), np.asarray(y, dtype=want)


def _check_rounding(op, a, b):
    """PyTorch's refusals of a rounded division: bool by bool, shapes that don't broadcast, and an
    integer division by zero (floats give inf and nan)."""
    x, y = _rounding_operands(a, b)
    if x.dtype == _dtype.bool_:
        raise NotImplementedError(f"{op}: not implemented for bool tensors (convert one of them with .long() or "
                                  ".float())")
    broadcast_shapes(op, x.shape, y.shape)
    if _dtype.kind(x.dtype) != "f" and not y.all() and np.broadcast(x, y).size:  # (an empty result divides nothing)
        raise RuntimeError(f"{op}: ZeroDivisionError (an integer tensor divided by zero)")


# A float divided by 0 gives inf or nan on purpose, as in PyTorch (integers are checked above).
_fmod = quiet(np.fmod, "divide", "invalid")  # C's remainder: the sign of the dividend
_floor_div = quiet(np.floor_divide, "divide", "invalid", "over")  # (and int64 min // -1 wraps, as in C)


def _trunc_div(x, y):
    if _dtype.kind(x.dtype) == "f":
        return np.trunc(x / y)
    return (x - np.fmod(x, y)) // y  # exact for integers: x - fmod(x, y) is a multiple of y


_trunc_div = quiet(_trunc_div, "divide", "invalid", "over")


def _ternary_dtype(op: str, *tensors: Tensor) -> tuple[DType, list[Tensor]]:
    """The operands' promoted dtype and the tensors converted to it and broadcast together (bool
    refused), as PyTorch's fused op computes every term at the result's shape (so an input whose
    terms all vanish in an empty result gets gradient 0, not 0 * inf from a term reduced first)."""
    want = _dtype.result_dtype(*(raw(t) for t in tensors))
    if want == _dtype.bool_:
        raise NotImplementedError(f"{op}: not implemented for bool tensors (convert them with .long() or .float())")
    shape = broadcast_shapes(op, *(t._array.shape for t in tensors))
    return want, [cast(t, want).expand(shape) for t in tensors]


def _binary_grads(ctx, ga, gb):
    """(ga, gb) each summed back to its input's shape, or None where the input needs no gradient."""
    a, b = ctx.inputs
    return (unbroadcast(ga, raw(a).shape) if ctx.needs_input_grad[0] else None,
            unbroadcast(gb, raw(b).shape) if ctx.needs_input_grad[1] else None)


def _exp_t(x):
    from .unary import exp  # (unary's exp on a Tensor: the VJP stays differentiable)
    return exp(x)


def _picked_vjp(ctx, g, a_wins):
    """Fmax's and Fmin's VJP: all of g to a where a wins, to b elsewhere."""
    wins = np.asarray(a_wins)
    return _binary_grads(ctx, g * Tensor._make(wins.astype(g.dtype)), g * Tensor._make((~wins).astype(g.dtype)))


@quietly("divide", "invalid", "over")
@quietly("over", "invalid")  # inf - inf, 0 * inf: NaN, silently as in PyTorch
def _on_data(fn, a, b):
    """fn on the two operands' data (their public function brought them to one dtype first)."""
    return np.asarray(fn(raw(a), raw(b)))


def _xlogy(x, y):
    return np.where((x == 0) & ~np.isnan(y), 0, x * np.log(y)).astype(np.result_type(x, y), copy=False)


def _float_operands(op, a, b, floats_only=False, arrays=False):
    """The operands of a float op: tensors converted to the promoted dtype, or the default float
    dtype if that is an integer or bool one (Cast nodes: gradients flow back in each input's dtype);
    numbers stay numbers. With `floats_only`, integer and bool operands are refused, as PyTorch's
    hypot and logaddexp refuse them. With `arrays`: (the two ndarrays, the dtype)."""
    a, b = operand(a, op), operand(b, op)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected at least one Tensor operand, got {type(a).__name__} and {type(b).__name__}")
    want = _dtype.result_dtype(raw(a), raw(b))
    if _dtype.kind(want) != "f":
        if floats_only:
            raise NotImplementedError(f"{op}: not implemented for {want} tensors (convert with .float())")
        want = _dtype.get_default_dtype()
    if arrays:
        return in_common_dtype(a, b, dtype=want)
    broadcast_shapes(op, np.shape(raw(a)), np.shape(raw(b)))
    return tuple(cast(t, want) if isinstance(t, Tensor) else t for t in (a, b))


def _integer_operands(op, a, b):
    """The two operands' data in their promoted integer dtype (floats and bools refused, as PyTorch)."""
    (x, y), want = in_common_dtype(operand(a, op), operand(b, op))
    if want.kind not in "iu":
        raise NotImplementedError(f"{op}: not implemented for {want} tensors (integers only)")
    broadcast_shapes(op, np.shape(x), np.shape(y))
    return x, y
