"""Gamma(concentration, rate): density rate^α x^(α-1) e^(-rate x) / Γ(α) on x > 0 (α = concentration)."""
from __future__ import annotations

import numbers
from typing import Any

from ..ops.special import digamma, lgamma
from ..tensor import Size, Tensor
from . import constraints
from ._special import standard_gamma
from .exp_family import ExponentialFamily
from .utils import broadcast_all, finfo, xlogy

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Tensor | float, rate: Tensor | float, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(Size() if scalar else self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.square()

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """x / rate with x a standard Gamma(α) draw (numpy's sampler, minitensor's generator) whose gradient
        in α comes from implicit reparameterisation (see _special._StandardGamma)."""
        shape = tuple(self._extended_shape(sample_shape))
        x = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return x.clamp(min=float(finfo(x.dtype).tiny))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.to(self.rate.dtype)
        a, b = self.concentration, self.rate
        return xlogy(a, b) + xlogy(a - 1, value) - b * value - lgamma(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()
