"""Normal(loc, scale): density exp(-(x - loc)² / (2 scale²)) / (scale √(2π))."""
from __future__ import annotations

import math
import numbers
from typing import Any

import minitensor

from ..ops.special import erfinv
from ..tensor import Size, Tensor
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(Size() if scalar else self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.square()

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """loc + scale * ε with ε ~ N(0, 1) drawn apart: the gradient reaches loc and scale."""
        eps = minitensor.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(value - self.loc).square() / (2 * self.variance) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value: Tensor) -> Tensor:
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        """(loc / scale², -1 / (2 scale²))."""
        return self.loc / self.scale.square(), -0.5 * self.scale.square().reciprocal()

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x.square() / y + 0.5 * (-math.pi / y).log()
