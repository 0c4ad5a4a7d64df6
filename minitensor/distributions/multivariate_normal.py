"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril): density
exp(-½ (x - μ)ᵀ Σ⁻¹ (x - μ)) / √((2π)ⁿ det Σ), carried by the lower Cholesky factor L of Σ = L Lᵀ."""
from __future__ import annotations

import math
from typing import Any

import minitensor

from ..tensor import Size, Tensor
from . import constraints
from ._linalg import cholesky, precision_to_scale_tril, solve_lower, solve_lower_vec
from .distribution import Distribution
from .utils import broadcast_shape, diagonal, lazy_property

__all__ = ["MultivariateNormal"]


def batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """|L⁻¹ diff|², the squared Mahalanobis distance, broadcast over leading dims."""
    return solve_lower_vec(scale_tril, diff).square().sum(-1)


class MultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None, precision_matrix: Tensor | None = None,
                 scale_tril: Tensor | None = None, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrix = given[0]
        name = ("scale_tril" if scale_tril is not None else
                "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = broadcast_shape(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(batch_shape + tuple(matrix.shape[-2:])))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self._unbroadcasted_scale_tril = precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> MultivariateNormal:
        new = super().expand(batch_shape, _instance)
        new.__dict__["_unbroadcasted_scale_tril"] = self._unbroadcasted_scale_tril
        return new  # type: ignore[return-value]

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.transpose(-2, -1)).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        inverse = solve_lower(lower, minitensor.eye(lower.shape[-1], dtype=lower.dtype).expand(tuple(lower.shape)))
        return (inverse.transpose(-2, -1) @ inverse).expand(tuple(self._batch_shape) + tuple(self._event_shape) * 2)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        shape = tuple(self._batch_shape) + tuple(self._event_shape)
        return self._unbroadcasted_scale_tril.square().sum(-1).expand(shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        """loc + L ε with ε ~ N(0, I) drawn apart: the gradient reaches loc and the matrix given."""
        eps = minitensor.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return diagonal(self._unbroadcasted_scale_tril).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self._event_shape[0]
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h if not self._batch_shape else h.expand(self._batch_shape)
