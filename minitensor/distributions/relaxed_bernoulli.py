r"""RelaxedBernoulli(temperature, probs | logits): the Concrete / Gumbel-softmax relaxation of Bernoulli on
(0, 1) (Maddison et al. 2017); σ(L) for L ~ LogitRelaxedBernoulli (a TransformedDistribution by
SigmoidTransform).

LogitRelaxedBernoulli(temperature τ, logits l): L = (l + ln u - ln(1 - u)) / τ, u ~ U(0, 1);
    log_prob(y) = ln τ + (l - τ y) - 2 ln(1 + e^(l - τ y))
"""
from __future__ import annotations

import numbers
from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits, softplus

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)  # type: ignore[arg-type]
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(Size() if isinstance(given, numbers.Number) else param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> LogitRelaxedBernoulli:
        new = super().expand(batch_shape, _instance)
        new.__dict__["_param"] = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        new.__dict__["temperature"] = self.temperature
        return new  # type: ignore[return-value]

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(minitensor.rand(shape, dtype=probs.dtype))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None, validate_args: bool | None = None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs
