r"""Kumaraswamy(concentration1, concentration0): density a b x^(a-1) (1 - x^a)^(b-1) on [0, 1] (a =
concentration1, b = concentration0); (1 - U^(1/b))^(1/a) for U ~ Uniform(0, 1) (a TransformedDistribution
by PowerTransform(1/b), AffineTransform(1, -1), PowerTransform(1/a)).

    E[Xⁿ] = b B(1 + n/a, b) = b Γ(1 + n/a) Γ(b) / Γ(1 + n/a + b);   mean = E[X],   variance = E[X²] - E[X]²
    mode = ((a - 1) / (a b - 1))^(1/a) (NaN where a < 1 or b < 1; PyTorch 2.13's formula swaps a and b and
           takes ln(1 - a), which is NaN for every a > 1, so its mode is NaN almost everywhere: a PyTorch bug)
    entropy = (1 - 1/b) + (1 - 1/a) H_b - ln a - ln b,   H_b = ψ(b + 1) + γ (the b-th harmonic number)
"""
from __future__ import annotations

import math
from typing import Any

import minitensor

from ..ops.special import digamma, lgamma
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a: Tensor, b: Tensor, n: int) -> Tensor:
    arg1 = 1 + n / a
    return b * (lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)).exp()


class Kumaraswamy(TransformedDistribution):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(minitensor.zeros_like(self.concentration0), minitensor.ones_like(self.concentration0),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> Kumaraswamy:
        new = type(self).__new__(type(self))
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)  # type: ignore[return-value]

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        undefined = (a < 1) | (b < 1)
        safe_a = minitensor.where(undefined, minitensor.full_like(a, 2.0), a)  # keeps the NaN out of the gradient
        log_mode = ((safe_a - 1).log() - (safe_a * b - 1).log()) / safe_a
        return minitensor.where(undefined, minitensor.full_like(log_mode, math.nan), log_mode.exp())

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.square()

    def entropy(self) -> Tensor:
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()
