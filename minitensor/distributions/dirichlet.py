"""Dirichlet(concentration): density Γ(Σα) / ΠΓ(α_i) Π x_i^(α_i - 1) on the simplex."""
from __future__ import annotations

from typing import Any

import minitensor

from ..ops.special import digamma, lgamma
from ..tensor import Size, Tensor
from . import constraints
from ._special import standard_gamma
from .exp_family import ExponentialFamily
from .utils import finfo, xlogy

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        a1 = (self.concentration - 1).clamp(min=0.0)
        mode = a1 / a1.sum(-1, keepdim=True)
        # every α < 1: the density is unbounded at every corner; PyTorch names the one its argmax of the
        # NaN row 0/0 gives (the first), and so does this
        corner = (mode.argmax(-1, keepdim=True) == minitensor.arange(a1.shape[-1])).to(a1.dtype)
        return minitensor.where((self.concentration < 1).all(-1, keepdim=True), corner, mode)

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        a0 = a.sum(-1, keepdim=True)
        return a * (a0 - a) / (a0.square() * (a0 + 1))

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """Independent standard Gamma(α_i) draws, divided by their sum (gradient to α as in Gamma.rsample)."""
        shape = tuple(self._extended_shape(sample_shape))
        g = standard_gamma(self.concentration.expand(shape))
        tiny = float(finfo(g.dtype).tiny)
        return (g / g.sum(-1, keepdim=True)).clamp(min=tiny, max=1 - float(finfo(g.dtype).eps))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return xlogy(a - 1.0, value).sum(-1) + lgamma(a.sum(-1)) - lgamma(a).sum(-1)

    def entropy(self) -> Tensor:
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return (lgamma(a).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0) - ((a - 1.0) * digamma(a)).sum(-1))

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return lgamma(x).sum(-1) - lgamma(x.sum(-1))
