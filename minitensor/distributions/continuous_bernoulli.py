r"""ContinuousBernoulli(probs | logits, lims=(0.499, 0.501)): density C(λ) λˣ (1 - λ)^(1-x) on [0, 1]
(λ = probs), the continuous relaxation of Bernoulli of Loaiza-Ganem and Cunningham (2019).

    C(λ) = 2 atanh(1 - 2λ) / (1 - 2λ) = |ln(1 - λ) - ln λ| / |1 - 2λ|   (→ 2 at λ = ½)
    log_prob = x ln λ + (1 - x) ln(1 - λ) + ln C(λ)
    mean = λ / (2λ - 1) + 1 / (ln(1 - λ) - ln λ),   variance = λ (λ - 1) / (1 - 2λ)² + 1 / (ln(1 - λ) - ln λ)²
    cdf = (λˣ (1 - λ)^(1-x) + λ - 1) / (2λ - 1),   icdf(u) = (ln(1 - λ + u (2λ - 1)) - ln(1 - λ)) / (ln λ - ln(1 - λ))
    entropy = mean (ln(1 - λ) - ln λ) - ln C(λ) - ln(1 - λ)
Within `lims` of ½ these are 0/0, so a Taylor expansion in (λ - ½) is used there (λ held at lims[0] in
the exact branch, so its gradient stays finite). An exponential family in the natural parameter logits.
Draws: icdf(u), u ~ U(0, 1), reparameterised.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from .exp_family import ExponentialFamily
from .utils import bce_with_logits, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs: Tensor | float | None = None, logits: Tensor | float | None = None,
                 lims: tuple[float, float] = (0.499, 0.501), validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)  # type: ignore[arg-type]
            self._param = self.logits
        self._lims = lims
        super().__init__(Size() if is_scalar else self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = super().expand(batch_shape, _instance)
        new.__dict__["_param"] = new.__dict__["probs" if "probs" in self.__dict__ else "logits"]
        return new  # type: ignore[return-value]

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.shape

    def _outside_unstable_region(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return minitensor.where(self._outside_unstable_region(), self.probs,
                                self._lims[0] * minitensor.ones_like(self.probs))

    def _cont_bern_log_norm(self) -> Tensor:
        """ln C(λ) as a function of probs: the exact form away from ½, its Taylor series near it."""
        cut = self._cut_probs()
        below = minitensor.where(cut <= 0.5, cut, minitensor.zeros_like(cut))
        above = minitensor.where(cut >= 0.5, cut, minitensor.ones_like(cut))
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - minitensor.where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).square()
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return minitensor.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.square()) * x
        return minitensor.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        var = cut * (cut - 1.0) / (1.0 - 2.0 * cut).square() + 1.0 / ((-cut).log1p() - cut.log()).square()
        x = (self.probs - 0.5).square()
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return minitensor.where(self._outside_unstable_region(), var, taylor)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        u = minitensor.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with minitensor.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        u = minitensor.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -bce_with_logits(logits, value) + self._cont_bern_log_norm()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = minitensor.where(self._outside_unstable_region(), cdfs, value)
        return minitensor.where(value <= 0.0, minitensor.zeros_like(value),
                                minitensor.where(value >= 1.0, minitensor.ones_like(value), unbounded))

    def icdf(self, value: Tensor) -> Tensor:
        cut = self._cut_probs()
        exact = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return minitensor.where(self._outside_unstable_region(), exact, value)

    def entropy(self) -> Tensor:
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        """ln ∫₀¹ e^(x t) dt = ln((eˣ - 1) / x), with its Taylor series near x = 0."""
        unstable = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = minitensor.where(unstable, x, (self._lims[0] - 0.5) * minitensor.ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.square() / 24.0 - x.pow(4) / 2880.0
        return minitensor.where(unstable, log_norm, taylor)
