"""Geometric(probs | logits): the number of failures before the first success, P(k) = (1 - p)^k p."""
from __future__ import annotations

import numbers
from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import bce_with_logits, broadcast_all, finfo, floor, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)  # type: ignore[arg-type]
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        super().__init__(Size() if isinstance(given, numbers.Number) else param.shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not (self.probs > 0).all():
            raise ValueError("All elements of probs must be greater than 0")

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return minitensor.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """floor(ln u / ln(1 - p)) with u ~ U(0, 1) from minitensor's global generator."""
        with minitensor.no_grad():
            probs = self.probs.detach()
            u = minitensor.rand(self._extended_shape(sample_shape), dtype=probs.dtype)
            u = u.clamp(min=float(finfo(probs.dtype).tiny))
            return floor(u.log() / (-probs).log1p())

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        value = value.to(probs.dtype)
        # p = 1 and k = 0: the term k ln(1 - p) is 0, not 0 * -inf
        safe = minitensor.where((probs == 1) & (value == 0), minitensor.zeros_like(probs), probs)
        return value * (-safe).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return bce_with_logits(self.logits, self.probs) / self.probs
