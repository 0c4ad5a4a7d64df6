r"""Unary math: neg, abs, exp, log, log1p, sqrt, rsqrt, sin, cos, tanh, sigmoid, relu, erf, gelu, sign, clamp.

Notation as in arithmetic.py: `g` is the gradient flowing into the op's output, `out` the forward
result. Each VJP is written with Tensor ops, so it can be differentiated again.

The ops first, then their public functions (an integer input of exp, log, sin ... becomes the
default float dtype there, as PyTorch promotes it), then the named edge cases.
"""

from __future__ import annotations

import builtins
import math
import numbers
from typing import Callable, NamedTuple

import numpy as np

from .. import _dtype
from .._fperr import exp as _exp, log as _log, quiet, quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..tensor import Tensor
from ..types import TensorOrNumber
from ._erf import erf as _np_erf
from ._half import computed_in_float32_for_half
from ._util import broadcast_shapes, float_kernel, raw, return_type, tensor_input, unbroadcast
from .conversion import cast, clone
from .indexing import where

# ---- the ops -------------------------------------------------------------------------------------

class Neg(Function):
    r"""out = -x;   VJP: gx = -g"""

    saves_values = False


    @staticmethod
    def forward(ctx, x):
        return np.negative(x._array)

    @staticmethod
    def backward(ctx, g):
        return -g


class Abs(Function):
    r"""out = |x|;   VJP: gx = g * sign(x)   (0 at x = 0 and at NaN, as PyTorch)"""


    @staticmethod
    def forward(ctx, x):
        return np.abs(x._array)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.inputs
        return g * Tensor._make(_sign(x._array))


class Exp(Function):
    r"""out = e^x;   VJP: gx = g * out"""


    @staticmethod
    def forward(ctx, x):
        return _exp(x._array)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.output


class Log(Function):
    r"""out = ln x;   VJP: gx = g / x"""


    @staticmethod
    def forward(ctx, x):
        return _log(x._array)

    @staticmethod
    def backward(ctx, g):
        return g / ctx.inputs[0]


class Log1p(Function):
    r"""out = ln(1 + x)   (accurate for small x, where 1 + x loses x's digits);   VJP: gx = g / (1 + x)"""

    @staticmethod
    def forward(ctx, x):
        return _log1p(x._array)

    @staticmethod
    def backward(ctx, g):
        return g / (1 + ctx.inputs[0])


class Sqrt(Function):
    r"""out = sqrt(x);   VJP: gx = g / (2 out)   (infinite at x = 0: sqrt has no slope there)"""


    @staticmethod
    def forward(ctx, x):
        return _sqrt(x._array)

    @staticmethod
    def backward(ctx, g):
        return g / (2 * ctx.output)  # Div is quiet about the 1/0 at x = 0


class Rsqrt(Function):
    r"""out = 1 / sqrt(x);   VJP: gx = -g * out^3 / 2"""


    @staticmethod
    def forward(ctx, x):
        return _rsqrt(x._array)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return -0.5 * g * out * out * out


class Sin(Function):
    r"""out = sin x;   VJP: gx = g * cos x"""


    @staticmethod
    def forward(ctx, x):
        return _sin(x._array)

    @staticmethod
    def backward(ctx, g):
        return g * cos(ctx.inputs[0])


class Cos(Function):
    r"""out = cos x;   VJP: gx = -g * sin x"""


    @staticmethod
    def forward(ctx, x):
        return _cos(x._array)

    @staticmethod
    def backward(ctx, g):
        return -g * sin(ctx.inputs[0])


class Tanh(Function):
    r"""out = tanh x;   VJP: gx = g * (1 - out^2)"""


    @staticmethod
    def forward(ctx, x):
        return np.tanh(x._array)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return g * (1 - out * out)


class Sigmoid(Function):
    r"""out = 1 / (1 + e^-x)   (e^-x = inf for x << 0 gives the limit 0);   VJP: gx = g * out * (1 - out)"""


    @staticmethod
    def forward(ctx, x):
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
        return g * Tensor._make((~(ctx.inputs[0]._array <= 0)).astype(g._array.dtype))


class Erf(Function):
    r"""out = erf x = 2/sqrt(pi) \int_0^x e^{-t^2} dt;   VJP: gx = g * 2/sqrt(pi) * e^{-x^2}"""


    @staticmethod
    def forward(ctx, x):
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
        return x._array * gelu_cdf(x._array, approximate)

    @staticmethod
    def backward(ctx, g):
        x, approximate = ctx.inputs
        return g * _gelu_slope(x, approximate, tanh, erf, exp), None


class Sign(Function):
    r"""out = sign(x): -1, 0 or 1, and 0 at NaN (as PyTorch);   VJP: gx = 0   (a step function)"""

    saves_values = False  # only x's shape

    @staticmethod
    def forward(ctx, x):
        return _sign(x._array)

    @staticmethod
    def backward(ctx, g):
        # zeros, not g * 0: an inf or NaN upstream gradient must not make NaN here
        return Tensor._make(np.zeros(ctx.inputs[0]._array.shape, g._array.dtype))


class Clamp(Function):
    r"""out = min(max(x, lo), hi)   (either bound may be None, a number or a tensor; lo > hi gives hi)
    VJP: gx  = unbroadcast(g * [lo <= x <= hi], x.shape)   (a bound's own value passes g to x, as PyTorch)
         glo = unbroadcast(g * [x < lo and lo < hi], lo.shape)
         ghi = unbroadcast(g * [x > hi or hi < lo], hi.shape)"""

    @staticmethod
    def forward(ctx, x, lo, hi):
        return np.clip(x._array, raw(lo), raw(hi))  # (one dtype: `clamp` converted the three)

    @staticmethod
    def backward(ctx, g):
        x, lo, hi = ctx.inputs
        to_x, to_lo, to_hi = _clamp_routes(x._array, raw(lo), raw(hi))

        def routed(where, shape):  # g where `where` holds, summed back to the input's shape
            return unbroadcast(g * Tensor._make(where.astype(g.dtype)), shape)
        need = ctx.needs_input_grad
        return (routed(to_x, x.shape) if need[0] else None,
                routed(to_lo, lo.shape) if need[1] else None,
                routed(to_hi, hi.shape) if need[2] else None)


# ---- trigonometric, hyperbolic, exponential and rounding ops (issue 29) ---------------------------

class Tan(Function):
    r"""out = tan x;   VJP: gx = g * (1 + out^2)"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.tan, x._array)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return g * (1 + out * out)


class Asin(Function):
    r"""out = arcsin x   (NaN outside [-1, 1]);   VJP: gx = g / sqrt(1 - x^2)"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.arcsin, x._array)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g * rsqrt(1 - x * x)


class Acos(Function):
    r"""out = arccos x   (NaN outside [-1, 1]);   VJP: gx = -g / sqrt(1 - x^2)"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.arccos, x._array)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return -g * rsqrt(1 - x * x)


class Atan(Function):
    r"""out = arctan x;   VJP: gx = g / (1 + x^2)"""

    @staticmethod
    def forward(ctx, x):
        return np.arctan(x._array)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g / (1 + x * x)


class Sinh(Function):
    r"""out = sinh x = (e^x - e^-x) / 2;   VJP: gx = g * cosh x"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.sinh, x._array)

    @staticmethod
    def backward(ctx, g):
        return g * cosh(ctx.inputs[0])


class Cosh(Function):
    r"""out = cosh x = (e^x + e^-x) / 2;   VJP: gx = g * sinh x"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.cosh, x._array)

    @staticmethod
    def backward(ctx, g):
        return g * sinh(ctx.inputs[0])


class Asinh(Function):
    r"""out = arsinh x = ln(x + sqrt(x^2 + 1));   VJP: gx = g / sqrt(x^2 + 1)"""

    @staticmethod
    def forward(ctx, x):
        return np.arcsinh(x._array)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g * rsqrt(x * x + 1)


class Acosh(Function):
    r"""out = arcosh x = ln(x + sqrt(x^2 - 1))   (NaN below 1);   VJP: gx = g / sqrt(x^2 - 1)"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.arccosh, x._array)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g * rsqrt(x * x - 1)


class Atanh(Function):
    r"""out = artanh x = ln((1 + x) / (1 - x)) / 2   (+-inf at +-1, NaN beyond);   VJP: gx = g / (1 - x^2)"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.arctanh, x._array)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g / (1 - x * x)


class Exp2(Function):
    r"""out = 2^x;   VJP: gx = g * out * ln 2"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.exp2, x._array)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.output * math.log(2)


class Expm1(Function):
    r"""out = e^x - 1   (accurate for small x, where e^x - 1 cancels);   VJP: gx = g * (out + 1)"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.expm1, x._array)

    @staticmethod
    def backward(ctx, g):
        return g * (ctx.output + 1)


class Log2(Function):
    r"""out = log2 x;   VJP: gx = g / (x ln 2)"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.log2, x._array)

    @staticmethod
    def backward(ctx, g):
        return g / (ctx.inputs[0] * math.log(2))


class Log10(Function):
    r"""out = log10 x;   VJP: gx = g / (x ln 10)"""

    @staticmethod
    def forward(ctx, x):
        return _quiet_ufunc(np.log10, x._array)

    @staticmethod
    def backward(ctx, g):
        return g / (ctx.inputs[0] * math.log(10))


class Round(Function):
    r"""out = floor x, ceil x, trunc x or round(x) (to the nearest, ties to even; with `decimals` d:
    round(x * 10^d) / 10^d), as `mode` says; integers stay as they are
    VJP: gx = 0   (a step function: its slope is 0 wherever it has one, as PyTorch)"""

    saves_values = False  # only x's shape

    @staticmethod
    def forward(ctx, x, mode, decimals):
        return _rounded(x._array, mode, decimals)

    @staticmethod
    def backward(ctx, g):
        return Tensor._make(np.zeros(ctx.inputs[0]._array.shape, g._array.dtype)), None, None


class Logit(Function):
    r"""out = ln(z / (1 - z)),  z = x, or clamp(x, eps, 1 - eps) when eps is given
    VJP: gx = g / (x (1 - x)): NaN outside [0, 1], and 0 outside [eps, 1 - eps] when eps is given (as PyTorch)"""

    @staticmethod
    @quietly("divide", "invalid")
    def forward(ctx, x, eps):
        z = x._array if eps is None else np.clip(x._array, eps, 1 - eps)
        return np.log(z / (1 - z))

    @staticmethod
    def backward(ctx, g):
        x, eps = ctx.inputs
        slope = g / (x * (1 - x))
        if eps is None:  # NaN outside [0, 1], where the log-odds are not real (as PyTorch)
            outside = (x._array < 0) | (x._array > 1)
            return slope + Tensor._make(np.where(outside, np.nan, 0).astype(g._array.dtype)), None
        inside = Tensor._make((x._array >= eps) & (x._array <= 1 - eps))
        return where(inside, slope, 0.0), None  # (not slope * 0: the slope is inf at 0 and 1)


class NanToNum(Function):
    r"""out = x, with NaN replaced by nan, +inf by posinf and -inf by neginf (by default 0 and x's dtype's extremes)
    VJP: gx = g * [x is finite]"""

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        return np.nan_to_num(x._array, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g * Tensor._make(np.isfinite(x._array).astype(g._array.dtype)), None, None, None


# ---- the public functions ------------------------------------------------------------------------

def _unary(cls: type[Function], name: str, to_float: bool = False, no_bool: str = "") -> Callable[[Tensor], Tensor]:
    """The public function of a unary op; with `to_float`, an integer or bool input is first cast to
    the default float dtype (PyTorch's promotion for exp, log, sin, ...); `no_bool`: the error
    PyTorch raises for a bool input."""
    def fn(input: Tensor) -> Tensor:
        tensor_input(input, name)
        if to_float and input._array.dtype.kind in "biu":
            input = cast(input, _dtype.get_default_dtype())
        elif no_bool and input._array.dtype == _dtype.bool_:
            raise (NotImplementedError if name == "abs" else RuntimeError)(f"{name}: {no_bool}")  # (PyTorch's classes)
        return cls.apply(input)

    fn.__name__ = name
    return with_formulas(cls)(fn)


neg = _unary(Neg, "neg", no_bool="negation, the `-` operator, on a bool tensor is not supported; to invert a mask, "
             "use the `~` or `logical_not()` operator instead")
abs = _unary(Abs, "abs", no_bool="not implemented for bool tensors (convert with .long() or .float())")
exp = _unary(Exp, "exp", to_float=True)
log = _unary(Log, "log", to_float=True)
log1p = _unary(Log1p, "log1p", to_float=True)
sqrt = _unary(Sqrt, "sqrt", to_float=True)
rsqrt = _unary(Rsqrt, "rsqrt", to_float=True)
sin = _unary(Sin, "sin", to_float=True)
cos = _unary(Cos, "cos", to_float=True)
tanh = _unary(Tanh, "tanh", to_float=True)
# (h-names29) a 16-bit sigmoid in float32, rounded once, its VJP too, as PyTorch's kernels: step by step in
# bfloat16, out * (1 - out) loses 1 - out's digits (its gradient was 2.4e-2 from float32's, PyTorch's 6e-3)
sigmoid = computed_in_float32_for_half(_unary(Sigmoid, "sigmoid", to_float=True))
relu = _unary(Relu, "relu", no_bool="bool inputs are not supported (convert with .float())")
erf = _unary(Erf, "erf", to_float=True)


sign = _unary(Sign, "sign")


def square(input: Tensor) -> Tensor:
    """input * input (one Mul node with x as both factors; a bool tensor squares to int64, as PyTorch's input ** 2).

    forward: out = x^2
    VJP:     gx = 2 x g   (the Mul node's two gradients, g * x each, add up in x)
    """
    if isinstance(input, Tensor) and input._array.dtype == _dtype.bool_:
        input = cast(input, _dtype.int64)
    return shown_as(input * input, "PowBackward0", inputs=(input,))  # PyTorch's square is x ** 2


def reciprocal(input: Tensor) -> Tensor:
    """1 / input (a Div node with the number 1 as a).

    forward: out = 1 / x
    VJP:     gx = -g / x^2   (the Div node's gb with a = 1)
    """
    return shown_as(1 / input, "ReciprocalBackward0", inputs=(input,))


@with_formulas(Gelu)
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU(x) = x * Phi(x); approximate='tanh' uses the tanh formula (GPT-2's)."""
    float_kernel(tensor_input(input, "gelu"), "gelu")  # (no integer kernel in PyTorch)
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return Gelu.apply(input, approximate)


@with_formulas(Clamp)
def clamp(input: Tensor, min: TensorOrNumber | None = None, max: TensorOrNumber | None = None) -> Tensor:
    """Limit every element to [min, max]."""
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, (Tensor, numbers.Number)):
            raise TypeError(f"clamp: {name} must be a number or a Tensor, got {type(bound).__name__} {bound!r}")
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    broadcast_shapes("clamp", input.shape, *(np.shape(raw(v)) for v in (min, max) if v is not None))
    return Clamp.apply(*_clamp_operands(input, min, max))  # tensor bounds stay tensors: they get gradients too



# ---- the public functions of issue 29's ops ---------------------------------------------------------

tan = _unary(Tan, "tan", to_float=True)
asin = _unary(Asin, "asin", to_float=True)
acos = _unary(Acos, "acos", to_float=True)
atan = _unary(Atan, "atan", to_float=True)
sinh = _unary(Sinh, "sinh", to_float=True)
cosh = _unary(Cosh, "cosh", to_float=True)
asinh = _unary(Asinh, "asinh", to_float=True)
acosh = _unary(Acosh, "acosh", to_float=True)
atanh = _unary(Atanh, "atanh", to_float=True)
exp2 = _unary(Exp2, "exp2", to_float=True)
expm1 = _unary(Expm1, "expm1", to_float=True)
log2 = _unary(Log2, "log2", to_float=True)
log10 = _unary(Log10, "log10", to_float=True)


def _rounding(mode: str, input: Tensor, decimals: int = 0) -> Tensor:
    """The Round node in `mode`, after PyTorch's checks: no bool input, no `decimals` for integers."""
    tensor_input(input, mode)
    kind = input._array.dtype.kind
    if kind == "b" or (kind in "iu" and decimals != 0):
        raise NotImplementedError(f"{mode}: not implemented for {input.dtype} tensors"
                                  + (" with decimals" if kind != "b" else "") + " (convert with .float())")
    return Round.apply(input, mode, decimals)


@with_formulas(Round)
def floor(input: Tensor) -> Tensor:
    """The largest integer <= x, elementwise (integer tensors stay as they are)."""
    return _rounding("floor", input)


@with_formulas(Round)
def ceil(input: Tensor) -> Tensor:
    """The smallest integer >= x, elementwise (integer tensors stay as they are)."""
    return _rounding("ceil", input)


@with_formulas(Round)
def trunc(input: Tensor) -> Tensor:
    """x rounded toward zero, elementwise (integer tensors stay as they are)."""
    return _rounding("trunc", input)


@with_formulas(Round)
def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    """x rounded to the nearest integer, ties to even (or to `decimals` decimal places; negative
    `decimals` round to tens, hundreds ...)."""
    return _rounding("round", input, decimals)


def frac(input: Tensor) -> Tensor:
    """The fractional part x - trunc(x), with x's sign (floats only, as PyTorch): a Sub of a Round node.

    forward: out = x - trunc(x)
    VJP:     gx = g   (trunc's slope is 0)
    """
    if _dtype.kind(tensor_input(input, "frac")._array.dtype) != "f":
        raise NotImplementedError(f"frac: not implemented for {input.dtype} tensors (convert with .float())")
    return input - trunc(input)


def positive(input: Tensor) -> Tensor:
    """input itself (`+x`); refused for bool tensors, as PyTorch.

    forward: out = x
    VJP:     gx = g   (the same tensor)
    """
    if tensor_input(input, "positive")._array.dtype == _dtype.bool_:
        raise RuntimeError("positive: the `+` operator on a bool tensor is not supported")
    return input


def deg2rad(input: Tensor) -> Tensor:
    """Degrees to radians, x * pi / 180 (integers become the default float dtype): a Mul node.

    forward: out = x * pi / 180
    VJP:     gx = g * pi / 180
    """
    return _to_float(tensor_input(input, "deg2rad")) * (math.pi / 180)


def rad2deg(input: Tensor) -> Tensor:
    """Radians to degrees, x * 180 / pi (integers become the default float dtype): a Mul node.

    forward: out = x * 180 / pi
    VJP:     gx = g * 180 / pi
    """
    return _to_float(tensor_input(input, "rad2deg")) * (180 / math.pi)


@with_formulas(Logit)
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """The log-odds ln(x / (1 - x)), the inverse of sigmoid; with `eps`, x is first clamped to
    [eps, 1 - eps] (so 0 and 1 give finite values)."""
    return Logit.apply(_to_float(tensor_input(input, "logit")), eps)


@with_formulas(NanToNum)
def nan_to_num(input: Tensor, nan: float | None = None, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """x with NaN, +inf and -inf replaced by finite numbers (integer and bool tensors are copied as they are)."""
    if _dtype.kind(tensor_input(input, "nan_to_num")._array.dtype) != "f":
        return clone(input)
    return NanToNum.apply(input, 0.0 if nan is None else nan, posinf, neginf)


@with_formulas(Clamp)
def clamp_min(input: Tensor, min: TensorOrNumber) -> Tensor:
    """clamp(input, min=min): every element at least `min` (hi = None in Clamp's formulas)."""
    return clamp(input, min=min)


@with_formulas(Clamp)
def clamp_max(input: Tensor, max: TensorOrNumber) -> Tensor:
    """clamp(input, max=max): every element at most `max` (lo = None in Clamp's formulas)."""
    return clamp(input, max=max)


class Frexp(NamedTuple):
    mantissa: Tensor
    exponent: Tensor


return_type(Frexp, "frexp")  # printed as PyTorch prints it


def frexp(input: Tensor) -> Frexp:
    """(mantissa, exponent) with input = mantissa * 2^exponent, |mantissa| in [1/2, 1) (0 for 0):
    floats only, the exponent int32, as PyTorch. No gradient (PyTorch defines none)."""
    if _dtype.kind(tensor_input(input, "frexp")._array.dtype) != "f":
        raise RuntimeError(f"frexp: only supports floating-point dtypes, got {input.dtype}")
    mantissa, exponent = np.frexp(input._array)
    return Frexp(Tensor._make(np.asarray(mantissa)), Tensor._make(np.asarray(exponent, dtype=np.int32)))


def _to_float(x: Tensor) -> Tensor:
    """An integer or bool tensor in the default float dtype (PyTorch's promotion of float ops)."""
    return cast(x, _dtype.get_default_dtype()) if x._array.dtype.kind in "biu" else x



# ---- edge cases, named ---------------------------------------------------------------------------


# log1p(-1) is -inf and log1p of x < -1 NaN, as in PyTorch, without numpy's warning
_log1p = quiet(np.log1p, "divide", "invalid")
# sqrt of negatives gives nan, 1/sqrt(0) inf: on purpose, as in PyTorch.
_sqrt = quiet(np.sqrt, "invalid")
# sin and cos of +-inf are NaN, as in PyTorch.
_sin, _cos = quiet(np.sin, "invalid"), quiet(np.cos, "invalid")
_rsqrt = quiet(lambda a: 1 / np.sqrt(a), "divide", "invalid")


# e^-x overflows to inf for x << 0, and 1 / (1 + inf) = 0 is the right limit: no nan either way
_sigmoid = quiet(lambda a: 1 / (1 + np.exp(-a)), "over")


def _relu(a):
    return np.maximum(a, 0).astype(a.dtype, copy=False)


def _sign(a):
    """np.sign with 0 at NaN, as PyTorch's sign (numpy's is NaN there); a bool is its own sign."""
    if a.dtype == _dtype.bool_:
        return a.copy()
    return np.where(np.isnan(a), 0, np.sign(a)).astype(a.dtype) if _dtype.kind(a.dtype) == "f" else np.sign(a)


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


def _clamp_operands(x, lo, hi):
    """x and the bounds given, in PyTorch's result dtype of the three, as PyTorch compares them (a
    tensor of another dtype by a Cast node, so its gradient flows back in its own dtype); a number
    bound must fit that dtype (an int8 tensor can't be clamped at 1000) and becomes the number that
    dtype holds (-1 is 255 for uint8)."""
    want = _dtype.result_dtype(*(raw(v) for v in (x, lo, hi) if v is not None))
    one_tensor_bound = (lo is None) != (hi is None) and isinstance(hi if lo is None else lo, Tensor)
    if want == _dtype.bool_ and not one_tensor_bound:  # PyTorch clamps bools at one tensor bound only
        raise RuntimeError("clamp: not implemented for bool tensors with these bounds (convert with .long())")

    def converted(v):
        if v is None or isinstance(v, Tensor):
            return v if v is None else cast(v, want)
        return _dtype.scalar_to(v, want, "clamp").item()
    return converted(x), converted(lo), converted(hi)


def _clamp_routes(x, lo, hi):
    """Where clamp's gradient goes, from the operands' data: to x where lo <= x <= hi (a bound's own
    value passes g to x, as PyTorch), to lo where x < lo < hi, to hi where x > hi or hi < lo (lo > hi
    gives hi). A bound that is None never wins."""
    to_x = np.ones(np.shape(x), dtype=bool)
    if lo is not None:
        to_x = to_x & (x >= lo)
    if hi is not None:
        to_x = to_x & (x <= hi)
    to_lo = None if lo is None else np.asarray((x < lo) & (lo < hi) if hi is not None else x < lo)
    to_hi = None if hi is None else np.asarray((x > hi) | (hi < lo) if lo is not None else x > hi)
    return np.asarray(to_x), to_lo, to_hi


def _quiet_ufunc(fn, a):
    """fn(a) without numpy's warnings: tan, arcsin, log2 ... make inf and NaN at their poles and
    outside their domains on purpose, as PyTorch does silently."""
    with np.errstate(all="ignore"):
        return fn(a)


@quietly("over", "invalid")
def _rounded(a, mode, decimals):
    """Round's forward on an ndarray: integers as they are; decimals scale by 10^|d| in a's dtype first."""
    if _dtype.kind(a.dtype) != "f":
        return a.copy()
    if mode != "round":
        return {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}[mode](a)
    if decimals == 0:
        return np.rint(a)
    if _dtype.computes_in_float32(a.dtype):  # (h-names29) PyTorch scales a 16-bit float in float32, rounds once
        return _rounded(a.astype(np.float32), mode, decimals).astype(a.dtype)
    scale = a.dtype.type(10.0 ** builtins.abs(decimals))
    return np.rint(a * scale) / scale if decimals > 0 else np.rint(a / scale) * scale
