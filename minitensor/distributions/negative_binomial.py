r"""NegativeBinomial(total_count, probs | logits): the number of successes before total_count failures, each
trial a success with probability probs (r = total_count, p = probs, logits = ln p - ln(1 - p)).

    log_prob = ln Γ(r + k) - ln Γ(k + 1) - ln Γ(r) + r ln(1 - p) + k ln p   (0 at r + k = 0)
    mean = r p / (1 - p) = r e^logits,   variance = mean / (1 - p),   mode = ⌊(r - 1) p / (1 - p)⌋ (≥ 0)
Draws: Poisson(λ) with λ ~ Gamma(r, rate (1 - p)/p) (the Gamma-Poisson mixture), from minitensor's generator.
"""
from __future__ import annotations

import numbers
from typing import Any

import minitensor

from ..ops.special import lgamma
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, floor, lazy_property, logits_to_probs, probs_to_logits, softplus

__all__ = ["NegativeBinomial"]


def _logsigmoid(x: Tensor) -> Tensor:
    return -softplus(-x)


class NegativeBinomial(Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Tensor | float, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        total, param = broadcast_all(total_count, given)  # type: ignore[arg-type]
        self.total_count = total.to(param.dtype)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        scalar = isinstance(given, numbers.Number) and isinstance(total_count, numbers.Number)
        super().__init__(Size() if scalar else param.shape, validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return floor((self.total_count - 1) * self.logits.exp()).clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        from ..random import _gen

        shape = tuple(self._extended_shape(sample_shape))
        r = self.total_count.detach().expand(shape).numpy()
        odds = self.logits.detach().exp().expand(shape).numpy()  # the Gamma's scale, p / (1 - p)
        rate = _gen().gamma(r, odds)
        return minitensor.tensor(_gen().poisson(rate).astype(r.dtype), dtype=self._param.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        r, logits = self.total_count, self.logits
        log_unnormalized = r * _logsigmoid(-logits) + value * _logsigmoid(logits)
        log_normalization = -lgamma(r + value) + lgamma(1.0 + value) + lgamma(r)
        # r + k = 0 (no draws and no successes) has probability 1, where the Γ terms are inf - inf
        log_normalization = minitensor.where(r + value == 0, minitensor.zeros_like(log_normalization),
                                             log_normalization)
        return log_unnormalized - log_normalization
