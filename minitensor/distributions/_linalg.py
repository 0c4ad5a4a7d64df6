"""Cholesky factor and triangular solves for MultivariateNormal.

The Cholesky factor and the triangular solve with a matrix right-hand side are `minitensor.linalg`'s
(`cholesky`, `solve_triangular`); the solve with a vector right-hand side, broadcast over the leading
dims of both, is forward substitution written with minitensor's ops, one row at a time (exact, and
differentiable through the ops it uses; fine for the event sizes of tutorials).
"""
from __future__ import annotations

import minitensor

from ..linalg import cholesky, solve_triangular
from ..tensor import Tensor

__all__ = ["cholesky", "precision_to_scale_tril", "solve_lower", "solve_lower_vec"]


def solve_lower(lower: Tensor, b: Tensor) -> Tensor:
    """x with lower @ x = b, for lower (..., n, n) lower-triangular and b (..., n, m)."""
    return solve_triangular(lower, b, upper=False)


def solve_lower_vec(lower: Tensor, b: Tensor) -> Tensor:
    """x with lower @ x = b for a vector b (..., n), broadcast over the leading dims of both."""
    n = lower.shape[-1]
    xs: list[Tensor] = []
    for i in range(n):
        s = b[..., i]
        if i:
            s = s - (lower[..., i, :i] * minitensor.stack(xs, -1)).sum(-1)
        xs.append(s / lower[..., i, i])
    return minitensor.stack(xs, -1)


def precision_to_scale_tril(p: Tensor) -> Tensor:
    """L lower-triangular with L Lᵀ = p⁻¹: the Cholesky factor of the flipped p, flipped back and inverted
    (p = U Uᵀ with U upper-triangular, so p⁻¹ = U⁻ᵀ U⁻¹ and L = U⁻ᵀ)."""
    flipped = cholesky(p.flip((-2, -1)))
    l_inv = flipped.flip((-2, -1)).transpose(-2, -1)
    eye = minitensor.eye(p.shape[-1], dtype=p.dtype).expand(tuple(l_inv.shape))
    return solve_lower(l_inv, eye)
