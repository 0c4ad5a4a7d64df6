"""Bernoulli(probs | logits): 1 with probability probs, else 0.

Given `probs`, `logits` = ln p - ln(1 - p) (p clamped to [eps, 1 - eps]); given `logits`,
`probs` = sigmoid(logits). `log_prob` and `entropy` use the logits in the stable
binary-cross-entropy form, so they stay finite for probabilities near 0 and 1.
"""
from __future__ import annotations

import numbers
from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .exp_family import ExponentialFamily
from .utils import bce_with_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


class Bernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

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
        self._param = param
        scalar = isinstance(given, numbers.Number)
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
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return minitensor.where(self.probs == 0.5, minitensor.full_like(mode, float("nan")), mode)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """0/1 draws in probs' dtype, from minitensor's global generator (not PyTorch's stream)."""
        with minitensor.no_grad():
            return minitensor.bernoulli(self.probs.detach().expand(self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -bce_with_logits(logits, value.to(logits.dtype))

    def entropy(self) -> Tensor:
        return bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = minitensor.arange(2, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp().log1p()
