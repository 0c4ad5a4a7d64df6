"""LogNormal(loc, scale): the law of exp(X) for X ~ Normal(loc, scale); a TransformedDistribution of that
Normal by ExpTransform, as in PyTorch.

    log_prob = ln N(ln x; loc, scale) - ln x,   cdf = Φ((ln x - loc) / scale),   icdf(u) = exp(Normal icdf(u))
    mean = e^(loc + scale²/2),   mode = e^(loc - scale²),   variance = (e^(scale²) - 1) e^(2 loc + scale²)
    entropy = H(Normal) + loc
"""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> LogNormal:
        return super().expand(batch_shape, _instance)  # type: ignore[return-value]

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.square() / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.square()
        return (s2.exp() - 1) * (2 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc
