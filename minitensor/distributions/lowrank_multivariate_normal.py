r"""LowRankMultivariateNormal(loc, cov_factor, cov_diag): a multivariate normal with covariance Σ = W Wᵀ + D
(W = cov_factor, n×m with m small; D = diag(cov_diag) > 0), worked through the m×m capacitance matrix
C = I + Wᵀ D⁻¹ W (its Cholesky factor L_C) so nothing n×n is factored:

    ln det Σ = 2 Σ ln diag(L_C) + Σ ln D                        (the matrix determinant lemma)
    xᵀ Σ⁻¹ x = xᵀ D⁻¹ x - |L_C⁻¹ Wᵀ D⁻¹ x|²                      (the Woodbury identity)
    log_prob = -½ (n ln 2π + ln det Σ + (x - loc)ᵀ Σ⁻¹ (x - loc)),   entropy = ½ (n (1 + ln 2π) + ln det Σ)
    variance = Σ_j W_ij² + D_i;   draws loc + W ε_W + √D ε_D (ε's standard normal), reparameterised
"""
from __future__ import annotations

import math
from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from ._linalg import cholesky, solve_lower
from .distribution import Distribution
from .multivariate_normal import batch_mahalanobis
from .utils import broadcast_shape, diagonal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _capacitance_tril(w: Tensor, d: Tensor) -> Tensor:
    m = w.shape[-1]
    k = (w.transpose(-2, -1) / d.unsqueeze(-2)) @ w
    return cholesky(k + minitensor.eye(m, dtype=k.dtype))


def _lowrank_logdet(w: Tensor, d: Tensor, capacitance_tril: Tensor) -> Tensor:
    return 2 * diagonal(capacitance_tril).log().sum(-1) + d.log().sum(-1)


def _lowrank_mahalanobis(w: Tensor, d: Tensor, x: Tensor, capacitance_tril: Tensor) -> Tensor:
    wt_dinv_x = ((w.transpose(-2, -1) / d.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x.square() / d).sum(-1) - batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        n = loc.shape[-1]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2] != n:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {n} x m")
        if tuple(cov_diag.shape[-1:]) != (n,):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {Size((n,))}")
        try:
            shape = broadcast_shape(tuple(loc.shape) + (1,), tuple(cov_factor.shape),
                                                tuple(cov_diag.shape) + (1,))
        except (ValueError, RuntimeError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        shape = tuple(shape)
        self.loc = loc.expand(shape[:-1])
        self.cov_factor = cov_factor.expand(shape)
        self.cov_diag = cov_diag.expand(shape[:-1])
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(shape[:-2], (n,), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> LowRankMultivariateNormal:
        new = type(self).__new__(type(self))
        batch_shape = tuple(batch_shape)
        n = self._event_shape[0]
        new.loc = self.loc.expand(batch_shape + (n,))
        new.cov_diag = self.cov_diag.expand(batch_shape + (n,))
        new.cov_factor = self.cov_factor.expand(batch_shape + tuple(self.cov_factor.shape[-2:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        var = self._unbroadcasted_cov_factor.square().sum(-1) + self._unbroadcasted_cov_diag
        return var.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        w = self._unbroadcasted_cov_factor
        cov = w @ w.transpose(-2, -1) + self._unbroadcasted_cov_diag.diag_embed()
        return cov.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """D⁻¹ - Aᵀ A with A = L_C⁻¹ Wᵀ D⁻¹ (Woodbury)."""
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        wt_dinv = w.transpose(-2, -1) / d.unsqueeze(-2)
        shape = tuple(broadcast_shape(tuple(self._capacitance_tril.shape[:-2]),
                                                  tuple(wt_dinv.shape[:-2])))
        m = self._capacitance_tril.shape[-1]
        rhs = wt_dinv.expand(shape + tuple(wt_dinv.shape[-2:]))
        a = solve_lower(self._capacitance_tril.expand(shape + (m, m)), rhs)
        precision = d.reciprocal().diag_embed() - a.transpose(-2, -1) @ a
        return precision.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return cholesky(self.covariance_matrix)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        eps_w = minitensor.randn(shape[:-1] + (self.cov_factor.shape[-1],), dtype=self.loc.dtype)
        eps_d = minitensor.randn(shape, dtype=self.loc.dtype)
        lowrank = (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1)
        return self.loc + lowrank + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        m = _lowrank_mahalanobis(w, d, diff, self._capacitance_tril)
        log_det = _lowrank_logdet(w, d, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self) -> Tensor:
        log_det = _lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                  self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if not self._batch_shape else h.expand(tuple(self._batch_shape))
