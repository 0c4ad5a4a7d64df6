r"""HalfNormal(scale): the law of |X| for X ~ Normal(0, scale); a TransformedDistribution by AbsTransform.

    log_prob = ln 2 + ln N(x; 0, scale) on x ≥ 0 (-inf below)
    cdf = 2 Φ(x / scale) - 1,   icdf(u) = Normal icdf((u + 1) / 2)
    mean = scale √(2/π),   variance = scale² (1 - 2/π),   mode = 0,   entropy = H(Normal) - ln 2
"""
from __future__ import annotations

import math

from ..tensor import Tensor
from .folded import FoldedAtZero
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(FoldedAtZero):
    symmetric = Normal

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.square() * (1 - 2 / math.pi)
