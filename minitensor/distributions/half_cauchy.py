r"""HalfCauchy(scale): the law of |X| for X ~ Cauchy(0, scale); a TransformedDistribution by AbsTransform.

    log_prob = ln 2 + ln Cauchy(x; 0, scale) on x ≥ 0 (-inf below)
    cdf = 2 F_Cauchy(x) - 1,   icdf(u) = Cauchy icdf((u + 1) / 2)
    mean = inf,   variance = inf,   mode = 0,   entropy = H(Cauchy) - ln 2
"""
from __future__ import annotations

import math

import minitensor

from ..tensor import Tensor
from .cauchy import Cauchy
from .folded import FoldedAtZero

__all__ = ["HalfCauchy"]


class HalfCauchy(FoldedAtZero):
    symmetric = Cauchy

    @property
    def mean(self) -> Tensor:
        return minitensor.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self) -> Tensor:
        return minitensor.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)
