r"""Elementwise ops: arithmetic with broadcasting, and the unary math functions.

Notation in every docstring: `g` is the gradient flowing into the op's output, `out` is the
forward result, and `unbroadcast(·, a.shape)` sums a gradient back down to the shape of input `a`
(the adjoint of broadcasting). Each VJP is written with Tensor ops, so it can be differentiated
again (`create_graph=True`).
"""
from __future__ import annotations

import math
import numbers
from typing import Callable

import numpy as np

from .. import _dtype
from ..autograd.function import Function, with_formulas
from ..tensor import Tensor, check_device, device as device_type, tensor_method
from ._erf import erf as _np_erf
from .indexing import where
from .._fperr import divide as _divide, exp as _exp, log as _log, quiet, quietly
from ._util import (broadcast_shapes, float_only, in_common_dtype, operand, operator_method as _operator,
                    raw, tensor_input, unbroadcast)
from ..types import DeviceLike, DType, DTypeLike, Number, TensorOrNumber


@quietly("over", "invalid")  # inf - inf, inf * 0, overflow: NaN and inf, silently as in PyTorch
def _numpy_binary(name, fn, a, b, dtype=None):
    """fn on the operands' data, both converted to PyTorch's result dtype (or `dtype`) first, as
    PyTorch computes, with an error naming the shapes."""
    (x, y), _ = in_common_dtype(a, b, dtype=dtype)
    try:
        return np.asarray(fn(x, y))
    except ValueError:
        broadcast_shapes(name, np.shape(x), np.shape(y))
        raise


def _raise_to(a, b):
    """a ** b. A float array to the power 2, 3, -1 or -2 is multiplied out, and to the power 1/2 or
    -1/2 is a square root, as PyTorch computes those powers: the same numbers bit for bit (so
    (-inf) ** 0.5 is NaN, not C's inf), and ~30x faster than numpy's general pow (GELU's x^3)."""
    if type(b) in (int, float) and b in (2, 3, -1, -2, 0.5, -0.5) and isinstance(a, np.ndarray) and a.dtype.kind == "f":
        power = a * a if b in (2, -2) else a * a * a if b == 3 else np.sqrt(a) if b in (0.5, -0.5) else a
        return power if b > 0 else np.reciprocal(power)
    return np.power(a, b)


# Powers make inf and nan on purpose (0 ** -1, beyond the float range), as PyTorch does without a
# word; numpy would warn.
_power = quiet(_raise_to, "divide", "invalid", "over")


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


class Add(Function):
    r"""out = a + b
    VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(g, b.shape)"""

    saves_values = False  # only the shapes


    @staticmethod
    def forward(ctx, a, b):
        return _numpy_binary("add", np.add, a, b)

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
        _no_bool_subtraction(a, b)
        return _numpy_binary("sub", np.subtract, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return (unbroadcast(g, a._array.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-g, b._array.shape) if ctx.needs_input_grad[1] else None)


def _is_bool(x):
    return isinstance(x, bool) or (isinstance(x, Tensor) and x._array.dtype == _dtype.bool_)


def _no_bool_subtraction(a, b):
    """PyTorch refuses `-` with a bool operand (a mask is inverted with `~`, not `1 - mask` of bools)."""
    if _is_bool(a) and _is_bool(b):
        raise RuntimeError("sub: subtraction, the `-` operator, with two bool tensors is not supported; "
                           "use the `^` or `logical_xor()` operator instead")
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError("sub: subtraction, the `-` operator, with a bool tensor is not supported; to invert "
                           "a mask, use the `~` or `logical_not()` operator instead (or convert it with .long())")


class Mul(Function):
    r"""out = a * b
    VJP: ga = unbroadcast(g * b, a.shape);  gb = unbroadcast(g * a, b.shape)"""


    @staticmethod
    def forward(ctx, a, b):
        return _numpy_binary("mul", np.multiply, a, b)

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
        # integers divide as the default float dtype (1 / 2 is 0.5), converted to it first
        floats = _dtype.result_dtype(raw(a), raw(b)).kind == "f"
        return _numpy_binary("div", _divide, a, b, None if floats else _dtype.get_default_dtype())

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
        want = _dtype.result_dtype(raw(a), raw(b))
        if want == _dtype.bool_:
            if type(b) is bool:  # a bool tensor to a Python bool power: x ** True = x, x ** False = True
                return a._array if b else np.ones_like(a._array)
            raise RuntimeError("pow: not implemented for bool tensors (convert the base with .long() or .float())")
        if want.kind in "iu":
            if type(b) is int:  # a Python exponent must be a 64-bit int, not negative, and fit the dtype
                _dtype.wrapped_int(b, want)
                if b < 0:
                    raise RuntimeError(f"pow: integers to negative integer powers are not allowed, got {b}")
                _dtype.scalar_to(b, want, "pow")
            return _numpy_binary("pow", _integer_power, a, b)
        if type(b) in (int, float) and _exponent_changes(b, want):
            # PyTorch reads a Python exponent as a double: 5e-324 is not 0 even for float32 (0 ** 5e-324 = 0)
            return _power(raw(a).astype(np.float64), b).astype(want)
        return _numpy_binary("pow", _power, a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        ga = gb = None
        if ctx.needs_input_grad[0]:
            base = a
            if isinstance(b, Tensor) and b._array.dtype == _dtype.bool_:
                b = cast(b, a.dtype)  # (b - 1 of a bool is refused)
            # a ** 0 has slope 0 everywhere, but b * a ** (b - 1) is 0 * inf at a = 0 or subnormal, 0 * NaN
            # at a = NaN: there the base becomes 1 (a Python False is no 0 to PyTorch's check: NaN stays)
            if isinstance(b, Tensor) or (b == 0 and type(b) is not bool):
                with np.errstate(divide="ignore", over="ignore"):
                    ones = (raw(b) == 0) & ~np.isfinite(1 / a._array)
                if ones.any():  # so that b * base ** (b - 1) = 0 exactly
                    base = where(Tensor._make(ones), 1.0, a)
            ga = unbroadcast(g * (b * base ** (b - 1)), a._array.shape)  # (b a^(b-1) first, as PyTorch: may overflow)
        if ctx.needs_input_grad[1]:
            out = ctx.output
            if isinstance(a, Tensor):  # log(a), with a replaced by 1 where it counts as 0
                ones = (a._array == 0) & (b._array >= 0)
                log_a = log(cast(a, g.dtype) + Tensor._make(ones.astype(g.dtype)))  # (an integer a in g's precision)
            elif a != 0:  # a number (math.log would raise for a negative one)
                log_a = math.log(a) if a > 0 else math.nan
            else:
                log_a = Tensor._make(np.where(b._array >= 0, 0.0, -np.inf).astype(g.dtype))
            gb = unbroadcast(g * out * log_a, b._array.shape)
        return ga, gb


def _exponent_changes(v, dtype):
    """Whether Python exponent `v` changes as a power in float `dtype`: a float that becomes 0 or inf
    without being so (5e-324 or 1e39 in float32), an int that rounds (2^24 + 1 in float32: its parity
    decides the sign of (-1) ** v)."""
    with np.errstate(over="ignore"):
        kept = dtype.type(v)
    if type(v) is int:
        return not np.isfinite(kept) or int(kept) != v
    return (kept == 0) != (v == 0) or bool(np.isinf(kept)) != math.isinf(v)


class Maximum(Function):
    r"""out = max(a, b) elementwise
    VJP: ga = unbroadcast(g * wa, a.shape);  gb = unbroadcast(g * wb, b.shape),
         wa = 0 if a < b, 1/2 if a == b (a tie splits the gradient), 1 otherwise;  wb likewise with a > b
         (so where a or b is NaN, out is NaN and both get g, as in PyTorch)"""


    @staticmethod
    def forward(ctx, a, b):
        return _numpy_binary("maximum", np.maximum, a, b)

    @staticmethod
    def backward(ctx, g):
        (x, y), _ = in_common_dtype(*ctx.inputs)  # compared as forward compared them
        return _extreme_vjp(ctx, g, x < y, x > y, x == y)


def _extreme_vjp(ctx, g, a_loses, b_loses, tie):
    """Maximum's and Minimum's VJP: g to each input except where it loses, half of g on a tie."""
    a, b = ctx.inputs

    def share(loses, shape):
        return unbroadcast(g * Tensor._make(np.asarray(1.0 - loses - 0.5 * tie).astype(g.dtype)), shape)
    return (share(a_loses, a._array.shape) if ctx.needs_input_grad[0] else None,
            share(b_loses, b._array.shape) if ctx.needs_input_grad[1] else None)


class Minimum(Function):
    r"""out = min(a, b) elementwise
    VJP: ga = unbroadcast(g * wa, a.shape);  gb = unbroadcast(g * wb, b.shape),
         wa = 0 if a > b, 1/2 if a == b, 1 otherwise;  wb likewise with a < b (both get g at a NaN)"""


    @staticmethod
    def forward(ctx, a, b):
        return _numpy_binary("minimum", np.minimum, a, b)

    @staticmethod
    def backward(ctx, g):
        (x, y), _ = in_common_dtype(*ctx.inputs)
        return _extreme_vjp(ctx, g, x > y, x < y, x == y)


def _binary(cls: type[Function], name: str) -> Callable[[TensorOrNumber, TensorOrNumber], Tensor]:
    def fn(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
        return cls.apply(operand(input, name), operand(other, name))

    fn.__name__ = name
    return with_formulas(cls)(fn)


_add = _binary(Add, "add")


@tensor_method()
@with_formulas(Add)
def add(input: TensorOrNumber, other: TensorOrNumber, alpha: Number = 1) -> Tensor:
    """input + alpha * other (alpha != 1 multiplies other first: a Mul node before the Add)"""
    return _add(input, _scaled("add", input, other, alpha))


_sub = _binary(Sub, "sub")


@tensor_method()
@with_formulas(Sub)
def sub(input: TensorOrNumber, other: TensorOrNumber, alpha: Number = 1) -> Tensor:
    """input - alpha * other (alpha != 1 multiplies other first: a Mul node before the Sub)"""
    _no_bool_subtraction(input, other)
    return _sub(input, _scaled("sub", input, other, alpha))


def _scaled(op: str, input: TensorOrNumber, other: TensorOrNumber, alpha: Number) -> TensorOrNumber:
    """alpha * other, with PyTorch's checks of alpha against the result's dtype: no float alpha for
    an integer or bool result, no bool alpha for a number result; a bool result reads alpha as a bool."""
    if alpha == 1 and type(alpha) is int:
        return other
    other = operand(other, op)
    want = _dtype.result_dtype(raw(operand(input, op)), raw(other))
    if want.kind != "f" and isinstance(alpha, float):
        raise RuntimeError(f"{op}: for integral input tensors, argument alpha must not be a floating point number, "
                           f"got alpha={alpha}")
    if isinstance(alpha, bool) and want != _dtype.bool_:
        raise RuntimeError(f"{op}: a bool alpha is only supported for bool results, got alpha={alpha} for {want}")
    if isinstance(other, Tensor) and other.dtype != want:
        other = cast(other, want)  # scaled in the result's dtype: float32 + 2 * int64 max must not wrap
    if want == _dtype.bool_:  # alpha * other among bools: other itself, or all False
        return other if alpha else other & False  # type: ignore[operator]  # (a bool or a bool tensor here)
    return other * alpha


mul = tensor_method()(_binary(Mul, "mul"))
_div = _binary(Div, "div")


@tensor_method()
@with_formulas(Div)  # and RoundedDiv's, below where it is defined
def div(input: TensorOrNumber, other: TensorOrNumber, *, rounding_mode: str | None = None) -> Tensor:
    """input / other; rounding_mode='trunc' rounds the quotient toward zero, 'floor' down."""
    if rounding_mode is None:
        return _div(input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div: expected rounding_mode to be one of None, 'trunc' or 'floor', got {rounding_mode!r}")
    return RoundedDiv.apply(operand(input, "div"), operand(other, "div"), rounding_mode)


maximum = tensor_method()(_binary(Maximum, "maximum"))
minimum = tensor_method()(_binary(Minimum, "minimum"))
subtract, multiply, divide, true_divide = sub, mul, div, div
tensor_method("subtract")(sub)
tensor_method("multiply")(mul)
tensor_method("divide", "true_divide")(div)


@tensor_method()
@with_formulas(Pow)
def pow(input: TensorOrNumber, exponent: TensorOrNumber) -> Tensor:
    """input ** exponent (either may be a number)."""
    return Pow.apply(operand(input, "pow"), operand(exponent, "pow"))


Tensor.__add__, Tensor.__radd__ = _operator(Add, "add"), _operator(Add, "add", reflected=True)
Tensor.__sub__, Tensor.__rsub__ = _operator(Sub, "sub"), _operator(Sub, "sub", reflected=True)
Tensor.__mul__, Tensor.__rmul__ = _operator(Mul, "mul"), _operator(Mul, "mul", reflected=True)
Tensor.__truediv__, Tensor.__rtruediv__ = _operator(Div, "div"), _operator(Div, "div", reflected=True)
Tensor.__pow__, Tensor.__rpow__ = _operator(Pow, "pow"), _operator(Pow, "pow", reflected=True)


# ---- unary ops ----------------------------------------------------------------------------------

# sqrt of negatives gives nan, 1/sqrt(0) inf: on purpose, as in PyTorch.
_sqrt = quiet(np.sqrt, "invalid")
# sin and cos of +-inf are NaN, as in PyTorch.
_sin, _cos = quiet(np.sin, "invalid"), quiet(np.cos, "invalid")
_rsqrt = quiet(lambda a: 1 / np.sqrt(a), "divide", "invalid")


# e^-x overflows to inf for x << 0, and 1 / (1 + inf) = 0 is the right limit: no nan either way
_sigmoid = quiet(lambda a: 1 / (1 + np.exp(-a)), "over")


def _relu(a):
    if a.dtype == _dtype.bool_:
        raise RuntimeError("relu: bool inputs are not supported (convert with .float())")
    return np.maximum(a, 0).astype(a.dtype, copy=False)


def _sign(a):
    """np.sign with 0 at NaN, as PyTorch's sign (numpy's is NaN there); a bool is its own sign."""
    if a.dtype == _dtype.bool_:
        return a.copy()
    return np.where(np.isnan(a), 0, np.sign(a)).astype(a.dtype) if a.dtype.kind == "f" else np.sign(a)


class Neg(Function):
    r"""out = -x;   VJP: gx = -g"""

    saves_values = False


    @staticmethod
    def forward(ctx, x):
        if x._array.dtype == _dtype.bool_:
            raise RuntimeError("neg: negation, the `-` operator, on a bool tensor is not supported; to invert "
                               "a mask, use the `~` or `logical_not()` operator instead")
        return np.negative(x._array)

    @staticmethod
    def backward(ctx, g):
        return -g


class Abs(Function):
    r"""out = |x|;   VJP: gx = g * sign(x)   (0 at x = 0 and at NaN, as PyTorch)"""


    @staticmethod
    def forward(ctx, x):
        if x._array.dtype == _dtype.bool_:
            raise RuntimeError("abs: not implemented for bool tensors (convert with .long() or .float())")
        return np.abs(x._array)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.inputs
        return g * Tensor._make(_sign(x._array))


class Exp(Function):
    r"""out = e^x;   VJP: gx = g * out"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "exp")
        return _exp(x._array)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.output


class Log(Function):
    r"""out = ln x;   VJP: gx = g / x"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "log")
        return _log(x._array)

    @staticmethod
    def backward(ctx, g):
        return g / ctx.inputs[0]


class Sqrt(Function):
    r"""out = sqrt(x);   VJP: gx = g / (2 out)   (infinite at x = 0: sqrt has no slope there)"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "sqrt")
        return _sqrt(x._array)

    @staticmethod
    def backward(ctx, g):
        return g / (2 * ctx.output)  # Div is quiet about the 1/0 at x = 0


class Rsqrt(Function):
    r"""out = 1 / sqrt(x);   VJP: gx = -g * out^3 / 2"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "rsqrt")
        return _rsqrt(x._array)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return -0.5 * g * out * out * out


class Sin(Function):
    r"""out = sin x;   VJP: gx = g * cos x"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "sin")
        return _sin(x._array)

    @staticmethod
    def backward(ctx, g):
        return g * cos(ctx.inputs[0])


class Cos(Function):
    r"""out = cos x;   VJP: gx = -g * sin x"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "cos")
        return _cos(x._array)

    @staticmethod
    def backward(ctx, g):
        return -g * sin(ctx.inputs[0])


class Tanh(Function):
    r"""out = tanh x;   VJP: gx = g * (1 - out^2)"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "tanh")
        return np.tanh(x._array)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return g * (1 - out * out)


class Sigmoid(Function):
    r"""out = 1 / (1 + e^-x)   (e^-x = inf for x << 0 gives the limit 0);   VJP: gx = g * out * (1 - out)"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "sigmoid")
        return _sigmoid(x._array)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return g * out * (1 - out)


class Relu(Function):
    r"""out = max(x, 0);   VJP: gx = g * [not x <= 0]   (0 at x = 0; g at x = NaN, as PyTorch)"""


    @staticmethod
    def forward(ctx, x):
        return _relu(x._array)

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make((~(ctx.inputs[0]._array <= 0)).astype(g.dtype))


class Erf(Function):
    r"""out = erf x = 2/sqrt(pi) \int_0^x e^{-t^2} dt;   VJP: gx = g * 2/sqrt(pi) * e^{-x^2}"""


    @staticmethod
    def forward(ctx, x):
        float_only(x, "erf")
        return _np_erf(x._array)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g * (2 / math.sqrt(math.pi)) * exp(-x * x)


class Gelu(Function):
    r"""out = x * Phi(x), Phi the standard normal CDF: Phi(x) = (1 + erf(x / sqrt 2)) / 2
    approximate='tanh':  out = x/2 * (1 + tanh u) = x * s,  s = sigmoid(2u) = 1 / (1 + e^{-2u}),
                         u = sqrt(2/pi) * (x + 0.044715 x^3)
    VJP: gx = g * (Phi(x) + x * phi(x)),  phi(x) = e^{-x^2/2} / sqrt(2 pi)
         tanh: gx = g * (s + 2 x s (1 - s) sqrt(2/pi) (1 + 3 * 0.044715 x^2))
               (= g * (1/2 (1 + tanh u) + x/2 (1 - tanh^2 u) du/dx), with 1 + tanh u = 2s, 1 - tanh^2 u = 4s(1 - s))"""

    @staticmethod
    @quietly("over", "invalid")  # overflow (x^3) and inf * 0 at x = -inf: inf and NaN, silently as in PyTorch
    def forward(ctx, x, approximate):
        float_only(x, "gelu")
        return x._array * gelu_cdf(x._array, approximate)

    @staticmethod
    def backward(ctx, g):
        x, approximate = ctx.inputs
        return g * _gelu_slope(x, approximate, tanh, erf, exp), None


@quietly("over", "invalid")
def gelu_cdf(a, approximate):
    """The factor of GELU, gelu(a) = a * gelu_cdf(a), on an array: Phi(a), or sigmoid(2u) for 'tanh'."""
    if approximate == "tanh":
        u = math.sqrt(2 / math.pi) * (a + 0.044715 * a * a * a)
        step = 1 / (1 + np.exp(-2 * u))  # = (1 + tanh u) / 2, without 1 + tanh u cancelling for u << 0
    else:
        step = 0.5 * (1 + _np_erf(a * (1 / math.sqrt(2))))
    return np.asarray(step)


def _gelu_slope(x, approximate, tanh, erf, exp):
    """d gelu / dx, the formula of Gelu's VJP, for an ndarray (numpy's functions) or a Tensor (ours)."""
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = tanh(k * (x + 0.044715 * x * x * x))
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    cdf = 0.5 * (1 + erf(x * (1 / math.sqrt(2))))
    return cdf + x * exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))


class Clamp(Function):
    r"""out = min(max(x, lo), hi)   (either bound may be None, a number or a tensor; lo > hi gives hi)
    VJP: gx  = unbroadcast(g * [lo <= x <= hi], x.shape)   (a bound's own value passes g to x, as PyTorch)
         glo = unbroadcast(g * [x < lo and lo < hi], lo.shape)
         ghi = unbroadcast(g * [x > hi or hi < lo], hi.shape)"""

    @staticmethod
    def forward(ctx, x, lo, hi):
        if lo is None and hi is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
        xd, l, h = _clamp_operands(x, lo, hi)
        try:
            return np.clip(xd, l, h)
        except ValueError:
            broadcast_shapes("clamp", x.shape, *(np.shape(v) for v in (l, h) if v is not None))
            raise

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.inputs
        xd, l, h = _clamp_operands(x, lo, hi)

        def masked(m, shape):
            return unbroadcast(g * Tensor._make(np.asarray(m).astype(g.dtype)), shape)

        gx = glo = ghi = None
        if ctx.needs_input_grad[0]:
            keep = np.ones(xd.shape, dtype=bool)
            if l is not None:
                keep = keep & (xd >= l)
            if h is not None:
                keep = keep & (xd <= h)
            gx = masked(keep, x.shape)
        if ctx.needs_input_grad[1]:
            glo = masked((xd < l) & (l < h) if h is not None else xd < l, lo.shape)
        if ctx.needs_input_grad[2]:
            ghi = masked((xd > h) | (h < l) if l is not None else xd > h, hi.shape)
        return gx, glo, ghi


def _clamp_operands(x, lo, hi):
    """The data of x and of the bounds given, in PyTorch's result dtype of the three (as PyTorch
    compares them); a number bound must fit that dtype (an int8 tensor can't be clamped at 1000)."""
    want = _dtype.result_dtype(*(raw(v) for v in (x, lo, hi) if v is not None))
    one_tensor_bound = (lo is None) != (hi is None) and isinstance(hi if lo is None else lo, Tensor)
    if want == _dtype.bool_ and not one_tensor_bound:  # PyTorch clamps bools at one tensor bound only
        raise RuntimeError("clamp: not implemented for bool tensors with these bounds (convert with .long())")

    def converted(v):
        if v is None:
            return None
        if isinstance(v, Tensor):
            return v._array if v._array.dtype == want else v._array.astype(want)
        return _dtype.scalar_to(v, want, "clamp")
    return converted(x), converted(lo), converted(hi)


class Cast(Function):
    r"""out = x converted to `dtype`;   VJP: gx = g converted back to x's dtype (0 into integer inputs)"""

    saves_values = False

    @staticmethod
    def forward(ctx, x, dtype, copy):
        with np.errstate(over="ignore", invalid="ignore"):  # inf or NaN to an integer, 1e300 to float32:
            return x._array.astype(dtype, copy=copy)        # silently, as in PyTorch

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return cast(g, x.dtype, False), None, None


def cast(x: Tensor, dtype: DType, copy: bool = False) -> Tensor:
    if x.dtype == dtype and not copy:
        return x
    return Cast.apply(x, dtype, copy)


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


@tensor_method()
@with_formulas(Lerp)
def lerp(input: Tensor, end: Tensor, weight: TensorOrNumber) -> Tensor:
    """input + weight * (end - input); end, and a weight tensor, must have input's floating dtype (as in PyTorch)."""
    float_only(tensor_input(input, "lerp"), "lerp")
    tensor_input(end, "lerp", "end")
    for name, t in (("end", end), ("weight", weight)):  # (a 0-d weight counts as a number)
        if isinstance(t, Tensor) and t.dtype != input.dtype and (name == "end" or t.ndim):
            raise RuntimeError(f"lerp: expected dtype {input.dtype} for `{name}` but got dtype {t.dtype}")
    if isinstance(weight, Tensor) and weight.dtype != input.dtype:
        weight = cast(weight, input.dtype)
    return Lerp.apply(input, end, weight)


def _ternary_dtype(op: str, *tensors: Tensor) -> tuple[DType, list[Tensor]]:
    """The operands' promoted dtype and the tensors converted to it and broadcast together (bool
    refused), as PyTorch's fused op computes every term at the result's shape (so an input whose
    terms all vanish in an empty result gets gradient 0, not 0 * inf from a term reduced first)."""
    want = _dtype.result_dtype(*(raw(t) for t in tensors))
    if want == _dtype.bool_:
        raise RuntimeError(f"{op}: not implemented for bool tensors (convert them with .long() or .float())")
    shape = broadcast_shapes(op, *(t._array.shape for t in tensors))
    return want, [cast(t, want).expand(*shape) for t in tensors]


@tensor_method()
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    """input + value * tensor1 * tensor2 (for integer tensors value is read as an int: 0.5 is 0, as in PyTorch),
    composed of Mul and Add nodes on the operands converted to their promoted dtype and broadcast together.

    forward: out = x + v t1 t2
    VJP:     gx = unbroadcast(g);  gt1 = unbroadcast(v g t2);  gt2 = unbroadcast(v g t1)
    """
    want, (x, t1, t2) = _ternary_dtype("addcmul", input, tensor1, tensor2)
    return x + (value if want.kind == "f" else int(value)) * t1 * t2


@tensor_method()
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
    return x + value * t1 / t2


# ---- conversions: `.to(dtype)`, `.float()` ... (a Cast node, so gradients flow back in the input's dtype)
@tensor_method()
@with_formulas(Cast)
def to(self: Tensor, *args: DTypeLike | DeviceLike | Tensor, dtype: DTypeLike | None = None,
       device: DeviceLike | None = None, copy: bool = False, non_blocking: bool = False) -> Tensor:
    """`.to(dtype)`, `.to('cpu')`, `.to(other_tensor)`, `.to(device, dtype)` as in PyTorch."""
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, device_type)) and str(a).split(":")[0] in ("cpu", "cuda", "mps"):
            check_device(a, "to")
        else:
            dtype = a  # type: ignore[assignment]  # (a device's str is always one of those names)
    check_device(device, "to")
    if dtype is None:
        return clone(self) if copy else self
    return cast(self, _dtype.as_dtype(dtype, "to"), copy)


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


@tensor_method("type")
def _type(self: Tensor, dtype: DTypeLike | None = None) -> str | Tensor:
    if dtype is None:
        return f"minitensor.{_TYPE_NAMES[self.dtype.name]}Tensor"
    return self.to(dtype)


def _converter(name: str, dtype: DType) -> None:
    def convert(self: Tensor) -> Tensor:
        return self.to(dtype)

    convert.__name__ = name
    convert.__doc__ = f"self as a {dtype} tensor (the same tensor if it already is)"
    if dtype.kind == "f":  # a conversion to an integer or bool dtype passes no gradient back
        with_formulas(Cast)(convert)
    tensor_method(name)(convert)


for _name, _to in [("float", _dtype.float32), ("double", _dtype.float64), ("half", _dtype.float16),
                   ("long", _dtype.int64), ("int", _dtype.int32), ("short", _dtype.int16), ("char", _dtype.int8),
                   ("bool", _dtype.bool_), ("byte", _dtype.uint8)]:
    _converter(_name, _to)


@tensor_method()
@with_formulas(Cast)
def type_as(self: Tensor, other: Tensor) -> Tensor:
    """self converted to other's dtype (`self.to(other.dtype)`)."""
    return self.to(other.dtype)


def _unary(cls: type[Function], name: str, to_float: bool = False) -> Callable[[Tensor], Tensor]:
    """The public function of a unary op; with `to_float`, an integer or bool input is first cast to
    the default float dtype (PyTorch's promotion for exp, log, sin, ...)."""
    def fn(input: Tensor) -> Tensor:
        tensor_input(input, name)
        if to_float and input._array.dtype.kind in "biu":
            input = cast(input, _dtype.get_default_dtype())
        return cls.apply(input)

    fn.__name__ = name
    return tensor_method()(with_formulas(cls)(fn))


neg = _unary(Neg, "neg")
abs = _unary(Abs, "abs")
exp = _unary(Exp, "exp", to_float=True)
log = _unary(Log, "log", to_float=True)
sqrt = _unary(Sqrt, "sqrt", to_float=True)
rsqrt = _unary(Rsqrt, "rsqrt", to_float=True)
sin = _unary(Sin, "sin", to_float=True)
cos = _unary(Cos, "cos", to_float=True)
tanh = _unary(Tanh, "tanh", to_float=True)
sigmoid = _unary(Sigmoid, "sigmoid", to_float=True)
relu = _unary(Relu, "relu")
erf = _unary(Erf, "erf", to_float=True)
negative = tensor_method("negative")(neg)
Tensor.__neg__ = neg
Tensor.__abs__ = abs


@tensor_method()
def square(input: Tensor) -> Tensor:
    """input * input (one Mul node with x as both factors; a bool tensor squares to int64, as PyTorch's input ** 2).

    forward: out = x^2
    VJP:     gx = 2 x g   (the Mul node's two gradients, g * x each, add up in x)
    """
    if isinstance(input, Tensor) and input._array.dtype == _dtype.bool_:
        input = cast(input, _dtype.int64)
    return input * input


@tensor_method()
def reciprocal(input: Tensor) -> Tensor:
    """1 / input (a Div node with the number 1 as a).

    forward: out = 1 / x
    VJP:     gx = -g / x^2   (the Div node's gb with a = 1)
    """
    return 1 / input


@tensor_method()
@with_formulas(Gelu)
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU(x) = x * Phi(x); approximate='tanh' uses the tanh formula (GPT-2's)."""
    tensor_input(input, "gelu")
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return Gelu.apply(input, approximate)


@tensor_method("clamp", "clip")
@with_formulas(Clamp)
def clamp(input: Tensor, min: TensorOrNumber | None = None, max: TensorOrNumber | None = None) -> Tensor:
    """Limit every element to [min, max]."""
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, (Tensor, numbers.Number)):
            raise TypeError(f"clamp: {name} must be a number or a Tensor, got {type(bound).__name__} {bound!r}")
    return Clamp.apply(input, min, max)  # tensor bounds stay tensors: they get gradients too


clip = clamp


class Sign(Function):
    r"""out = sign(x): -1, 0 or 1, and 0 at NaN (as PyTorch);   VJP: gx = 0   (a step function)"""

    saves_values = False  # only x's shape

    @staticmethod
    def forward(ctx, x):
        return _sign(x._array)

    @staticmethod
    def backward(ctx, g):
        # zeros, not g * 0: an inf or NaN upstream gradient must not make NaN here
        return Tensor._make(np.zeros(ctx.inputs[0]._array.shape, g.dtype))


sign = _unary(Sign, "sign")


@tensor_method()
@with_formulas(Cast)
def clone(input: Tensor) -> Tensor:
    """A copy with its own memory; gradients flow through it unchanged."""
    return Cast.apply(input, input.dtype, True)


# ---- rounded division and remainders: `//`, `%`, fmod ------------------------------------------

def _rounding_operands(op, a, b):
    """The operands' data in PyTorch's result dtype (integers stay integers), checked for what
    PyTorch refuses: bool by bool, and an integer division by zero (floats give inf and nan)."""
    (x, y), want = in_common_dtype(a, b)
    if want == _dtype.bool_:
        raise RuntimeError(f"{op}: not implemented for bool tensors (convert one of them with .long() or .float())")
    with np.errstate(over="ignore"):  # a Python float beyond float32 is inf there, as in PyTorch
        x, y = np.asarray(x, dtype=want), np.asarray(y, dtype=want)
    broadcast_shapes(op, x.shape, y.shape)
    if want.kind != "f" and not y.all() and np.broadcast(x, y).size:  # (an empty result divides nothing)
        raise RuntimeError(f"{op}: ZeroDivisionError (an integer tensor divided by zero)")
    return x, y


# A float divided by 0 gives inf or nan on purpose, as in PyTorch (integers are checked above).
_fmod = quiet(np.fmod, "divide", "invalid")  # C's remainder: the sign of the dividend
_floor_div = quiet(np.floor_divide, "divide", "invalid", "over")  # (and int64 min // -1 wraps, as in C)


def _trunc_div(x, y):
    if x.dtype.kind == "f":
        return np.trunc(x / y)
    return (x - np.fmod(x, y)) // y  # exact for integers: x - fmod(x, y) is a multiple of y


_trunc_div = quiet(_trunc_div, "divide", "invalid", "over")


class RoundedDiv(Function):
    r"""out = trunc(a / b) (rounding_mode='trunc') or floor(a / b) ('floor', which is `a // b`)
    VJP: ga = 0;  gb = 0   (a step function: its slope is 0 wherever it has one, as in PyTorch)"""

    saves_values = False  # only the shapes

    @staticmethod
    def forward(ctx, a, b, mode):
        x, y = _rounding_operands("div" if mode == "trunc" else "floor_divide", a, b)
        return _trunc_div(x, y) if mode == "trunc" else _floor_div(x, y)

    @staticmethod
    def backward(ctx, g):
        a, b, _ = ctx.inputs
        return (Tensor._make(np.zeros(a.shape, g.dtype)) if ctx.needs_input_grad[0] else None,
                Tensor._make(np.zeros(b.shape, g.dtype)) if ctx.needs_input_grad[1] else None, None)


class Remainder(Function):
    r"""out = a - b * floor(a / b)   (the sign of b, as Python's %: -5 % 3 = 1, 5 % -3 = -1)
    VJP: ga = unbroadcast(g, a.shape);  gb = unbroadcast(-g * floor(a / b), b.shape)"""

    @staticmethod
    def forward(ctx, a, b):
        x, y = _rounding_operands("remainder", a, b)
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
        return _fmod(*_rounding_operands("fmod", a, b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return (unbroadcast(g, a.shape) if ctx.needs_input_grad[0] else None,
                unbroadcast(-g * RoundedDiv.apply(a, b, "trunc"), b.shape) if ctx.needs_input_grad[1] else None)


with_formulas(RoundedDiv)(div)  # div's rounding modes


@tensor_method()
@with_formulas(RoundedDiv)
def floor_divide(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """floor(input / other), what `input // other` computes (integer tensors stay integer)."""
    return RoundedDiv.apply(operand(input, "floor_divide"), operand(other, "floor_divide"), "floor")


remainder = tensor_method()(_binary(Remainder, "remainder"))
fmod = tensor_method()(_binary(Fmod, "fmod"))
Tensor.__floordiv__ = floor_divide
Tensor.__rfloordiv__ = lambda self, other: floor_divide(other, self)
Tensor.__mod__, Tensor.__rmod__ = _operator(Remainder, "remainder"), _operator(Remainder, "remainder", reflected=True)
