r"""StudentT(df, loc=0., scale=1.): loc + scale T, T a Student's t with df degrees of freedom.

    log_prob = ln Γ((df+1)/2) - ln Γ(df/2) - ½ ln(df π) - ln scale - (df+1)/2 ln(1 + z²/df),   z = (x - loc) / scale
    mean = loc (df > 1, else NaN);   mode = loc
    variance = scale² df / (df - 2) (df > 2), inf (1 < df ≤ 2), NaN (df ≤ 1)
    entropy = ln scale + (df+1)/2 (ψ((df+1)/2) - ψ(df/2)) + ½ ln df + ln B(df/2, ½)
Draws: loc + scale X / √(V/df), X ~ N(0, 1), V ~ Chi2(df), reparameterised through both.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import minitensor

from ..ops.special import digamma, lgamma
from ..tensor import Size, Tensor
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all, finfo

__all__ = ["StudentT"]


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Tensor | float, loc: Tensor | float = 0.0, scale: Tensor | float = 1.0,
                 validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        scalar = all(isinstance(v, numbers.Number) for v in (df, loc, scale))
        super().__init__(Size() if scalar else self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> StudentT:
        new = super().expand(batch_shape, _instance)
        new.__dict__["_chi2"] = self._chi2.expand(batch_shape)
        return new  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return minitensor.where(self.df > 1, self.loc, minitensor.full_like(self.loc, math.nan))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        safe_df = minitensor.where(self.df > 2, self.df, minitensor.full_like(self.df, 3.0))
        finite = self.scale.square() * safe_df / (safe_df - 2)
        return minitensor.where(self.df > 2, finite, minitensor.where(
            self.df > 1, minitensor.full_like(finite, math.inf), minitensor.full_like(finite, math.nan)))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        x = minitensor.randn(shape, dtype=self.df.dtype)
        z = self._chi2.rsample(sample_shape).clamp(min=float(finfo(self.df.dtype).tiny))
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + lgamma(0.5 * self.df)
             - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.square() / self.df).log1p() - z

    def entropy(self) -> Tensor:
        lbeta = lgamma(0.5 * self.df) + math.lgamma(0.5) - lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (digamma(0.5 * (self.df + 1)) - digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
