"""Binomial(total_count, probs | logits): the number of successes in total_count independent trials."""
from __future__ import annotations

import numbers
from typing import Any

import minitensor

from ..ops.special import lgamma
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, floor, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x: Tensor) -> Tensor:
    # max(x, 0) with gradient 1/2 at 0, as PyTorch writes it
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Tensor | int = 1, probs: Tensor | float | None = None,
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
        super().__init__(Size() if isinstance(given, numbers.Number) and isinstance(total_count, numbers.Number)
                         else param.shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

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
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return minitensor.minimum(floor((self.total_count + 1) * self.probs), self.total_count.detach())

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """Counts in probs' dtype, drawn by numpy's binomial sampler from minitensor's global generator."""
        from ..random import _gen

        shape = tuple(self._extended_shape(sample_shape))
        n = self.total_count.detach().expand(shape).numpy()
        p = self.probs.detach().expand(shape).numpy()
        return minitensor.tensor(_gen().binomial(n.astype("int64"), p).astype(p.dtype), dtype=self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.to(self.logits.dtype)
        n, logits = self.total_count, self.logits
        log_choose = lgamma(n + 1) - lgamma(value + 1) - lgamma(n - value + 1)
        # n ln(1 + e^logits), written so it neither overflows nor loses digits
        normalizer = n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
        return log_choose + value * logits - normalizer

    def entropy(self) -> Tensor:
        n = int(self.total_count.max().item())
        if not self.total_count.min().item() == n:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = int(self.total_count.max().item())
        if not self.total_count.min().item() == n:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = minitensor.arange(1 + n, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
