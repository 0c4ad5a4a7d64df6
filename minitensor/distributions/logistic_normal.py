r"""LogisticNormal(loc, scale): the law on the simplex of StickBreakingTransform(X) for X ~ Normal(loc, scale)
(independent over the last dim): a K-vector of normals becomes a point of the (K+1)-simplex.

    log_prob(y) = Σ ln N(x; loc, scale) - ln |det J_stick(x)|,   x = stick-breaking⁻¹(y)
"""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        base_dist: Distribution = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> LogisticNormal:
        return super().expand(batch_shape, _instance)  # type: ignore[return-value]

    @property
    def loc(self) -> Tensor:
        return self.base_dist.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.base_dist.scale

