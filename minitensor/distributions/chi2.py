r"""Chi2(df): the sum of df squared standard normals; Gamma(df / 2, rate ½).

    log_prob = (df/2 - 1) ln x - x/2 - (df/2) ln 2 - ln Γ(df/2);   mean = df,   variance = 2 df
"""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> Chi2:
        return super().expand(batch_shape, _instance)  # type: ignore[return-value]

    @property
    def df(self) -> Tensor:
        return self.concentration * 2
