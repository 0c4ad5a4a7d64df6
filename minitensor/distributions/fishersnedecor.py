r"""FisherSnedecor(df1, df2): the law of (X₁/d₁) / (X₂/d₂) for X_i ~ Chi2(d_i) (the F distribution).

    log_prob = ln Γ((d₁+d₂)/2) - ln Γ(d₁/2) - ln Γ(d₂/2) + (d₁/2) ln(d₁/d₂) + (d₁/2 - 1) ln x
               - (d₁+d₂)/2 ln(1 + d₁ x / d₂)
    mean = d₂ / (d₂ - 2) (NaN for d₂ ≤ 2),   mode = (d₁ - 2)/d₁ · d₂/(d₂ + 2) (NaN for d₁ ≤ 2)
    variance = 2 d₂² (d₁ + d₂ - 2) / (d₁ (d₂ - 2)² (d₂ - 4)) (NaN for d₂ ≤ 4)
Draws: G₁ / G₂ with G_i ~ Gamma(d_i/2, d_i/2) (a Chi2(d_i) / d_i), reparameterised through both.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import minitensor

from ..ops.special import lgamma
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, finfo

__all__ = ["FisherSnedecor"]


def _nan_where(cond: Tensor, x: Tensor) -> Tensor:
    return minitensor.where(cond, minitensor.full_like(x, math.nan), x)


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Tensor | float, df2: Tensor | float, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(Size() if scalar else self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> FisherSnedecor:
        new = super().expand(batch_shape, _instance)
        new.__dict__["_gamma1"] = self._gamma1.expand(batch_shape)
        new.__dict__["_gamma2"] = self._gamma2.expand(batch_shape)
        return new  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        df2 = minitensor.where(self.df2 > 2, self.df2, minitensor.full_like(self.df2, 3.0))
        return _nan_where(self.df2 <= 2, df2 / (df2 - 2))

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return _nan_where(self.df1 <= 2, mode)

    @property
    def variance(self) -> Tensor:
        df2 = minitensor.where(self.df2 > 4, self.df2, minitensor.full_like(self.df2, 5.0))
        var = 2 * df2.square() * (self.df1 + df2 - 2) / (self.df1 * (df2 - 2).square() * (df2 - 4))
        return _nan_where(self.df2 <= 4, var)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        tiny = float(finfo(self.df1.dtype).tiny)
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2 = self.df1 * 0.5, self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = lgamma(ct1 + ct2) - lgamma(ct1) - lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
