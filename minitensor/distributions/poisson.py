"""Poisson(rate): P(k) = rate^k e^-rate / k!, k = 0, 1, 2, ..."""
from __future__ import annotations

import numbers
from typing import Any

import minitensor

from ..ops.special import lgamma
from ..tensor import Size, Tensor
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, floor, xlogy

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(Size() if isinstance(rate, numbers.Number) else self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return floor(self.rate)

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """Counts in rate's dtype, drawn by numpy's Poisson sampler from minitensor's global generator."""
        from ..random import _gen

        shape = tuple(self._extended_shape(sample_shape))
        rate = self.rate.detach().expand(shape).numpy()
        return minitensor.tensor(_gen().poisson(rate).astype(rate.dtype), dtype=self.rate.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        value = value.to(rate.dtype)
        return xlogy(value, rate) - rate - lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.rate.log(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp()
