"""`minitensor.special`, PyTorch's `torch.special`: the special functions under their SciPy-style
names (`expit`, `gammaln`, `psi`, `multigammaln` ...), every one also reachable where minitensor's
own namespace has it (`minitensor.erfc`, `minitensor.lgamma`, ...).

The Bessel functions J, Y and K (`bessel_j0`, `bessel_y1`, `modified_bessel_k0`, ...), `airy_ai` and
the orthogonal polynomials (`chebyshev_polynomial_t`, `hermite_polynomial_h`, ...) are not
differentiable, as in PyTorch (their results never require grad); `minitensor/ops/_special.py` says how
each is computed and how accurate it is.
"""
from __future__ import annotations

from .ops import special as _S
from .ops.arithmetic import xlogy
from .ops.reduce import logsumexp
from .ops.softmax import special_log_softmax as log_softmax, special_softmax as softmax
from .ops.special import (
    digamma,
    digamma as psi,
    entr,
    erfc,
    erfcx,
    erfinv,
    i0,
    i0 as modified_bessel_i0,
    i0e,
    i1,
    i1 as modified_bessel_i1,
    i1e,
    igamma as gammainc,
    igammac as gammaincc,
    lgamma as gammaln,
    log_ndtr,
    mvlgamma as multigammaln,
    ndtr,
    ndtri,
    polygamma,
    sinc,
    spherical_bessel_j0,
    xlog1py,
    zeta,
)
from .ops.table import with_out as _with_out
from .ops.unary import erf, exp2, expm1, log1p, logit, round as _round, sigmoid as expit
from .tensor import Tensor

# ---- issue 29: Bessel J, Y, K, Airy's Ai and the orthogonal polynomials (each takes PyTorch's `out=`) ----
_ISSUE_29 = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
]
globals().update({_name: _with_out(_name, getattr(_S, _name)) for _name in _ISSUE_29})

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
] + _ISSUE_29


def round(input: Tensor) -> Tensor:
    """`torch.special.round`: minitensor.round without `decimals` (rounds to the nearest integer, ties
    to even); unlike `minitensor.round`, it refuses integer tensors, as PyTorch's does."""
    if isinstance(input, Tensor) and input.dtype.kind in "iu":
        raise NotImplementedError(f"special.round: not implemented for {input.dtype} tensors (convert with .float())")
    return _round(input)


# ---- issue 29 (h-sig29): PyTorch's `out=` on the rest of torch.special (scripts/api_signatures.py checks it) ----
_WITH_OUT = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]
globals().update({_name: _with_out(_name, globals()[_name]) for _name in _WITH_OUT})
