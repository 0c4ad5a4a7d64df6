r"""What HalfNormal and HalfCauchy share: the law of |X| for X of a distribution symmetric about 0,
a TransformedDistribution by AbsTransform.

    log_prob = ln 2 + ln p_X(x) on x ≥ 0 (-inf below)
    cdf = 2 F_X(x) - 1,   icdf(u) = F_X^-1((u + 1) / 2)
    mode = 0,   entropy = H(X) - ln 2
"""
from __future__ import annotations

import math
from typing import Any

import minitensor

from ..tensor import Tensor
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class FoldedAtZero(TransformedDistribution):
    """A subclass names its symmetric law (`symmetric`, built as symmetric(0, scale)) and gives its
    mean and variance."""

    symmetric: Any
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(self.symmetric(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mode(self) -> Tensor:
        return minitensor.zeros_like(self.scale)

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
