r"""GeneralizedPareto(loc, scale, concentration): survival S(x) = (1 + ξ z)^(-1/ξ), z = (x - loc) / scale
(ξ = concentration; e^(-z) at ξ = 0), on x ≥ loc (and x ≤ loc - scale/ξ when ξ < 0).

    log_prob = -ln scale - (1/ξ + 1) ln(1 + ξ z)   (-ln scale - z at ξ = 0)
    cdf = 1 - S(x),   icdf(u) = loc + scale ((1 - u)^(-ξ) - 1) / ξ   (loc - scale ln(1 - u) at ξ = 0)
    mean = loc + scale / (1 - ξ) (ξ < 1, else NaN),   variance = scale² / ((1 - ξ)² (1 - 2ξ)) (ξ < ½, else NaN)
    mode = loc,   entropy = ln scale + ξ + 1
Draws: icdf(u) for u ~ U(0, 1), reparameterised.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.shape, validate_args=validate_args)

    def _zero_and_safe(self) -> tuple[Tensor, Tensor]:
        """Where ξ is (close to) 0, and ξ with those entries replaced by 1 so the ξ ≠ 0 branch stays finite."""
        c = self.concentration
        eq_zero = minitensor.tensor(np.isclose(c.detach().numpy(), 0.0))
        return eq_zero, minitensor.where(eq_zero, minitensor.ones_like(c), c)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        u = minitensor.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._zero_and_safe()
        y = 1 / safe + minitensor.ones_like(z)
        nonzero = minitensor.where(y == 0, y, y * (safe * z).log1p())
        return -self.scale.log() - minitensor.where(eq_zero, z, nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe = self._zero_and_safe()
        return minitensor.where(eq_zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value: Tensor) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Tensor) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Tensor) -> Tensor:
        eq_zero, safe = self._zero_and_safe()
        logu = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * logu).expm1()
        return minitensor.where(eq_zero, self.loc - self.scale * logu, nonzero)

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe = minitensor.where(valid, self.concentration, minitensor.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - safe)
        return minitensor.where(valid, result, minitensor.full_like(result, math.nan))

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe = minitensor.where(valid, self.concentration, minitensor.full_like(self.concentration, 0.25))
        result = self.scale.square() / ((1 - safe).square() * (1 - 2 * safe))
        return minitensor.where(valid, result, minitensor.full_like(result, math.nan))

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).expand(tuple(self._batch_shape))

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        upper = minitensor.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                                 minitensor.full_like(self.loc, math.inf))
        return constraints.interval(self.loc, upper)
