r"""lgamma and digamma for the distributions, until minitensor has them as ops.

Gamma, Beta, Dirichlet, Poisson and Binomial need ln Γ and its derivative ψ (digamma) of their
parameters, with gradients. minitensor has no such ops yet, so this module holds two small private
`Function`s. `lgamma` and `digamma` below prefer `minitensor.lgamma` / `minitensor.digamma` when those
exist, so these Functions drop out as soon as the ops land.

The numbers: ln Γ is `math.lgamma` per element (exact, scalar: fine at the sizes distributions see);
ψ and ψ' (trigamma) shift x up to x >= 6 with ψ(x) = ψ(x + 1) - 1/x and ψ'(x) = ψ'(x + 1) + 1/x²,
then sum their asymptotic series (error below 1e-15 there), and reflect x < 1/2 through
ψ(1 - x) - ψ(x) = π / tan(πx) and ψ'(x) + ψ'(1 - x) = π² / sin²(πx).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

import minitensor

from ..autograd.function import Function
from ..tensor import Tensor


def _lgamma_scalar(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # the poles 0, -1, -2, ...: PyTorch gives +inf there
        return math.inf


_lgamma_ufunc = np.frompyfunc(_lgamma_scalar, 1, 1)


def np_lgamma(x: np.ndarray) -> np.ndarray:
    return np.asarray(_lgamma_ufunc(np.asarray(x, np.float64)), np.float64).astype(x.dtype, copy=False)


def _shifted(x: np.ndarray, step: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """x moved up to at least 6 (x >= 1/2 given), and the sum of `step(x)` over the values passed."""
    acc = np.zeros_like(x)
    for _ in range(6):
        small = x < 6
        acc += np.where(small, step(np.where(small, x, 1.0)), 0.0)
        x = np.where(small, x + 1, x)
    return x, acc


def np_digamma(x: np.ndarray) -> np.ndarray:
    a = np.asarray(x, np.float64)
    reflect = a < 0.5
    z, acc = _shifted(np.where(reflect, 1 - a, a), lambda t: -1 / t)
    w = 1 / (z * z)
    series = np.log(z) - 0.5 / z - w * (1 / 12 - w * (1 / 120 - w * (1 / 252 - w * (1 / 240 - w * (1 / 132)))))
    out = series + acc
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(reflect, out - math.pi / np.tan(math.pi * a), out)
    out = np.where(a == 0, -np.inf, out)  # PyTorch: digamma(0) = -inf, NaN at the negative integers
    out = np.where((a < 0) & (a == np.floor(a)), np.nan, out)
    return out.astype(np.asarray(x).dtype, copy=False)


def np_trigamma(x: np.ndarray) -> np.ndarray:
    a = np.asarray(x, np.float64)
    reflect = a < 0.5
    z, acc = _shifted(np.where(reflect, 1 - a, a), lambda t: 1 / (t * t))
    w = 1 / (z * z)
    series = 1 / z + w / 2 + (w / z) * (1 / 6 - w * (1 / 30 - w * (1 / 42 - w * (1 / 30))))
    out = series + acc
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(reflect, (math.pi / np.sin(math.pi * a)) ** 2 - out, out)
    return out.astype(np.asarray(x).dtype, copy=False)


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730)  # B_2, B_4, ..., B_12


def np_polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """ψ⁽ⁿ⁾(x) for n >= 1 and x > 0 (trigamma also for x <= 0, NaN there for n >= 2): shift x up to >= 12 with
    ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + 1) + (-1)ⁿ⁺¹ n! / xⁿ⁺¹, then the asymptotic series
    (-1)ⁿ⁺¹ [(n-1)!/xⁿ + n!/(2xⁿ⁺¹) + Σₖ B₂ₖ (2k+n-1)! / ((2k)! x²ᵏ⁺ⁿ)]."""
    a = np.asarray(x, np.float64)
    if n == 1 and np.any(a <= 0):  # trigamma's reflection covers x <= 0
        return np.where(a > 0, np_polygamma(1, np.where(a > 0, a, 1.0)), np_trigamma(a)).astype(
            np.asarray(x).dtype, copy=False)
    sign = (-1.0) ** (n + 1)
    acc = np.zeros_like(a)
    z = np.where(a > 0, a, np.nan)
    for _ in range(12):
        small = z < 12
        acc += np.where(small, sign * math.factorial(n) / np.where(small, z, 1.0) ** (n + 1), 0.0)
        z = np.where(small, z + 1, z)
    series = math.factorial(n - 1) / z**n + math.factorial(n) / (2 * z ** (n + 1))
    for k, b in enumerate(_BERNOULLI, start=1):
        series = series + b * math.factorial(2 * k + n - 1) / (math.factorial(2 * k) * z ** (2 * k + n))
    return (sign * series + acc).astype(np.asarray(x).dtype, copy=False)


class _Lgamma(Function):
    r"""out = ln |Γ(x)|;   VJP: gx = g * ψ(x)   (ψ = digamma)"""

    @staticmethod
    def forward(ctx, x):
        return np_lgamma(x._array)

    @staticmethod
    def backward(ctx, g):
        return g * digamma(ctx.inputs[0])


class _Digamma(Function):
    r"""out = ψ(x) = d/dx ln Γ(x);   VJP: gx = g * ψ⁽¹⁾(x)   (trigamma)"""

    @staticmethod
    def forward(ctx, x):
        return np_digamma(x._array)

    @staticmethod
    def backward(ctx, g):
        return g * _Polygamma.apply(ctx.inputs[0], 1)


class _Polygamma(Function):
    r"""out = ψ⁽ⁿ⁾(x), the n-th derivative of ψ (n >= 1);   VJP: gx = g * ψ⁽ⁿ⁺¹⁾(x)"""

    @staticmethod
    def forward(ctx, x, n):
        return np_polygamma(n, x._array)

    @staticmethod
    def backward(ctx, g):
        x, n = ctx.inputs
        return g * _Polygamma.apply(x, n + 1), None


def _floating(x: Tensor) -> Tensor:
    return x if x.is_floating_point() else x.to(minitensor.get_default_dtype())


def lgamma(x: Tensor) -> Tensor:
    op = getattr(minitensor, "lgamma", None)
    return op(x) if op is not None else _Lgamma.apply(_floating(x))


def digamma(x: Tensor) -> Tensor:
    op = getattr(minitensor, "digamma", None)
    return op(x) if op is not None else _Digamma.apply(_floating(x))


# ---- erfinv (Normal.icdf) ----------------------------------------------------------------------

def np_erfinv(y: np.ndarray) -> np.ndarray:
    """erfinv: Giles' single-precision approximation, then two Newton steps on erf (from ops/_erf)."""
    from ..ops._erf import erf as np_erf

    a = np.asarray(y, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1 - a) * (1 + a))
        small = w < 5
        ws, wl = w - 2.5, np.sqrt(np.where(small, 5.0, w)) - 3
        ps = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                         -0.00125372503, -0.00417768164, 0.246640727, 1.50140941], ws)
        pl = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682], wl)
        x = np.where(small, ps, pl) * a
        for _ in range(2):
            x = x - (np_erf(x) - a) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
        x = np.where(a == 1, np.inf, np.where(a == -1, -np.inf, x))
        x = np.where(np.abs(a) > 1, np.nan, x)
    return x.astype(np.asarray(y).dtype, copy=False)


class _Erfinv(Function):
    r"""out = erf⁻¹(y);   VJP: gy = g * √π / 2 * exp(out²)"""

    @staticmethod
    def forward(ctx, y):
        return np_erfinv(y._array)

    @staticmethod
    def backward(ctx, g):
        return g * (math.sqrt(math.pi) / 2) * ctx.output.square().exp()


def erfinv(x: Tensor) -> Tensor:
    op = getattr(minitensor, "erfinv", None)
    return op(x) if op is not None else _Erfinv.apply(_floating(x))


# ---- the standard Gamma draw, reparameterised implicitly (Gamma, Beta, Dirichlet rsample) ----------

def _np_gammainc(a: np.ndarray, x: np.ndarray, terms: int = 400) -> np.ndarray:
    """The regularised lower incomplete gamma P(a, x): its series where x < a + 1, else 1 minus the
    continued fraction of Q(a, x) (modified Lentz), each summed until every element has converged."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        log_front = a * np.log(x) - x - np_lgamma(a)
        # series: P = x^a e^-x / Γ(a + 1) * Σ_n x^n / ((a + 1) ... (a + n))
        term = np.ones_like(x)
        total = np.ones_like(x)
        for n in range(1, terms):
            term = term * x / (a + n)
            total = total + term
            if n % 8 == 0 and not np.any(np.where(x < a + 1, term, 0) > 1e-17 * total):
                break
        series = np.exp(log_front - np.log(a)) * total
        # continued fraction for Q = x^a e^-x / Γ(a) * 1 / (x + 1 - a - 1(1 - a) / (x + 3 - a - ...))
        tiny = 1e-300
        b = x + 1 - a
        c = np.full_like(x, 1 / tiny)
        d = 1 / np.where(b == 0, tiny, b)
        h = d.copy()
        for i in range(1, terms):
            an = -i * (i - a)
            b = b + 2
            d = an * d + b
            d = 1 / np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            h = h * d * c
            if i % 8 == 0 and not np.any(np.where(x < a + 1, 0, np.abs(d * c - 1)) > 1e-16):
                break
        fraction = 1 - np.exp(log_front) * h
        out = np.where(x < a + 1, series, fraction)
    return np.where(x <= 0, 0.0, np.where(np.isinf(x), 1.0, out))


def standard_gamma_grad(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """d x / d alpha for a standard Gamma draw x held at a fixed quantile: -(∂P/∂α) / p(x; α) (implicit
    reparameterisation). ∂P/∂α is a central difference of P in α (relative step 1e-5; ~1e-7 relative error)."""
    a = np.asarray(alpha, np.float64)
    x = np.asarray(x, np.float64)
    h = 1e-5 * np.maximum(a, 1e-3)
    dp_da = (_np_gammainc(a + h, x) - _np_gammainc(a - h, x)) / (2 * h)
    with np.errstate(all="ignore"):
        log_density = (a - 1) * np.log(x) - x - np_lgamma(a)
        grad = -dp_da / np.exp(log_density)
    return np.where(np.isfinite(grad), grad, 0.0)


def standard_gamma(alpha: Tensor) -> Tensor:
    """A standard Gamma(α) draw (numpy's sampler, minitensor's generator) whose gradient in α is the
    implicit reparameterisation ∂x/∂α = -(∂P(α, x)/∂α) / p(x; α) (P the Gamma CDF, p its density): the
    draw held at a fixed quantile while α moves. Written as x + ∂x/∂α (α - α.detach()), whose value is x
    and whose gradient is ∂x/∂α (first order only, as PyTorch's), so no Function of its own is needed."""
    from ..random import _gen

    a = alpha.detach().numpy()
    x = np.maximum(_gen().standard_gamma(a.astype(np.float64)), np.finfo(a.dtype).tiny).astype(a.dtype)
    draw = minitensor.tensor(x, dtype=alpha.dtype)
    if not alpha.requires_grad:
        return draw
    slope = minitensor.tensor(standard_gamma_grad(x, a).astype(a.dtype), dtype=alpha.dtype)
    return draw + slope * (alpha - alpha.detach())
