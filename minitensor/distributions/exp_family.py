r"""ExponentialFamily: distributions with density p(x; θ) = h(x) exp(⟨θ, t(x)⟩ - F(θ)).

θ are the natural parameters (`_natural_params`), F the log normalizer (`_log_normalizer`), and
E[ln h(x)] the mean carrier measure (`_mean_carrier_measure`). The entropy then follows from F alone,
since ∇F(θ) = E[t(x)]:
    H = F(θ) - ⟨θ, ∇F(θ)⟩ - E[ln h(x)],
with ∇F taken by minitensor's autograd (its graph kept, so the entropy is differentiable in θ).
"""
from __future__ import annotations

from typing import Any

import minitensor

from ..tensor import Tensor
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any, **kwargs: Any) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """F(θ) - ⟨θ, ∇F(θ)⟩ - E[ln h(x)], ∇F by autograd at θ detached (the Bregman form PyTorch uses)."""
        result: Any = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with minitensor.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = minitensor.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for param, grad in zip(nparams, gradients):
            result = result - (param * grad).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
