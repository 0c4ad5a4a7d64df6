"""Cholesky factor and triangular solves for MultivariateNormal, as composites of minitensor's ops.

minitensor has no linalg ops yet; these loops over the n rows are exact (the textbook algorithms,
one row at a time, batched over leading dims) and differentiable through the ops they use. They
cost O(n) to O(n²) small ops, fine for the event sizes of tutorials. When `minitensor.linalg`
gains `cholesky` / `solve_triangular`, those are used instead.
"""
from __future__ import annotations

from typing import Any

import minitensor

from ..tensor import Tensor


def _linalg(name: str) -> Any:
    return getattr(getattr(minitensor, "linalg", None), name, None)


def cholesky(a: Tensor) -> Tensor:
    """L lower-triangular with L Lᵀ = a, for a symmetric positive-definite (..., n, n)."""
    op = _linalg("cholesky")
    if op is not None:
        return op(a)
    a = (a + a.transpose(-2, -1)) / 2  # reads both triangles, so its gradient is symmetric, as PyTorch's
    n = a.shape[-1]
    rows: list[list[Tensor]] = []  # rows[i][j] = L[..., i, j] for j <= i
    for i in range(n):
        row: list[Tensor] = []
        for j in range(i + 1):
            other = row if j == i else rows[j]  # row j of L (row i itself on the diagonal)
            s = a[..., i, j]
            for k in range(j):
                s = s - row[k] * other[k]
            row.append(s.sqrt() if i == j else s / rows[j][j])
        rows.append(row)
    zero = minitensor.zeros_like(a[..., 0, 0])
    return minitensor.stack([minitensor.stack(r + [zero] * (n - len(r)), -1) for r in rows], -2)


def solve_lower(lower: Tensor, b: Tensor) -> Tensor:
    """x with lower @ x = b, for lower (..., n, n) lower-triangular and b (..., n, m), by forward substitution."""
    op = _linalg("solve_triangular")
    if op is not None:
        return op(lower, b, upper=False)
    n = lower.shape[-1]
    xs: list[Tensor] = []  # xs[i] = x[..., i, :]
    for i in range(n):
        s = b[..., i, :]
        if i:
            s = s - (lower[..., i, :i].unsqueeze(-1) * minitensor.stack(xs, -2)).sum(-2)
        xs.append(s / lower[..., i, i].unsqueeze(-1))
    return minitensor.stack(xs, -2)


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
