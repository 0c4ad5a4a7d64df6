r"""Matrix decompositions and functions of a matrix: det, inverse, solve, cholesky, qr, svd, eigh,
lu_factor and matrix_exp, each on the last two dims (any batch dims in front).

A decomposition with several results (qr's Q and R, svd's U, S and Vh ...) is one node whose output
packs the results side by side along a last dim (`_pack`); the public functions read them back
with slices, so the gradients of the parts reach the node as one packed `g`, which `_unpack`
splits again. Every VJP is written with Tensor ops (solve, matmul, tril ...), so it is itself
differentiable. Real matrices only: eigenvalues of a non-symmetric matrix are complex in general,
and minitensor has no complex dtype, so `eig` and `eigvals` are not provided.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import _dtype
from .._fperr import quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import return_type, unbroadcast
from .indexing import tril, triu, where
from .shape import cat


class LinAlgError(RuntimeError):
    """A matrix the op can't factor or invert (singular, not positive-definite), as torch.linalg.LinAlgError."""


class Det(Function):
    r"""out = det(A)
    VJP: gA = g adj(A)^T = g det(A) A^{-T}   (at a singular A, where A^{-1} doesn't exist, the adjugate is
         read from the SVD A = U S V^T: adj(A)^T = det(U V^T) U diag(\prod_{j != i} s_j) V^T)"""

    @staticmethod
    @quietly("over", "under", "invalid")
    def forward(ctx, a):
        return np.linalg.det(a._array)

    @staticmethod
    def backward(ctx, g):
        (a,), out = ctx.inputs, ctx.output
        if np.all(out._array != 0):
            return (g * out).unsqueeze(-1).unsqueeze(-1) * Inverse.apply(a).mT
        u, s, vh = svd(a, full_matrices=False)
        rot = Tensor._make(np.linalg.det(u._array) * np.linalg.det(vh._array))
        adj = (u * _prod_of_others(s).unsqueeze(-2)) @ vh
        return (g * rot).unsqueeze(-1).unsqueeze(-1) * adj


class LogAbsDet(Function):
    r"""out = ln |det(A)|   (slogdet's second result; its sign has no gradient)
    VJP: gA = g A^{-T}"""

    @staticmethod
    def forward(ctx, a):
        return np.linalg.slogdet(a._array)[1]

    @staticmethod
    def backward(ctx, g):
        return g.unsqueeze(-1).unsqueeze(-1) * Inverse.apply(ctx.inputs[0]).mT


class Inverse(Function):
    r"""out = A^{-1}
    VJP: gA = -out^T g out^T   (from d(A^{-1}) = -A^{-1} dA A^{-1})"""

    @staticmethod
    def forward(ctx, a):
        return _lapack(np.linalg.inv, "linalg.inv", a._array)

    @staticmethod
    def backward(ctx, g):
        out = ctx.output
        return -(out.mT @ g @ out.mT)


class Solve(Function):
    r"""X = A^{-1} B   (the solution of A X = B; B is a batch of (n, k) matrices, batch dims broadcast)
    VJP: gB = A^{-T} g = solve(A^T, g);  gA = -gB X^T"""

    @staticmethod
    def forward(ctx, a, b):
        return _lapack(np.linalg.solve, "linalg.solve", a._array, b._array)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        gb = Solve.apply(a.mT, g)
        ga = unbroadcast(-(gb @ ctx.output.mT), a.shape) if ctx.needs_input_grad[0] else None
        return ga, unbroadcast(gb, b.shape) if ctx.needs_input_grad[1] else None


class Cholesky(Function):
    r"""L = cholesky(A):  A = L L^T, L lower triangular with a positive diagonal (A symmetric positive-definite)
    VJP: P = Phi(L^T gL)  (Phi: the lower triangle, its diagonal halved);  gA = sym(L^{-T} P L^{-1}),
         sym(X) = (X + X^T) / 2   (A is read as symmetric: the gradient is too)"""

    @staticmethod
    def forward(ctx, a):
        return _lapack(np.linalg.cholesky, "linalg.cholesky", a._array)

    @staticmethod
    def backward(ctx, g):
        low = ctx.output
        p = _phi(low.mT @ tril(g))
        s = Solve.apply(low.mT, p)  # L^{-T} P
        s = Solve.apply(low.mT, s.mT).mT  # ... L^{-1}
        return (s + s.mT) * 0.5


class QR(Function):
    r"""A = Q R, Q (m, k) with orthonormal columns, R (k, n) upper triangular, k = min(m, n) (reduced);
    the output packs [Q, R].
    VJP: (m >= n) M = R gR^T - gQ^T Q;  gA = (gQ + Q copyltu(M)) R^{-T},  copyltu(M) = tril(M) + tril(M, -1)^T
    (m < n: A = [X | Y] with X square: gY = Q gR_Y, and X's VJP is the formula with gQ + Y gR_Y^T, gR_X)"""

    @staticmethod
    def forward(ctx, a):
        q, r = np.linalg.qr(a._array, mode="reduced")
        return _pack(a._array.shape[:-2], q, r)

    @staticmethod
    def backward(ctx, g):
        a = ctx.inputs[0]
        m, n = a.shape[-2:]
        k = min(m, n)
        q, r = _unpack(ctx.output, (m, k), (k, n))
        gq, gr = _unpack(g, (m, k), (k, n))
        if m >= n:
            return _qr_vjp(q, r, gq, gr)
        y, gr_x, gr_y = a[..., :, m:], gr[..., :, :m], gr[..., :, m:]
        gx = _qr_vjp(q, r[..., :, :m], gq + y @ gr_y.mT, gr_x)
        return cat([gx, q @ gr_y], dim=-1)


class SVD(Function):
    r"""A = U diag(S) Vh, U (m, k), S (k) descending, Vh (k, n), k = min(m, n); the output packs [U, S, Vh].
    VJP: (distinct non-zero singular values) with F_ij = 1 / (s_j^2 - s_i^2) (0 on the diagonal), V = Vh^T,
         J = F * (U^T gU - gU^T U),  K = F * (V^T gV - gV^T V),
         gA = U (J S + diag(gS) + S K) Vh + (I - U U^T) gU S^{-1} Vh + U S^{-1} gV^T (I - V V^T)
         (the last two terms only for a non-square A)"""

    @staticmethod
    def forward(ctx, a):
        u, s, vh = np.linalg.svd(a._array, full_matrices=False)
        return _pack(a._array.shape[:-2], u, s, vh)

    @staticmethod
    def backward(ctx, g):
        m, n = ctx.inputs[0].shape[-2:]
        k = min(m, n)
        u, s, vh = _unpack(ctx.output, (m, k), (k,), (k, n))
        gu, gs, gvh = _unpack(g, (m, k), (k,), (k, n))
        v, gv = vh.mT, gvh.mT
        f = _gap_inverse(s * s)
        s_row = s.unsqueeze(-2)  # S as a row: X * s_row is X S
        j = f * (u.mT @ gu - gu.mT @ u)
        kk = f * (v.mT @ gv - gv.mT @ v)
        inner = j * s_row + _diag_embed(gs) + s.unsqueeze(-1) * kk
        ga = u @ inner @ vh
        if m > k:
            ga = ga + (gu - u @ (u.mT @ gu)) / s_row @ vh
        if n > k:
            ga = ga + (u / s_row) @ (gv.mT - (gv.mT @ v) @ vh)
        return ga


class Eigh(Function):
    r"""A = Q diag(L) Q^T for a symmetric A (read from the triangle `UPLO` names), L ascending;
    the output packs [L, Q].
    VJP: (distinct eigenvalues) gA = Q (diag(gL) + F * (X - X^T) / 2) Q^T,  X = Q^T gQ,
         F_ij = 1 / (L_j - L_i), 0 on the diagonal   (only X's skew part moves an orthogonal Q: the gradient is
         symmetric, as A is)"""

    @staticmethod
    def forward(ctx, a, uplo):
        w, q = np.linalg.eigh(a._array, UPLO=uplo)
        return _pack(a._array.shape[:-2], w, q)

    @staticmethod
    def backward(ctx, g):
        n = ctx.inputs[0].shape[-1]
        w, q = _unpack(ctx.output, (n,), (n, n))
        gw, gq = _unpack(g, (n,), (n, n))
        f = _gap_inverse(w)
        x = q.mT @ gq
        return q @ (_diag_embed(gw) + f * (x - x.mT) * 0.5) @ q.mT, None


class MatrixExp(Function):
    r"""out = exp(A) = \sum_k A^k / k!   (scaling and squaring of a Taylor polynomial)
    VJP: gA = the top-right block of exp([[A^T, g], [0, A^T]])   (the block-matrix identity for the
         Frechet derivative: d exp(A)[E] is the top-right block of exp([[A, E], [0, A]]))"""

    @staticmethod
    @quietly("over", "invalid")
    def forward(ctx, a):
        return _expm(a._array)

    @staticmethod
    def backward(ctx, g):
        at = ctx.inputs[0].mT
        n = at.shape[-1]
        block = cat([cat([at, g], dim=-1), cat([at * 0, at], dim=-1)], dim=-2)
        return MatrixExp.apply(block)[..., :n, n:]


class LUFactor(Function):
    r"""P^T A = L U with partial pivoting: L unit lower triangular, U upper triangular; the output packs
    LU (L's strict lower part and U in one matrix, as LAPACK) and the pivots (as numbers: no gradient).
    VJP: (square A) with gL = tril(gLU, -1), gU = triu(gLU),
         gA = P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}"""

    @staticmethod
    def forward(ctx, a):
        lu, piv = _lu(a._array)
        return _pack(a._array.shape[:-2], lu, piv.astype(lu.dtype))

    @staticmethod
    def backward(ctx, g):
        m, n = ctx.inputs[0].shape[-2:]
        if m != n:
            raise RuntimeError(f"lu_factor: the gradient is implemented for square matrices only, got ({m}, {n})")
        lu, piv = _unpack(ctx.output, (n, n), (n,))
        glu, _ = _unpack(g, (n, n), (n,))
        low = tril(lu, -1) + _eye_like(lu)
        up = triu(lu)
        inner = tril(low.mT @ tril(glu, -1), -1) + triu(triu(glu) @ up.mT)
        x = Solve.apply(low.mT, inner)  # L^{-T} (...)
        x = Solve.apply(up, x.mT).mT  # ... U^{-T}
        perm = pivots_to_permutation(piv._array.astype(np.int64))
        return x[_rows_back(perm)]


# ---- the public functions -----------------------------------------------------------------------

class slogdet_result(NamedTuple):
    """What `slogdet` returns: the sign of the determinant, and the log of its absolute value."""

    sign: Tensor
    logabsdet: Tensor


class qr_result(NamedTuple):
    """What `qr` returns: Q with orthonormal columns and the upper-triangular R."""

    Q: Tensor
    R: Tensor


class svd_result(NamedTuple):
    """What `linalg.svd` returns: A = U diag(S) Vh."""

    U: Tensor
    S: Tensor
    Vh: Tensor


class eigh_result(NamedTuple):
    """What `eigh` returns: the eigenvalues (ascending) and the eigenvectors (as columns)."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class lu_factor_result(NamedTuple):
    """What `lu_factor` returns: L and U packed in one matrix, and the row swaps (1-based, as LAPACK)."""

    LU: Tensor
    pivots: Tensor


class torch_slogdet_result(NamedTuple):
    """What `torch.slogdet` (and `Tensor.slogdet`) returns: linalg.slogdet's pair under the older name."""

    sign: Tensor
    logabsdet: Tensor


# printed under PyTorch's names: torch.linalg.slogdet gives torch.return_types.linalg_slogdet(...),
# torch.slogdet the same pair as torch.return_types.slogdet(...)
return_type(slogdet_result, "linalg_slogdet")
return_type(torch_slogdet_result, "slogdet")
return_type(qr_result, "linalg_qr")
return_type(svd_result, "linalg_svd")
return_type(eigh_result, "linalg_eigh")
return_type(lu_factor_result, "linalg_lu_factor")


@with_formulas(Det)
def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix of A (..., n, n)."""
    return Det.apply(square_float(A, "linalg.det"))


@with_formulas(LogAbsDet)
def slogdet(A: Tensor) -> slogdet_result:
    """(sign, ln|det|) of each square matrix: the determinant without its overflow or underflow."""
    A = square_float(A, "linalg.slogdet")
    sign = np.linalg.slogdet(A._array)[0].astype(A._array.dtype)
    return slogdet_result(Tensor._make(np.asarray(sign)), LogAbsDet.apply(A))


def torch_det(input: Tensor) -> Tensor:
    """torch.det(input): linalg.det under torch's name for its argument.

    forward: out = det(A)
    VJP:     Det's
    """
    return det(input)


def torch_slogdet(input: Tensor) -> torch_slogdet_result:
    """torch.slogdet(input): linalg.slogdet under torch's name for its argument.

    forward: (sign, ln|det A|)
    VJP:     Det's, through ln|det|
    """
    return torch_slogdet_result(*slogdet(input))


def torch_matrix_exp(input: Tensor) -> Tensor:
    """torch.matrix_exp(input): linalg.matrix_exp under torch's name for its argument.

    forward: out = exp(A)
    VJP:     MatrixExp's
    """
    return matrix_exp(input)


def logdet(input: Tensor) -> Tensor:
    """ln det(A): NaN where the determinant is negative, -inf where it is 0 (a composite of slogdet).

    forward: out = ln det(A)   (NaN where det < 0)
    VJP:     gA = g A^{-T}   (LogAbsDet's)
    """
    sign, logabs = slogdet(input)
    return where(sign < 0, float("nan"), logabs)


@with_formulas(Inverse)
def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix (a LinAlgError for a singular one)."""
    return Inverse.apply(square_float(A, "linalg.inv"))


@with_formulas(Solve)
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A X = B (left=True) or X A = B (left=False); B may be a (batch of) vector(s)."""
    A = square_float(A, "linalg.solve")
    same_dtype(A, B, "linalg.solve")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        b = B.unsqueeze(-1)
    else:
        b = B if left else B.mT
    a = A if left else A.mT
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise RuntimeError(f"linalg.solve: incompatible shapes of A {tuple(A.shape)} and B {tuple(B.shape)}")
    x = Solve.apply(a, b)
    if vector:
        return x.squeeze(-1)
    return x if left else x.mT


@with_formulas(Cholesky)
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """L with A = L L^T (or U = L^T with A = U^T U when upper) for a symmetric positive-definite A.

    forward: L with A = L L^T (U = L^T when upper)
    VJP:     Cholesky's: gA = sym(L^{-T} Phi(L^T gL) L^{-1})
    """
    low = Cholesky.apply(square_float(A, "linalg.cholesky"))
    return low.mT if upper else low


@with_formulas(QR)
def qr(A: Tensor, mode: str = "reduced") -> qr_result:
    """A = Q R. mode 'reduced': Q (m, k), R (k, n); 'complete': Q (m, m), R (m, n); 'r': R only (Q empty)."""
    A = matrix_float(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"linalg.qr: qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    m, n = A.shape[-2:]
    k = min(m, n)
    if mode == "complete" and m > n:  # the extra columns of Q are not determined by A: no gradient through them
        q, r = np.linalg.qr(A._array, mode="complete")
        if A.requires_grad:
            raise RuntimeError("linalg.qr: the QR decomposition is not differentiable when mode='complete' and "
                               f"nrows > ncols (shape {tuple(A.shape)})")
        return qr_result(Tensor._make(q), Tensor._make(r))
    q, r = _unpack(QR.apply(A), (m, k), (k, n))
    if mode == "r":
        return qr_result(Tensor._make(np.zeros((0,), A._array.dtype)), r)
    return qr_result(q, r)


@with_formulas(SVD)
def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> svd_result:
    """A = U diag(S) Vh with S descending. full_matrices (the default, as PyTorch) completes U and Vh to
    square orthogonal matrices; the gradient flows through their first min(m, n) columns only."""
    A = matrix_float(A, "linalg.svd")
    m, n = A.shape[-2:]
    k = min(m, n)
    u, s, vh = _unpack(SVD.apply(A), (m, k), (k,), (k, n))
    if full_matrices and m != n:
        uf, _, vhf = np.linalg.svd(A._array, full_matrices=True)
        if m > k:
            u = cat([u, Tensor._make(np.ascontiguousarray(uf[..., :, k:]))], dim=-1)
        if n > k:
            vh = cat([vh, Tensor._make(np.ascontiguousarray(vhf[..., k:, :]))], dim=-2)
    return svd_result(u, s, vh)


def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values, descending (SVD's S; its gradient needs no distinct values: gA = U diag(gS) Vh)."""
    return svd(A, full_matrices=False).S


@with_formulas(Eigh)
def eigh(A: Tensor, UPLO: str = "L") -> eigh_result:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix, read from its lower (UPLO='L') or
    upper ('U') triangle."""
    A = square_float(A, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    n = A.shape[-1]
    w, q = _unpack(Eigh.apply(A, UPLO), (n,), (n, n))
    return eigh_result(w, q)


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of a symmetric matrix, ascending."""
    return eigh(A, UPLO).eigenvalues


@with_formulas(MatrixExp)
def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) = I + A + A^2/2! + ... of each square matrix."""
    return MatrixExp.apply(square_float(A, "linalg.matrix_exp"))


@with_formulas(LUFactor)
def lu_factor(A: Tensor, *, pivot: bool = True) -> lu_factor_result:
    """LU with partial pivoting, packed as LAPACK: (LU, pivots), pivots 1-based int32, A = P L U."""
    A = matrix_float(A, "linalg.lu_factor")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    m, n = A.shape[-2:]
    k = min(m, n)
    lu, piv = _unpack(LUFactor.apply(A), (m, n), (k,))
    return lu_factor_result(lu, Tensor._make(piv._array.astype(np.int32)))


# ---- the math the forwards and backwards share --------------------------------------------------

def _pack(batch, *arrays):
    """The arrays (*batch, *part shape) flattened after the batch dims and joined along one last dim."""
    flat = [a.reshape(batch + (math.prod(a.shape[len(batch):]),)) for a in arrays]
    return np.concatenate(flat, axis=-1)


def _unpack(t, *shapes):
    """The parts `_pack` joined, as Tensors of the given trailing shapes (slices and reshapes: differentiable)."""
    parts, start = [], 0
    batch = tuple(t.shape[:-1])
    for s in shapes:
        size = math.prod(s)
        parts.append(t[..., start:start + size].reshape(batch + tuple(s)))
        start += size
    return parts


def _phi(x):
    """The lower triangle of x with its diagonal halved (Cholesky's VJP)."""
    return tril(x) - _diag_embed(_diagonal(x) * 0.5)


def _diagonal(x):
    n = min(x.shape[-2:])
    i = np.arange(n)
    return x[..., i, i]


def _diag_embed(v):
    """(..., n) -> (..., n, n) with v on the diagonal (a product with the identity: differentiable)."""
    n = v.shape[-1]
    return v.unsqueeze(-1) * Tensor._make(np.eye(n, dtype=v._array.dtype))


def _eye_like(x):
    return Tensor._make(np.broadcast_to(np.eye(x.shape[-1], dtype=x._array.dtype), x.shape).copy())


def _gap_inverse(w):
    r"""F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (SVD's and eigh's VJPs)."""
    d = w.unsqueeze(-2) - w.unsqueeze(-1)
    eye = Tensor._make(np.eye(w.shape[-1], dtype=bool))
    return where(eye, 0.0, 1.0 / where(eye, 1.0, d))


def _prod_of_others(s):
    r"""For each i: \prod_{j != i} s_j (Det's adjugate at a singular matrix)."""
    n = s.shape[-1]
    eye = Tensor._make(np.eye(n, dtype=bool))
    return where(eye, 1.0, s.unsqueeze(-2)).prod(dim=-1)


def _qr_vjp(q, r, gq, gr):
    m = r @ gr.mT - gq.mT @ q
    copied = tril(m) + tril(m, -1).mT
    b = gq + q @ copied
    return Solve.apply(r, b.mT).mT  # b R^{-T}


@quietly("over", "invalid")
def _expm(a):
    """exp(a) for a batch of square matrices: a / 2^s has norm <= 1/2, where 18 Taylor terms are exact
    to float64's precision, then the result is squared s times."""
    if a.size == 0:
        return a.copy()
    norm = np.abs(a).sum(axis=-2).max(axis=-1).max()
    s = max(0, int(np.ceil(np.log2(norm))) + 1) if np.isfinite(norm) and norm > 0 else 0
    x = a / 2.0 ** s
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    out, term = eye.copy(), eye.copy()
    for k in range(1, 19):
        term = term @ x / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out.astype(a.dtype, copy=False)


def _lu(a):
    """LU with partial pivoting of each (m, n) matrix: (LU packed, pivots 1-based int32), LAPACK's getrf."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    work = a.reshape((-1, m, n)).astype(a.dtype, copy=True)
    piv = np.zeros((work.shape[0], k), np.int32)
    rows = np.arange(work.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(k):
            p = j + np.argmax(np.abs(work[:, j:, j]), axis=-1)
            piv[:, j] = p + 1
            top = work[rows, j].copy()
            work[rows, j] = work[rows, p]
            work[rows, p] = top
            pivot = work[:, j, j:j + 1]
            safe = np.where(pivot == 0, 1, pivot)
            work[:, j + 1:, j] = np.where(pivot == 0, work[:, j + 1:, j], work[:, j + 1:, j] / safe)
            work[:, j + 1:, j + 1:] -= work[:, j + 1:, j:j + 1] * work[:, j:j + 1, j + 1:]
    return work.reshape(a.shape), piv.reshape(batch + (k,))


def pivots_to_permutation(piv, m=None):
    """perm (of m rows) with A[perm] = L U, from LAPACK's 1-based row swaps (row j swapped with row
    piv[j] - 1, for each j in turn)."""
    k = piv.shape[-1]
    m = k if m is None else m
    flat = piv.reshape(-1, k) - 1
    perm = np.broadcast_to(np.arange(m), (flat.shape[0], m)).copy()
    rows = np.arange(flat.shape[0])
    for j in range(k):
        p = flat[:, j]
        top = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = top
    return perm.reshape(piv.shape[:-1] + (m,))


def _rows_back(perm):
    """An index putting the rows of P^T X (X[perm]) back in A's order: the inverse permutation."""
    inverse_perm = np.argsort(perm, axis=-1)
    batch = perm.shape[:-1]
    grid = np.indices(batch) if batch else ()
    return (*[gi[..., None] for gi in grid], inverse_perm)


# ---- argument checks, named ---------------------------------------------------------------------

def matrix_float(A: Any, op: str) -> Tensor:
    """A as a batch of float matrices, or a clear error (PyTorch's linalg takes no integers)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(A).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions, got shape {tuple(A.shape)}")
    if _dtype.kind(A._array.dtype) != "f" or A._array.dtype == np.float16:
        raise NotImplementedError(f"{op}: Expected a floating point tensor as input. Got {A.dtype}")
    return A


def square_float(A: Any, op: str) -> Tensor:
    A = matrix_float(A, op)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    return A


def same_dtype(A: Tensor, B: Any, op: str) -> None:
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: expected B to be a Tensor, got {type(B).__name__}")
    if B.dtype != A.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of type {A.dtype} and B "
                           f"of type {B.dtype} instead")


def _lapack(fn, op, *arrays):
    """numpy's LAPACK call, its failure raised as PyTorch's LinAlgError naming the op."""
    try:
        with np.errstate(all="ignore"):
            return fn(*arrays)
    except np.linalg.LinAlgError as e:
        why = ("the input is not positive-definite" if "positive" in str(e).lower()
               else "the input matrix is singular")
        raise LinAlgError(f"{op}: The factorization or inversion could not be completed because {why} "
                          f"(shape {arrays[0].shape})") from None
