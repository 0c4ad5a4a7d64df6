r"""Pareto(scale, alpha): density α scaleᵅ / x^(α+1) on x ≥ scale; scale · e^E with E ~ Exponential(α)
(a TransformedDistribution by ExpTransform then AffineTransform(0, scale)).

    mean = α scale / (α - 1) (inf for α ≤ 1),   variance = scale² α / ((α - 1)² (α - 2)) (inf for α ≤ 2)
    mode = scale,   entropy = ln(scale / α) + 1/α + 1
"""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale: Tensor | float, alpha: Tensor | float, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> Pareto:
        new = type(self).__new__(type(self))
        new.scale, new.alpha = self.scale.expand(batch_shape), self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        a = self.alpha.clamp(min=1)  # α ≤ 1: a division by zero, so inf, as PyTorch
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha.clamp(min=2)
        return self.scale.square() * a / ((a - 1).square() * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
