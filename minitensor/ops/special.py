r"""Special functions: the error-function, gamma, Bessel and normal-distribution families of
`torch.special` (also `torch.erfc`, `torch.lgamma`, `torch.i0` ...).

Notation as in unary.py: `g` is the gradient flowing into the op's output, `out` the forward
result; each VJP is written with Tensor ops, so it can be differentiated again. The numbers come
from `_special.py` (float64 numpy implementations, described there), converted back to the input's
dtype; an integer or bool input becomes the default float dtype first, as PyTorch promotes it.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import _dtype
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..tensor import Tensor
from ..types import TensorOrNumber
from . import _special as K
from ._util import int_arg, unbroadcast
from .arithmetic import _binary_grads, _float_operands, _on_data
from .indexing import where
from .unary import _unary, exp, log, sign

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def _in_dtype_of(x, values):
    """`values` (float64) in the dtype of tensor x."""
    with np.errstate(over="ignore"):  # beyond float32's range is inf there, as PyTorch computes it
        return np.asarray(values).astype(x._array.dtype, copy=False).reshape(x._array.shape)


# ---- the ops -------------------------------------------------------------------------------------

class Erfc(Function):
    r"""out = erfc x = 1 - erf x   (accurate where erf x is near 1);   VJP: gx = -g * 2/sqrt(pi) * e^{-x^2}"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.erfc(x._array))

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return -g * _TWO_OVER_SQRT_PI * exp(-x * x)


class Erfinv(Function):
    r"""out = erfinv x, the y with erf y = x   (+-inf at +-1, NaN outside [-1, 1])
    VJP: gx = g * sqrt(pi)/2 * e^{out^2}"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.erfinv(x._array))

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return g * (math.sqrt(math.pi) / 2) * exp(out * out)


class Erfcx(Function):
    r"""out = e^{x^2} erfc x   (the scaled complementary error function: finite where e^{x^2} overflows)
    VJP: gx = g * (2 x out - 2/sqrt(pi))"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.erfcx(x._array))

    @staticmethod
    def backward(ctx, g):
        return g * (2 * ctx.inputs[0] * ctx.output - _TWO_OVER_SQRT_PI)


class Lgamma(Function):
    r"""out = ln |Gamma(x)|   (+inf at the poles 0, -1, -2, ...);   VJP: gx = g * digamma(x)"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.lgamma(x._array))

    @staticmethod
    def backward(ctx, g):
        return g * Digamma.apply(ctx.inputs[0])


class Digamma(Function):
    r"""out = digamma(x) = d/dx ln Gamma(x)   (-inf at +0, NaN at -1, -2, ...);   VJP: gx = g * polygamma(1, x)"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.digamma(x._array))

    @staticmethod
    def backward(ctx, g):
        return g * Polygamma.apply(ctx.inputs[0], 1)


class Polygamma(Function):
    r"""out = polygamma(n, x), the n-th derivative of digamma = (-1)^{n+1} n! zeta(n + 1, x) for n >= 1
    VJP: gx = g * polygamma(n + 1, x)"""

    @staticmethod
    def forward(ctx, x, n):
        return _in_dtype_of(x, K.polygamma(n, x._array))

    @staticmethod
    def backward(ctx, g):
        x, n = ctx.inputs
        return g * Polygamma.apply(x, n + 1), None


class I0(Function):
    r"""out = I0(x), the modified Bessel function of the first kind of order 0;   VJP: gx = g * I1(x)"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.bessel_i(0, x._array))

    @staticmethod
    def backward(ctx, g):
        return g * I1.apply(ctx.inputs[0])


class I1(Function):
    r"""out = I1(x), the modified Bessel function of the first kind of order 1
    VJP: gx = g * (I0(x) - I1(x) / x), and g / 2 at x = 0"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.bessel_i(1, x._array))

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        at_zero = Tensor._make(x._array == 0)
        return g * where(at_zero, 0.5, I0.apply(x) - ctx.output / where(at_zero, 1.0, x))


class I0e(Function):
    r"""out = e^{-|x|} I0(x)   (no overflow for large |x|);   VJP: gx = g * (i1e(x) - sign(x) * out)"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.bessel_i(0, x._array, scaled=True))

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g * (I1e.apply(x) - sign(x) * ctx.output)


class I1e(Function):
    r"""out = e^{-|x|} I1(x)
    VJP: gx = g * (i0e(x) - out * (sign(x) + 1 / x)), and g / 2 at x = 0"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.bessel_i(1, x._array, scaled=True))

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        at_zero = Tensor._make(x._array == 0)
        return g * where(at_zero, 0.5, I0e.apply(x) - ctx.output * (sign(x) + 1 / where(at_zero, 1.0, x)))


class LogNdtr(Function):
    r"""out = ln Phi(x), Phi the standard normal CDF   (accurate far in both tails)
    VJP: gx = g * phi(x) / Phi(x) = g * e^{-x^2/2 - out} / sqrt(2 pi)"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, K.log_ndtr(x._array))

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g * exp(-0.5 * x * x - ctx.output) * (1 / math.sqrt(2 * math.pi))


class Ndtri(Function):
    r"""out = Phi^{-1}(p), the standard normal quantile = -sqrt(2) erfcinv(2 p)   (-+inf at 0 and 1)
    VJP: gx = g * sqrt(2 pi) * e^{out^2 / 2}"""

    @staticmethod
    def forward(ctx, x):
        return _in_dtype_of(x, -math.sqrt(2) * K.erfcinv(2 * x._array.astype(np.float64)))

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return g * math.sqrt(2 * math.pi) * exp(0.5 * out * out)


class Sinc(Function):
    r"""out = sin(pi x) / (pi x), and 1 at x = 0;   VJP: gx = g * (cos(pi x) - out) / x, and 0 at x = 0"""

    @staticmethod
    @np.errstate(invalid="ignore", divide="ignore")
    def forward(ctx, x):
        a = x._array.astype(np.float64)
        return _in_dtype_of(x, np.where(a == 0, 1.0, np.sin(math.pi * a) / (math.pi * a)))

    @staticmethod
    def backward(ctx, g):
        from .unary import cos
        x = ctx.inputs[0]
        at_zero = Tensor._make(x._array == 0)
        return g * where(at_zero, 0.0, (cos(math.pi * x) - ctx.output) / where(at_zero, 1.0, x))


class Entr(Function):
    r"""out = -x ln x, 0 at x = 0 and -inf for x < 0   (the entropy of a probability);   VJP: gx = -g * (1 + ln x)"""

    @staticmethod
    @np.errstate(invalid="ignore", divide="ignore")
    def forward(ctx, x):
        a = x._array
        return np.where(a > 0, -a * np.log(np.where(a > 0, a, 1)), np.where(a == 0, 0, np.where(a < 0, -np.inf, a)))

    @staticmethod
    def backward(ctx, g):
        return -g * (1 + log(ctx.inputs[0]))


class Xlog1py(Function):
    r"""out = x * ln(1 + y), and 0 where x = 0 (unless y is NaN)
    VJP: gx = unbroadcast(xlog1py(g, y), x.shape), 0 where x = 0 and y <= -1 (PyTorch's rule);
         gy = unbroadcast(g * x / (1 + y), y.shape)"""

    @staticmethod
    def forward(ctx, x, y):
        return _on_data(_xlog1py, x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.inputs
        dropped = Tensor._make(np.asarray((_raw(x) == 0) & (_raw(y) <= -1)))
        return _binary_grads(ctx, where(dropped, 0.0, Xlog1py.apply(g, y)) if ctx.needs_input_grad[0] else None,
                             g * x / (1 + y) if ctx.needs_input_grad[1] else None)


class Zeta(Function):
    r"""out = zeta(x, q) = sum_{k >= 0} (q + k)^{-x}, the Hurwitz zeta function (NaN for x < 1)
    VJP: gq = unbroadcast(-g * x * zeta(x + 1, q), q.shape);  gx: not defined (PyTorch's backward refuses it too)"""

    @staticmethod
    def forward(ctx, x, q):
        return _on_data(_zeta_same_dtype, x, q)

    @staticmethod
    def backward(ctx, g):
        x, q = ctx.inputs
        if ctx.needs_input_grad[0]:
            raise RuntimeError("zeta: the derivative with respect to input (x) is not implemented, as in PyTorch")
        return _binary_grads(ctx, None, -g * x * Zeta.apply(x + 1, q))


class Igamma(Function):
    r"""out = P(a, x) = gamma(a, x) / Gamma(a), the regularized lower incomplete gamma function
    (with `upper`: Q(a, x) = 1 - P(a, x))
    VJP: gx = unbroadcast(+-g * x^{a-1} e^{-x} / Gamma(a), x.shape)   (- for Q);
         ga: not defined (PyTorch's backward refuses it too)"""

    @staticmethod
    def forward(ctx, a, x, upper):
        return _on_data(lambda u, v: _igamma_same_dtype(u, v, upper), a, x)

    @staticmethod
    def backward(ctx, g):
        a, x, upper = ctx.inputs
        if ctx.needs_input_grad[0]:
            raise RuntimeError(f"{'igammac' if upper else 'igamma'}: the derivative with respect to input (a) is "
                               "not implemented, as in PyTorch")
        if not ctx.needs_input_grad[1]:
            return None, None, None
        density = exp((a - 1) * log(x) - x - Lgamma.apply(a))
        return None, unbroadcast(-g * density if upper else g * density, x._array.shape), None


# ---- the public functions ------------------------------------------------------------------------

def _float_unary(cls, name):
    """unary.py's public function of a one-input float op, as a function of this module."""
    fn = _unary(cls, name, to_float=True)
    fn.__module__ = __name__
    return fn


erfc = _float_unary(Erfc, "erfc")
erfinv = _float_unary(Erfinv, "erfinv")
erfcx = _float_unary(Erfcx, "erfcx")
lgamma = _float_unary(Lgamma, "lgamma")
digamma = _float_unary(Digamma, "digamma")
i0 = _float_unary(I0, "i0")
i1 = _float_unary(I1, "i1")
i0e = _float_unary(I0e, "i0e")
i1e = _float_unary(I1e, "i1e")
log_ndtr = _float_unary(LogNdtr, "log_ndtr")
ndtri = _float_unary(Ndtri, "ndtri")
sinc = _float_unary(Sinc, "sinc")
entr = _float_unary(Entr, "entr")


@with_formulas(Polygamma)
def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of digamma at input (n = 0: digamma itself)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma: n must be an int, got {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"polygamma: polygamma(n, x) does not support negative n, got n = {n}")
    if n == 0:
        return digamma(input)
    return Polygamma.apply(_float(input, "polygamma"), n)


@with_formulas(Polygamma)
def polygamma_method(self: Tensor, n: int) -> Tensor:
    """`x.polygamma(n)`: polygamma(n, x) (the method takes n after the tensor, as PyTorch's)."""
    return polygamma(n, self)


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension p: a sum of Lgamma nodes (bool refused, as
    PyTorch; an element not above (p - 1) / 2 gives inf or NaN, as PyTorch 2.13 does without a check).

    forward: out = p (p - 1) / 4 * ln pi + sum_{i=0}^{p-1} lgamma(x - i / 2)
    VJP:     gx = g * sum_{i=0}^{p-1} digamma(x - i / 2)
    """
    if not isinstance(p, bool):  # (a bool p is PyTorch's RuntimeError below: its parser takes it as an int)
        p = int_arg(p, "mvlgamma", "p")
    if isinstance(p, bool) or p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p!r}")
    if _float(input, "mvlgamma")._array.dtype == np.bool_ or input._array.dtype == np.bool_:
        raise RuntimeError("mvlgamma: the input tensor may not be a boolean tensor")
    x = lgamma(input)  # (promotes integers)
    x_in = input if _dtype.kind(input._array.dtype) == "f" else input.to(x.dtype)
    total = x
    for i in range(1, p):
        total = total + lgamma(x_in - i / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF Phi(x) = erfc(-x / sqrt 2) / 2: an Erfc node (accurate in the lower tail).

    forward: out = erfc(-x / sqrt 2) / 2
    VJP:     gx = g * e^{-x^2/2} / sqrt(2 pi)
    """
    return 0.5 * erfc(-(_float(input, "ndtr") * (1 / math.sqrt(2))))


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """The spherical Bessel function j0(x) = sin(x) / x (1 at 0): a Sinc node at x / pi.

    forward: out = sin(x) / x
    VJP:     gx = g * (cos x - out) / x   (Sinc's, at x / pi, times 1 / pi)
    """
    return sinc(_float(input, "spherical_bessel_j0") * (1 / math.pi))


@with_formulas(Xlog1py)
def xlog1py(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """input * ln(1 + other), 0 where input is 0 (integers become the default float dtype)."""
    return Xlog1py.apply(*_float_operands("xlog1py", input, other))


@with_formulas(Zeta)
def zeta(input: TensorOrNumber, other: TensorOrNumber) -> Tensor:
    """The Hurwitz zeta function zeta(input, other) (integers become the default float dtype)."""
    return Zeta.apply(*_float_operands("zeta", input, other))


@with_formulas(Igamma)
def igamma(input: Tensor, other: TensorOrNumber) -> Tensor:
    """P(input, other): the regularized lower incomplete gamma function (floats only, as PyTorch)."""
    return Igamma.apply(*_float_operands("igamma", input, other, floats_only=True), False)


@with_formulas(Igamma)
def igammac(input: Tensor, other: TensorOrNumber) -> Tensor:
    """Q(input, other) = 1 - P(input, other): the regularized upper incomplete gamma function (floats only)."""
    return Igamma.apply(*_float_operands("igammac", input, other, floats_only=True), True)


# ---- helpers, named --------------------------------------------------------------------------------

def _float(x, op):
    from ._util import tensor_input
    from .unary import _to_float
    return _to_float(tensor_input(x, op))


def _raw(x):
    return x._array if isinstance(x, Tensor) else x


@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def _xlog1py(x, y):
    return np.where((x == 0) & ~np.isnan(y), 0, x * np.log1p(y)).astype(np.result_type(x, y), copy=False)


def _zeta_same_dtype(x, q):
    return K.zeta(x, q).astype(np.result_type(x, q), copy=False).reshape(np.broadcast_shapes(np.shape(x), np.shape(q)))


def _igamma_same_dtype(a, x, upper):
    shape = np.broadcast_shapes(np.shape(a), np.shape(x))
    return K.igamma(a, x, upper).astype(np.result_type(a, x), copy=False).reshape(shape)


# ---- issue 29: Bessel J, Y, K, Airy's Ai and the orthogonal polynomials of torch.special --------------
# PyTorch gives these no derivative at all: their results never require grad (no graph node is recorded, so
# a backward through them fails with "does not require grad", as in PyTorch). So they are plain functions of
# numpy kernels (`_special.py` says how each is computed and how accurate it is), not Functions.

def _no_grad_result(x, values):
    """`values` (float64) as a new tensor of x's dtype that does not require grad."""
    return Tensor._make(_in_dtype_of(x, values))


def _float_no_half(input, op):
    x = _float(input, op)
    if x._array.dtype == np.float16:
        raise NotImplementedError(f"{op}: not implemented for float16 tensors, as in PyTorch (convert with .float())")
    return x


def _bessel(op, kernel, what):
    def fn(input: Tensor) -> Tensor:
        x = _float_no_half(input, op)
        return _no_grad_result(x, kernel(x._array))

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"`torch.special.{op}`: {what}. Integers and bools become the default float dtype. Not "
                  "differentiable, as in PyTorch: the result never requires grad.")
    return fn


airy_ai = _bessel("airy_ai", K.airy_ai, "Airy's function Ai(x), the solution of y'' = x y that decays as x -> +inf")
bessel_j0 = _bessel("bessel_j0", functools.partial(K.bessel_j, 0), "J_0(x), the Bessel function of the first kind")
bessel_j1 = _bessel("bessel_j1", functools.partial(K.bessel_j, 1), "J_1(x), the Bessel function of the first kind")
bessel_y0 = _bessel("bessel_y0", functools.partial(K.bessel_y, 0),
                    "Y_0(x), the Bessel function of the second kind (-inf at 0, NaN for x < 0)")
bessel_y1 = _bessel("bessel_y1", functools.partial(K.bessel_y, 1),
                    "Y_1(x), the Bessel function of the second kind (-inf at 0, NaN for x < 0)")
modified_bessel_k0 = _bessel("modified_bessel_k0", functools.partial(K.bessel_k, 0),
                             "K_0(x), the modified Bessel function of the second kind (inf at 0, NaN for x < 0)")
modified_bessel_k1 = _bessel("modified_bessel_k1", functools.partial(K.bessel_k, 1),
                             "K_1(x), the modified Bessel function of the second kind (inf at 0, NaN for x < 0)")
scaled_modified_bessel_k0 = _bessel("scaled_modified_bessel_k0", functools.partial(K.bessel_k, 0, scaled=True),
                                    "e^x K_0(x), finite where K_0 underflows")
scaled_modified_bessel_k1 = _bessel("scaled_modified_bessel_k1", functools.partial(K.bessel_k, 1, scaled=True),
                                    "e^x K_1(x), finite where K_1 underflows")


def _polynomial(op, formula):
    def fn(input: TensorOrNumber, n: TensorOrNumber) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(n, Tensor):
            raise TypeError(f"{op}: expected a Tensor for input or n, got {type(input).__name__} and "
                            f"{type(n).__name__}")
        (x, degrees), dtype = _float_operands(op, input, n, arrays=True)
        if dtype == np.float16:
            raise NotImplementedError(f"{op}: not implemented for float16 tensors, as in PyTorch (convert with "
                                      ".float())")
        values = K.orthogonal_polynomial(op, x, degrees)
        return Tensor._make(np.asarray(values).astype(dtype, copy=False))

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"`torch.special.{op}`: {formula}, elementwise over input and the degrees n (broadcast; a float "
                  "n is truncated toward zero, and n < 0 gives 0). Computed by the three-term recurrence in float64, "
                  "in max(n) steps. The result dtype is PyTorch's promotion of input and n (integers and bools: the "
                  "default float dtype). Not differentiable, as in PyTorch: the result never requires grad.")
    return fn


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "T_n(x), T_{k+1} = 2x T_k - T_{k-1}, T_0 = 1, T_1 = x")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "U_n(x), U_{k+1} = 2x U_k - U_{k-1}, U_0 = 1, U_1 = 2x")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v",
                                     "V_n(x), V_{k+1} = 2x V_k - V_{k-1}, V_0 = 1, V_1 = 2x - 1")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w",
                                     "W_n(x), W_{k+1} = 2x W_k - W_{k-1}, W_0 = 1, W_1 = 2x + 1")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "T*_n(x) = T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "U*_n(x) = U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", "V*_n(x) = V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", "W*_n(x) = W_n(2x - 1)")
hermite_polynomial_h = _polynomial("hermite_polynomial_h",
                                   "the physicists' Hermite H_n(x), H_{k+1} = 2x H_k - 2k H_{k-1}, H_0 = 1, H_1 = 2x")
hermite_polynomial_he = _polynomial("hermite_polynomial_he",
                                    "the probabilists' Hermite He_n(x), He_{k+1} = x He_k - k He_{k-1}, He_1 = x")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l",
                                    "Laguerre's L_n(x), (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}, L_1 = 1 - x")
legendre_polynomial_p = _polynomial("legendre_polynomial_p",
                                    "Legendre's P_n(x), (k+1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}, P_1 = x")
