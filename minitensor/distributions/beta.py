"""Beta(concentration1, concentration0): density x^(a-1) (1-x)^(b-1) / B(a, b) on [0, 1]; a Dirichlet over
(x, 1 - x), as PyTorch builds it."""
from __future__ import annotations

import numbers
from typing import Any, cast

import minitensor

from ..ops.special import lgamma
from ..tensor import Size, Tensor
from . import constraints
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        c1, c0 = broadcast_all(concentration1, concentration0)
        self._dirichlet = Dirichlet(minitensor.stack([c1, c0], -1), validate_args=validate_args)
        scalar = isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number)
        super().__init__(Size() if scalar else self._dirichlet.batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> Beta:
        new = type(self).__new__(type(self))
        new._dirichlet = cast(Dirichlet, self._dirichlet.expand(batch_shape))
        Distribution.__init__(new, new._dirichlet.batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self) -> Tensor:
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self) -> Tensor:
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.square() * (total + 1))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        return self._dirichlet.rsample(sample_shape)[..., 0]

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(minitensor.stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return lgamma(x) + lgamma(y) - lgamma(x + y)
