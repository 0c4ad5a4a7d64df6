r"""InverseGamma(concentration, rate): the law of 1/X for X ~ Gamma(α, β) (α = concentration, β = rate);
a TransformedDistribution by PowerTransform(-1). Density βᵅ x^(-α-1) e^(-β/x) / Γ(α) on x > 0.

    mean = β / (α - 1) (inf for α ≤ 1),   mode = β / (α + 1)
    variance = β² / ((α - 1)² (α - 2)) (inf for α ≤ 2),   entropy = α + ln β + ln Γ(α) - (1 + α) ψ(α)
"""
from __future__ import annotations

import math
from typing import Any

import minitensor

from ..ops.special import digamma, lgamma
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration: Tensor | float, rate: Tensor | float, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -minitensor.ones_like(base.rate)
        super().__init__(base, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> InverseGamma:
        return super().expand(batch_shape, _instance)  # type: ignore[return-value]

    @property
    def concentration(self) -> Tensor:
        return self.base_dist.concentration

    @property
    def rate(self) -> Tensor:
        return self.base_dist.rate

    @property
    def mean(self) -> Tensor:
        result = self.rate / (self.concentration - 1)
        return minitensor.where(self.concentration > 1, result, minitensor.full_like(result, math.inf))

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        result = self.rate.square() / ((a - 1).square() * (a - 2))
        return minitensor.where(a > 2, result, minitensor.full_like(result, math.inf))

    def entropy(self) -> Tensor:
        a = self.concentration
        return a + self.rate.log() + lgamma(a) - (1 + a) * digamma(a)
