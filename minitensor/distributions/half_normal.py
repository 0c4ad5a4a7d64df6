r"""HalfNormal(scale): the law of |X| for X ~ Normal(0, scale); a TransformedDistribution by AbsTransform.

    log_prob = ln 2 + ln N(x; 0, scale) on x ≥ 0 (-inf below)
    cdf = 2 Φ(x / scale) - 1,   icdf(u) = Normal icdf((u + 1) / 2)
    mean = scale √(2/π),   variance = scale² (1 - 2/π),   mode = 0,   entropy = H(Normal) - ln 2
"""
from __future__ import annotations

import math

import minitensor

from ..tensor import Tensor
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class HalfNormal(TransformedDistribution):
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(Normal(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return minitensor.zeros_like(self.scale)

    @property
    def variance(self) -> Tensor:
        return self.scale.square() * (1 - 2 / math.pi)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return minitensor.where(value >= 0, log_prob, minitensor.full_like(log_prob, -math.inf))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Tensor) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
