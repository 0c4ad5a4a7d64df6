r"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): the law of Σ_k x_k x_kᵀ for df draws
x_k ~ N(0, Σ) (df need not be an integer: any df > p - 1 for p×p matrices), carried by L with Σ = L Lᵀ.

    log_prob(X) = -ν (p/2 ln 2 + ln det L) - ln Γ_p(ν/2) + (ν - p - 1)/2 ln det X - ½ tr(Σ⁻¹ X)
    entropy = (p + 1)(p/2 ln 2 + ln det L) + ln Γ_p(ν/2) - (ν - p - 1)/2 ψ_p(ν/2) + ν p / 2
    mean = ν Σ,   mode = (ν - p - 1) Σ (NaN for ν ≤ p + 1),   variance_ij = ν (Σ_ij² + Σ_ii Σ_jj)
(ν = df, Γ_p and ψ_p the multivariate gamma and digamma functions.) An exponential family with natural
parameters (-Σ⁻¹/2, (ν - p - 1)/2).
Draws: Bartlett's decomposition, L A Aᵀ Lᵀ with A lower-triangular, A_ii = √χ²(ν - i), A_ij ~ N(0, 1) below
the diagonal; reparameterised through the χ² draws (Gamma's implicit gradient) and L.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import minitensor

from ..linalg import slogdet
from ..ops.special import digamma
from ..tensor import Size, Tensor
from . import constraints
from ._linalg import cholesky, precision_to_scale_tril, solve_lower
from .chi2 import Chi2
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_shape, diagonal, finfo, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """ψ_p(x) = Σ_{i<p} ψ(x - i/2), defined for x > (p - 1)/2."""
    return digamma(x.unsqueeze(-1) - minitensor.arange(p, dtype=x.dtype) / 2).sum(-1)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self._event_shape[-1] - 1)}

    def __init__(self, df: Tensor | float, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = minitensor.tensor(float(df), dtype=param.dtype)
        else:
            assert isinstance(df, Tensor)
            batch_shape = broadcast_shape(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = ("scale_tril" if scale_tril is not None else
                "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        setattr(self, name, param.expand(batch_shape + event_shape))
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < "
                          "ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self._unbroadcasted_scale_tril = precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(self.df, batch_shape)

    def _chi2(self, df: Tensor, batch_shape: tuple[int, ...]) -> Chi2:
        p = self._event_shape[-1]
        steps = minitensor.arange(p, dtype=self._unbroadcasted_scale_tril.dtype).expand(tuple(batch_shape) + (-1,))
        return Chi2(df.unsqueeze(-1) - steps)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> Wishart:
        new = type(self).__new__(type(self))
        batch_shape = tuple(batch_shape)
        cov_shape = batch_shape + tuple(self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(new.df, batch_shape)
        new._validate_args = self._validate_args
        return new

    def _full(self, matrix: Tensor) -> Tensor:
        return matrix.expand(tuple(self._batch_shape) + tuple(self._event_shape))

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._full(self._unbroadcasted_scale_tril)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        return self._full(lower @ lower.transpose(-2, -1))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        return self._full(self._precision())

    def _precision(self) -> Tensor:
        lower = self._unbroadcasted_scale_tril
        inverse = solve_lower(lower, minitensor.eye(lower.shape[-1], dtype=lower.dtype).expand(tuple(lower.shape)))
        return inverse.transpose(-2, -1) @ inverse

    def _df_matrix(self) -> Tensor:
        return self.df.reshape(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self._event_shape[-1] - 1
        factor = minitensor.where(factor <= 0, minitensor.full_like(factor, math.nan), factor)
        return factor.reshape(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        diag_v = diagonal(v)
        return self._df_matrix() * (v.square() + diag_v.unsqueeze(-1) * diag_v.unsqueeze(-2))

    def _bartlett_sampling(self, sample_shape: Any) -> Tensor:
        p = self._event_shape[-1]
        chi = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=float(finfo(self.df.dtype).eps))
        below = minitensor.randn(tuple(Size(sample_shape)) + tuple(self._batch_shape) + (p, p),
                                 dtype=chi.dtype).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (chi.diag_embed() + below)
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape: Any = Size(), max_try_correction: int | None = None) -> Tensor:
        """Bartlett draws; a draw that comes out singular (possible for ν close to p - 1) is drawn again, up to
        `max_try_correction` (10) times, with a warning, as PyTorch does."""
        tries = 10 if max_try_correction is None else max_try_correction
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample)
        if bool(singular.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(tries):
                sample = minitensor.where(singular.unsqueeze(-1).unsqueeze(-1), self._bartlett_sampling(sample_shape),
                                          sample)
                singular = ~self.support.check(sample)
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        half_log_det = diagonal(self._unbroadcasted_scale_tril).log().sum(-1)
        trace = (self._precision() * value).sum((-2, -1))  # tr(Σ⁻¹ X), X symmetric
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - minitensor.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * slogdet(value)[1] - trace / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self._event_shape[-1]
        half_log_det = diagonal(self._unbroadcasted_scale_tril).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + minitensor.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-slogdet(-2 * x)[1] + _LOG_2 * p) + minitensor.mvlgamma(y + (p + 1) / 2, p)
