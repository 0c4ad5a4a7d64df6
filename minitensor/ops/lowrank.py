r"""Low-rank and partial decompositions (issue 29, h-names29): `svd_lowrank`, `pca_lowrank`, `lobpcg`.

`svd_lowrank(A, q)` is the randomized SVD of Halko, Martinsson and Tropp (2009): a Gaussian test matrix
R (n x q) from the global generator, Q an orthonormal basis of A R sharpened by `niter` power
iterations (each one a QR of A^T Q, then of A Q), and the SVD of the small q x n matrix Q^T A:

    A ~ Q Q^T A = (Q U_B) diag(S) V^T,     U_B S V^T = svd(Q^T A)

A wide A is handled through its transpose (the basis is taken on the longer side). `pca_lowrank` is the
same on A minus its column means (center=True). When q reaches A's rank the basis spans A's range, and
the result is A's exact (thin) SVD. Both are compositions of matmul, `linalg.qr` and `linalg.svd`, so
their gradients are those ops' gradients. The test matrix comes from minitensor's generator, so for a
q below the rank the approximation differs from PyTorch's draw by draw (not in quality).

`lobpcg(A, k)` returns the k largest (or smallest) eigenpairs of the symmetric A, or of the generalized
problem A x = lambda B x. PyTorch iterates LOBPCG to a tolerance, which pays off for large sparse or
implicit A; minitensor's tensors are dense, so it solves the problem directly: B = L L^T (Cholesky),
C = L^{-1} A L^{-T}, eigh(C) = (lambda, Y), X = L^{-T} Y (B-orthonormal columns, as LOBPCG's). The
eigenpairs are LOBPCG's limit, exact where PyTorch's stop within `tol`; the arguments that steer the
iteration (X's start, iK, niter, tol, method, tracker, ortho_*) are checked and otherwise not needed.
A is symmetrized as (A + A^T) / 2 first, as PyTorch's gradient does, and the gradient flows through
eigh (also into B, where PyTorch raises that it does not support one for B).
"""
from __future__ import annotations

from typing import Any

from .. import _dtype, factories as F
from ..tensor import Tensor
from .decompositions import cholesky, eigh, qr, svd
from .linalg import matmul
from .matrix import solve_triangular


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V) with A - M ~ U diag(S) V^T of rank q, by randomized subspace iteration.

    forward: Q = orth(A R) sharpened niter times;  U_B S V^T = svd(Q^T A);  U = Q U_B
    VJP:     through matmul, linalg.qr and linalg.svd (R, the random draw, is a constant)
    """
    A = _float_matrix(A, "svd_lowrank")
    for name, value in (("q", q), ("niter", niter)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise TypeError(f"svd_lowrank: {name} must be an int, got {type(value).__name__}")
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = A.shape[-2] < A.shape[-1]
    if wide:  # the basis is found on the longer side
        A = A.mT
        M = M.mT if M is not None else None
    centered = A if M is None else A - M
    Q = _range_basis(centered, q, niter)
    U, S, Vh = svd(matmul(Q.mT, centered), full_matrices=False)
    U, V = matmul(Q, U), Vh.mT
    return (V, S, U) if wide else (U, S, V)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S, V): `svd_lowrank` of A with its column means taken off (center=True); V's columns are the
    principal directions, S**2 / (m - 1) the variances along them.

    forward: svd_lowrank(A - mean(A, rows), q)
    VJP:     through the centering and svd_lowrank's matmul, qr and svd
    """
    A = _float_matrix(A, "pca_lowrank")
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=-2, keepdim=True)
    return svd_lowrank(A, q, niter=niter)


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None, n: int | None = None,
           iK: Tensor | None = None, niter: int | None = None, tol: float | None = None, largest: bool | None = None,
           method: str | None = None, tracker: None = None, ortho_iparams: dict[str, int] | None = None,
           ortho_fparams: dict[str, float] | None = None,
           ortho_bparams: dict[str, bool] | None = None) -> tuple[Tensor, Tensor]:
    """(E, X): the k largest (largest=False: smallest) eigenvalues of A x = E B x (B = I if None), in that
    order, and their B-orthonormal eigenvectors as X's columns.

    forward: L L^T = B,  eigh(L^-1 A_sym L^-T) = (E, Y),  X = L^-T Y,  A_sym = (A + A^T) / 2
    VJP:     through the symmetrization, cholesky, the triangular solves and eigh
    """
    A = _float_matrix(A, "lobpcg")
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {tuple(A.shape)}")
    if B is not None and tuple(B.shape) != tuple(A.shape):
        raise AssertionError(f"A and B must have same shape, got {tuple(A.shape)} vs {tuple(B.shape)}")
    if method not in (None, "basic", "ortho"):
        raise ValueError(f"lobpcg: method must be 'basic' or 'ortho', got {method!r}")
    size = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else int(k)
    n = (k if n is None else n) if X is None else X.shape[-1]
    if size < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={size}) is smaller "
                         f"than 3 x the number of requested eigenpairs (={n})")
    largest = True if largest is None else largest
    A = (A + A.mT) / 2
    if B is None:
        values, vectors = eigh(A)
    else:
        L = cholesky(B)
        C = solve_triangular(L, solve_triangular(L, A, upper=False).mT, upper=False)  # L^-1 A L^-T
        values, Y = eigh((C + C.mT) / 2)
        vectors = solve_triangular(L.mT, Y, upper=True)
    if largest:
        return values.flip(-1)[..., :k], vectors.flip(-1)[..., :k]
    return values[..., :k], vectors[..., :k]


# ---- helpers -------------------------------------------------------------------------------------------

def _range_basis(A: Tensor, q: int, niter: int) -> Tensor:
    """Q (m x q, orthonormal columns) whose span holds A's dominant left singular vectors."""
    R = F.randn(A.shape[-1], q, dtype=A.dtype)
    Q = qr(matmul(A, R)).Q
    for _ in range(niter):
        Q = qr(matmul(A.mT, Q)).Q
        Q = qr(matmul(A, Q)).Q
    return Q


def _float_matrix(A: Any, op: str) -> Tensor:
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}: A must be a Tensor, got {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{op}: A must have at least 2 dimensions, got shape {tuple(A.shape)}")
    if _dtype.kind(A._array.dtype) != "f":  # (PyTorch's products with its float random basis refuse them)
        raise RuntimeError(f"{op}: expected a floating point tensor, got dtype {A.dtype}")
    return A
