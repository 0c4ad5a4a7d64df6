r"""Weibull(scale, concentration): density (k/λ)(x/λ)^(k-1) e^(-(x/λ)^k) on x > 0 (λ = scale, k =
concentration); λ E^(1/k) with E ~ Exponential(1) (a TransformedDistribution by PowerTransform(1/k) then
AffineTransform(0, λ)).

    mean = λ Γ(1 + 1/k),   variance = λ² (Γ(1 + 2/k) - Γ(1 + 1/k)²),   mode = λ ((k - 1)/k)^(1/k)
    entropy = γ (1 - 1/k) + ln(λ / k) + 1   (γ Euler's constant)
"""
from __future__ import annotations

from typing import Any

import minitensor

from ..ops.special import lgamma
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale: Tensor | float, concentration: Tensor | float, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(minitensor.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> Weibull:
        new = type(self).__new__(type(self))
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, base, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.scale.square() * (lgamma(1 + 2 * self.concentration_reciprocal).exp()
                                      - lgamma(1 + self.concentration_reciprocal).mul(2).exp())

    def entropy(self) -> Tensor:
        k_inv = self.concentration_reciprocal
        return euler_constant * (1 - k_inv) + (self.scale * k_inv).log() + 1
