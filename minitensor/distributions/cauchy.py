r"""Cauchy(loc, scale): density 1 / (π scale (1 + ((x - loc) / scale)²)) on the real line.

    log_prob = -ln π - ln scale - ln(1 + z²),   z = (x - loc) / scale
    cdf = ½ + atan(z) / π,   icdf(u) = loc + scale tan(π (u - ½))
    entropy = ln(4π scale);   mean and variance undefined (NaN and inf, as PyTorch returns); mode = loc
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(Size() if scalar else self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return minitensor.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return minitensor.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """loc + scale ε with ε = tan(π (u - ½)), u ~ U(0, 1) drawn apart (a standard Cauchy draw)."""
        u = minitensor.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - ((value - self.loc) / self.scale).square().log1p()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Tensor) -> Tensor:
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()
