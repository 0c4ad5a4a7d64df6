r"""LKJCholesky(dim, concentration=1.): the lower Cholesky factor L of a dim×dim correlation matrix C = L Lᵀ
drawn from the LKJ law (Lewandowski, Kurowicka and Joe 2009), density ∝ det(C)^(η - 1) (η = concentration;
η = 1 is uniform over correlation matrices, larger η favours the identity).

On the factor, with the Jacobian of L ↦ L Lᵀ:  p(L) ∝ Π_{i=2..dim} L_ii^(2(η - 1) + dim - i), and
    ln Z = ½ (dim - 1) ln π + ln Γ_{dim-1}(α - ½) - (dim - 1) ln Γ(α),   α = η + (dim - 1)/2
(Γ_p the multivariate gamma function).
Draws: the onion method on the factor: row i is √y_i times a uniform direction in its first i entries,
y_i ~ Beta(i - ½, η + (dim - 2)/2 - (i - 1)/2) for row i ≥ 1 (the paper's section 3.2), the diagonal completing the unit
norm. Not reparameterised.
"""
from __future__ import annotations

import math
from typing import Any

import minitensor

from ..ops.special import lgamma
from ..tensor import Size, Tensor
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, finfo

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration: Tensor | float = 1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # row i's squared off-diagonal norm is Beta(i - ½, η + (dim - 2)/2 - (i - 1)/2) (row 0 has none: a Beta(½, ·)
        # is drawn for it and ignored, which keeps the draw vectorised)
        marginal_conc = self.concentration + 0.5 * (dim - 2)
        offset = minitensor.cat([minitensor.zeros(1, dtype=self.concentration.dtype),
                                 minitensor.arange(dim - 1, dtype=self.concentration.dtype)])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Distribution | None = None) -> LKJCholesky:
        new = type(self).__new__(type(self))
        batch_shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with minitensor.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = minitensor.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            norm = u_normal.square().sum(-1, keepdim=True).sqrt()
            first_row = minitensor.arange(self.dim).unsqueeze(-1) == 0  # row 0 is all zeros: 0/0, taken as 0
            u_hypersphere = minitensor.where(first_row, minitensor.zeros_like(u_normal),
                                             u_normal / minitensor.where(first_row, minitensor.ones_like(norm), norm))
            w = y.sqrt() * u_hypersphere
            diag = (1 - w.square().sum(-1)).clamp(min=float(finfo(w.dtype).tiny)).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = minitensor.arange(2, self.dim + 1, dtype=self.concentration.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag_elems.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + minitensor.mvlgamma(alpha - 0.5, dm1) - lgamma(alpha) * dm1
        return unnormalized - normalize
