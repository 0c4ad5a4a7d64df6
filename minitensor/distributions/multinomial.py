r"""Multinomial(total_count=1, probs | logits): counts of each of K classes over total_count independent
draws of a Categorical(probs). An event is a length-K count vector summing to total_count.

    log_prob = ln n! - Σ ln x_k! + Σ x_k ln p_k,   n = Σ x_k
    mean = n p,   variance = n p (1 - p)
    entropy = n H(Categorical) - ln n! + Σ_k E[ln x_k!],  x_k ~ Binomial(n, p_k) (summed over its support)
"""
from __future__ import annotations

from typing import Any, cast

import minitensor

from ..ops.special import lgamma
from ..tensor import Size, Tensor
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_shape

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> Multinomial:
        new = type(self).__new__(type(self))
        new.total_count = self.total_count
        new._categorical = cast(Categorical, self._categorical.expand(batch_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._binomial = Binomial(total_count=self.total_count, probs=new.probs, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """total_count Categorical draws per event, counted per class (in probs' dtype)."""
        with minitensor.no_grad():
            draws = self._categorical.sample((self.total_count,) + tuple(Size(sample_shape)))
            k = self._event_shape[0]
            one_hot = (draws.unsqueeze(-1) == minitensor.arange(k)).to(self.probs.dtype)
            return one_hot.sum(0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        shape = tuple(broadcast_shape(tuple(logits.shape), tuple(value.shape)))
        logits, value = logits.expand(shape), value.expand(shape)
        # a class of probability 0 that was never drawn adds 0 · (-inf), taken as 0
        logits = minitensor.where((value == 0) & logits.isneginf(), minitensor.zeros_like(logits), logits)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self) -> Tensor:
        n = minitensor.tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = lgamma(support + 1)
        return term1 + (binomial_probs * weights).sum((0, -1))
