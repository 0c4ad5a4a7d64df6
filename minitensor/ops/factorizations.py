r"""torch.linalg's remaining real factorizations (issue 29): `lu_factor_ex`, `householder_product`, and the
symmetric-indefinite LDL^T family `ldl_factor`, `ldl_factor_ex`, `ldl_solve`.

- `householder_product(A, tau)` is a composite of differentiable ops: Q = H_1 H_2 ... H_k (first n columns),
  H_i = I - tau_i v_i v_i^T, v_i = A's column i below the diagonal with a 1 on it. Applied right to left to the
  first n columns of the identity, each H_i X = X - tau_i v_i (v_i^T X): its gradient is that of the ops.
- `ldl_factor` is LAPACK's `sytf2` (lower) step for step: Bunch-Kaufman pivoting (alpha = (1 + sqrt 17) / 8)
  picks a 1x1 or a 2x2 pivot block at each column, so A = P L D L^T P^T with L unit lower triangular and D
  block diagonal; the result is packed as LAPACK's (L below the diagonal, D on it and on the subdiagonal of
  each 2x2 block; pivots 1-based, negative for a 2x2 block), which is what PyTorch returns. `ldl_solve` is
  LAPACK's `sytrs` on that packing. PyTorch has no derivative for either: their results do not require grad
  here (PyTorch records a node whose backward raises "not implemented").
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..tensor import Tensor
from ._util import return_type
from .decompositions import LinAlgError, lu_factor, matrix_float, square_float
from .indexing import tril
from .linalg import matmul


class lu_factor_ex_result(NamedTuple):
    LU: Tensor
    pivots: Tensor
    info: Tensor


class ldl_factor_result(NamedTuple):
    LD: Tensor
    pivots: Tensor


class ldl_factor_ex_result(NamedTuple):
    LD: Tensor
    pivots: Tensor
    info: Tensor


return_type(lu_factor_ex_result, "linalg_lu_factor_ex")
return_type(ldl_factor_result, "linalg_ldl_factor")
return_type(ldl_factor_ex_result, "linalg_ldl_factor_ex")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> lu_factor_ex_result:
    """(LU, pivots, info): `lu_factor`'s packing, and info 0 where U's diagonal has no zero, else the 1-based
    index of its first zero (the factorization exists, but `lu_solve` with it would divide by zero)."""
    LU, pivots = lu_factor(A, pivot=pivot)
    k = min(LU.shape[-2:])
    diagonal = np.diagonal(LU._array, axis1=-2, axis2=-1)[..., :k]
    zero = diagonal == 0
    info = np.where(zero.any(axis=-1), zero.argmax(axis=-1) + 1, 0).astype(np.int32)
    if check_errors and info.any():
        i = int(info[info > 0].flat[0])
        raise LinAlgError(f"linalg.lu_factor_ex: U[{i},{i}] is zero and using it on lu_solve would result in a "
                          "division by zero. If you still want to perform the factorization, consider calling "
                          "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return lu_factor_ex_result(LU, pivots, Tensor._make(info))


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^T (v_i: A's column i below the
    diagonal, 1 on it), as `geqrf` stores Q; A is (*, m, n) with m >= n >= k = tau.shape[-1]."""
    op = "linalg.householder_product"
    A = matrix_float(A, op)
    if not isinstance(tau, Tensor):
        raise TypeError(f"{op}: tau must be a Tensor, got {type(tau).__name__}")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to input.shape[-1], got {m} < {n}")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to input.shape[:-2], got tau of "
                           f"shape {tuple(tau.shape)} for input of shape {tuple(A.shape)}")
    k = tau.shape[-1]
    if n < k:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to tau.shape[-1], got {n} < {k}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{op}: Expected input and tau to have the same dtype, but input has dtype {A.dtype} and "
                           f"tau has dtype {tau.dtype}")
    eye = Tensor._make(np.eye(m, dtype=A._array.dtype))
    vectors = tril(A, -1) + eye[:, :n]  # (column i is v_i)
    Q = Tensor._make(np.broadcast_to(np.eye(m, n, dtype=A._array.dtype), A._array.shape).copy())
    for i in reversed(range(k)):
        v = vectors[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * matmul(v, matmul(v.mT, Q))
    return Q


# ---- LDL^T ---------------------------------------------------------------------------------------------

_ALPHA = (1 + math.sqrt(17)) / 8  # Bunch-Kaufman's threshold: it bounds the growth of L's entries


def _sytf2_lower(a):
    """LAPACK's dsytf2 (uplo = 'L') on one matrix, in place: (pivots 1-based, info)."""
    n = a.shape[0]
    ipiv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            imax = k + 1 + int(np.argmax(np.abs(a[k + 1:, k])))
            colmax = abs(a[imax, k])
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0 or math.isnan(absakk):
            info = info or k + 1
            kp = k
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:  # the largest off-diagonal magnitude in row/column imax of the trailing block
                row = np.abs(a[imax, k:imax])
                rowmax = row.max()
                if imax < n - 1:
                    rowmax = max(rowmax, np.abs(a[imax + 1:, imax]).max())
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif abs(a[imax, imax]) >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # swap rows and columns kk and kp of the trailing block (its lower triangle)
                if kp < n - 1:
                    a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
                segment = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
                a[kp, kk + 1:kp] = segment
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if kstep == 1:
                if k < n - 1:
                    d11 = 1 / a[k, k]
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= np.tril(d11 * np.outer(x, x))
                    a[k + 1:, k] *= d11
            elif k < n - 2:
                d21 = a[k + 1, k]
                d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
                t = 1 / (d11 * d22 - 1)
                d21 = t / d21
                for j in range(k + 2, n):
                    wk = d21 * (d11 * a[j, k] - a[j, k + 1])
                    wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
                    a[j:, j] -= a[j:, k] * wk + a[j:, k + 1] * wkp1
                    a[j, k], a[j, k + 1] = wk, wkp1
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return ipiv, info


def _sytrs_lower(a, ipiv, b):
    """LAPACK's dsytrs (uplo = 'L'): solves A X = B from dsytf2's packing, in place on b (n, nrhs)."""
    n = a.shape[0]
    k = 0
    while k < n:  # L D Y = P^T B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] /= a[k, k]
            k += 1
        else:
            kp = -ipiv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
            akm1k = a[k + 1, k]
            akm1, ak = a[k, k] / akm1k, a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = b[k] / akm1k, b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T P^T X = Y
        if ipiv[k] > 0:
            b[k] -= a[k + 1:, k] @ b[k + 1:]
            kp = ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= a[k + 1:, k] @ b[k + 1:]
            b[k - 1] -= a[k + 1:, k - 1] @ b[k + 1:]
            kp = -ipiv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> ldl_factor_ex_result:
    """(LD, pivots, info) with A = P L D L^T P^T, read from A's lower triangle (see the module's docstring);
    info > 0 is the 1-based index of an exactly zero diagonal block of D (A singular). `hermitian` is the
    same thing for real matrices."""
    op = "linalg.ldl_factor_ex"
    A = square_float(A, op)
    arrays = np.tril(A._array.astype(np.float64)).reshape((-1,) + A.shape[-2:])
    n = A.shape[-1]
    pivots = np.zeros((arrays.shape[0], n), np.int32)
    info = np.zeros(arrays.shape[0], np.int32)
    for i, a in enumerate(arrays):
        pivots[i], info[i] = _sytf2_lower(a)
    if check_errors and info.any():
        raise LinAlgError(f"{op}: The factorization could not be completed: D's diagonal element "
                          f"{int(info[info > 0][0])} is exactly zero (the matrix is singular).")
    batch = tuple(A.shape[:-2])
    LD = np.tril(arrays).reshape(A._array.shape).astype(A._array.dtype)
    return ldl_factor_ex_result(Tensor._make(LD), Tensor._make(pivots.reshape(batch + (n,))),
                                Tensor._make(info.reshape(batch)))


def ldl_factor(A: Tensor, *, hermitian: bool = False) -> ldl_factor_result:
    """(LD, pivots) with A = P L D L^T P^T (see `ldl_factor_ex`); a singular A (a zero block of D) raises."""
    LD, pivots, info = ldl_factor_ex(A, hermitian=hermitian)
    if info._array.any():
        raise LinAlgError(f"linalg.ldl_factor: The factorization could not be completed: D's diagonal element "
                          f"{int(info._array[info._array > 0].flat[0])} is exactly zero (the matrix is singular).")
    return ldl_factor_result(LD, pivots)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """X with A X = B, from `ldl_factor`'s (LD, pivots) of A (batch dims broadcast)."""
    op = "linalg.ldl_solve"
    LD, B = square_float(LD, op), matrix_float(B, op)
    if not isinstance(pivots, Tensor) or pivots._array.dtype != np.int32:
        raise RuntimeError(f"{op}: Expected pivots to be an int32 Tensor (as ldl_factor returns), got "
                           f"{getattr(pivots, 'dtype', type(pivots).__name__)}")
    if LD.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected LD and B to have the same dtype, but LD has dtype {LD.dtype} and B "
                           f"has dtype {B.dtype}")
    n = LD.shape[-1]
    if B.shape[-2] != n or tuple(pivots.shape[-1:]) != (n,):
        raise RuntimeError(f"{op}: Incompatible shapes of LD {tuple(LD.shape)}, pivots {tuple(pivots.shape)} and "
                           f"B {tuple(B.shape)}")
    batch = np.broadcast_shapes(LD.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    lds = np.broadcast_to(LD._array, batch + (n, n)).reshape((-1, n, n)).astype(np.float64)
    pivs = np.broadcast_to(pivots._array, batch + (n,)).reshape((-1, n))
    bs = np.broadcast_to(B._array, batch + tuple(B.shape[-2:])).reshape((-1,) + tuple(B.shape[-2:]))
    out = np.stack([_sytrs_lower(a, p, b.astype(np.float64)) for a, p, b in zip(lds, pivs, bs)]) if bs.size else bs
    return Tensor._make(out.reshape(batch + tuple(B.shape[-2:])).astype(B._array.dtype))
