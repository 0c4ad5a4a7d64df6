r"""The special functions the distributions need.

ln Γ, ψ (digamma) and erf⁻¹ of the parameters, with gradients, are minitensor's own ops
(`minitensor.lgamma`, `digamma`, `erfinv` in `ops/special.py`), which the distributions import from
there. What is the distributions' own: the regularized lower incomplete gamma P(a, x) in numpy, and the
standard Gamma draw with its implicit reparameterisation gradient (Gamma, Beta and Dirichlet's
`rsample`).
"""
from __future__ import annotations

import numpy as np

import minitensor

from ..ops._special import lgamma as np_lgamma  # (its numpy kernel, for the incomplete gamma)
from ..tensor import Tensor

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
