r"""RelaxedOneHotCategorical(temperature, probs | logits): the Concrete / Gumbel-softmax relaxation of
OneHotCategorical on the simplex (Jang et al. 2017; Maddison et al. 2017); exp(S) for S ~
ExpRelaxedCategorical (a TransformedDistribution by ExpTransform).

ExpRelaxedCategorical(τ, logits l) over K classes: S = log_softmax((l + G) / τ), G iid Gumbel(0, 1);
    log_prob(s) = ln Γ(K) + (K - 1) ln τ + Σ_k (l_k - τ s_k) - K logsumexp_k(l_k - τ s_k)
"""
from __future__ import annotations

import math
from typing import Any, cast

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> ExpRelaxedCategorical:
        new = type(self).__new__(type(self))
        new.temperature = self.temperature
        new._categorical = cast(Categorical, self._categorical.expand(batch_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        u = clamp_probs(minitensor.rand(shape, dtype=self.logits.dtype))
        gumbels = -((-u.log()).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        log_scale = math.lgamma(k) + (k - 1) * self.temperature.log()
        score = self.logits - value * self.temperature
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs
