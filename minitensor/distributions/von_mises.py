r"""VonMises(loc, concentration): the circular normal, density e^(κ cos(x - loc)) / (2π I₀(κ)) for an angle x
(κ = concentration; loc and x any reals, read modulo 2π).

    log_prob = κ cos(x - loc) - ln 2π - ln I₀(κ),   ln I₀(κ) = ln i0e(κ) + κ (i0e(κ) = e^-κ I₀(κ), which
               does not overflow)
    mean = mode = loc (the circular mean),   variance = 1 - I₁(κ)/I₀(κ) (the circular variance)
Draws: Best and Fisher's (1979) rejection sampler, in float64, from minitensor's generator; not
reparameterised (as in PyTorch).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import minitensor

from ..ops.special import i0e, i1e
from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["VonMises"]


def _log_i0(k: Tensor) -> Tensor:
    return i0e(k).log() + k


def _rejection_sample(loc: np.ndarray, kappa: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Best-Fisher: a wrapped Cauchy envelope with parameter r, draws accepted until every entry has one."""
    from ..random import _gen

    tau = 1 + np.sqrt(1 + 4 * kappa ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))  # Taylor form for tiny κ
    r, kappa, loc = (np.broadcast_to(a, shape) for a in (r, kappa, loc))
    x = np.zeros(shape)
    done = np.zeros(shape, dtype=bool)
    while not done.all():
        u1, u2, u3 = _gen().random((3,) + shape)
        z = np.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = kappa * (r - f)
        with np.errstate(divide="ignore", invalid="ignore"):
            accept = ((c * (2 - c) - u2) > 0) | (np.log(c / u2) + 1 - c >= 0)
        accept &= ~done
        x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)), x)
        done |= accept
    return np.mod(x + math.pi + loc, 2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Tensor | float, concentration: Tensor | float, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self.concentration * (value - self.loc).cos() - math.log(2 * math.pi) - _log_i0(self.concentration)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        """Angles in [-π, π), drawn in float64 (single precision can stall the rejection loop at tiny κ)."""
        shape = tuple(self._extended_shape(sample_shape))
        loc = self.loc.detach().numpy().astype(np.float64)
        kappa = self.concentration.detach().numpy().astype(np.float64)
        return minitensor.tensor(_rejection_sample(loc, kappa, shape), dtype=self.loc.dtype)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        k = self.concentration
        return 1 - (i1e(k) / i0e(k))  # the e^-κ factors cancel
