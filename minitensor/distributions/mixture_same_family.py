r"""MixtureSameFamily(mixture_distribution, component_distribution): a mixture of K components of one family;
the component's rightmost batch dim (size K) indexes them, a Categorical over K weighs them.

    log_prob(x) = logsumexp_k (ln π_k + ln p_k(x)),   cdf(x) = Σ_k π_k F_k(x),   mean = Σ_k π_k μ_k
    variance = Σ_k π_k σ_k² + Σ_k π_k (μ_k - mean)²   (the law of total variance)
Draws: a component index from the Categorical, then that component's draw (no reparameterisation,
as in PyTorch).
"""
from __future__ import annotations

from typing import Any, cast

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class _MixtureSupport(constraints.Constraint):
    """The component's support, checked on the value broadcast against every component and then reduced
    over the mixture dim (a value inside one component's support is inside the mixture's)."""

    def __init__(self, base: constraints.Constraint) -> None:
        self.base_constraint = base

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        unsqueezed = value.unsqueeze(-1 - self.event_dim)
        return self.base_constraint.check(unsqueezed).all(-1)


class MixtureSameFamily(Distribution):
    arg_constraints: dict[str, constraints.Constraint] = {}
    has_rsample = False

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mdbs = tuple(mixture_distribution.batch_shape)
        cdbs = tuple(component_distribution.batch_shape[:-1])
        for size1, size2 in zip(reversed(mdbs), reversed(cdbs)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({Size(mdbs)}) is not compatible with "
                                 f"`component_distribution.batch_shape`({Size(cdbs)})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1] if len(component_distribution.batch_shape) else None
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> MixtureSameFamily:
        batch_shape = tuple(batch_shape)
        new = type(self).__new__(type(self))
        new._component_distribution = self._component_distribution.expand(batch_shape + (self._num_component,))
        new._mixture_distribution = cast(Categorical, self._mixture_distribution.expand(batch_shape))
        new._num_component, new._event_ndims = self._num_component, self._event_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        return _MixtureSupport(self._component_distribution.support)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x: Tensor) -> Tensor:
        cat_batch_ndims = len(self._mixture_distribution.batch_shape)
        pad_ndims = 0 if cat_batch_ndims == 1 else len(self._batch_shape) - cat_batch_ndims
        shape = tuple(x.shape)
        return x.reshape(shape[:-1] + (1,) * pad_ndims + shape[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture_dimensions(self._mixture_distribution.probs)
        comp = self._component_distribution
        mean_cond_var = (probs * comp.variance).sum(-1 - self._event_ndims)
        var_cond_mean = (probs * (comp.mean - self._pad(self.mean)).square()).sum(-1 - self._event_ndims)
        return mean_cond_var + var_cond_mean

    def cdf(self, x: Tensor) -> Tensor:
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_mix_prob = self._mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with minitensor.no_grad():
            sample_shape = tuple(Size(sample_shape))
            gather_dim = len(sample_shape) + len(self._batch_shape)
            es = tuple(self._event_shape)
            mix_sample = self._mixture_distribution.sample(sample_shape)
            comp_samples = self._component_distribution.sample(sample_shape)
            index = mix_sample.reshape(tuple(mix_sample.shape) + (1,) * (len(es) + 1))
            index = index.expand(tuple(mix_sample.shape) + (1,) + es)
            return comp_samples.gather(gather_dim, index).squeeze(gather_dim)

    def __repr__(self) -> str:
        return f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})"
