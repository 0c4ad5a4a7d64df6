"""`minitensor.special`, PyTorch's `torch.special`: the special functions under their SciPy-style
names (`expit`, `gammaln`, `psi`, `multigammaln` ...), every one also reachable where minitensor's
own namespace has it (`minitensor.erfc`, `minitensor.lgamma`, ...).

Left out, as not computable here both accurately and simply with numpy alone: the Bessel functions
J, Y and K (`bessel_j0`, `bessel_y1`, `modified_bessel_k0`, `scaled_modified_bessel_k1` ...),
`airy_ai`, and the orthogonal polynomials (`chebyshev_polynomial_t`, `hermite_polynomial_h` ...).
"""
from __future__ import annotations

from .ops.arithmetic import xlogy
from .ops.reduce import logsumexp
from .ops.softmax import log_softmax, softmax
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
from .ops.unary import erf, exp2, expm1, log1p, logit, round as _round, sigmoid as expit
from .tensor import Tensor

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
    "modified_bessel_i1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]


def round(input: Tensor) -> Tensor:
    """`torch.special.round`: minitensor.round without `decimals` (rounds to the nearest integer, ties
    to even); unlike `minitensor.round`, it refuses integer tensors, as PyTorch's does."""
    if isinstance(input, Tensor) and input.dtype.kind in "iu":
        raise NotImplementedError(f"special.round: not implemented for {input.dtype} tensors (convert with .float())")
    return _round(input)
