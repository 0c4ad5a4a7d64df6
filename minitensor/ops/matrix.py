r"""torch.linalg's composites and torch's older matrix functions, built from the decompositions
(ops/decompositions.py), matmul and the reductions: norms, pinv, lstsq, matrix_power, lu and
lu_solve, triangular solves, distances, covariance. Each is exact in terms of those ops, so its
gradient is theirs; none has a Function of its own.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import _dtype
from ..autograd.torch_names import shown_as
from ..tensor import Tensor, _wrap_dim
from . import decompositions as D, reduce as R
from ._util import broadcast_shapes as _broadcast_shapes, no_bool, return_type, tensor_input
from .decompositions import LinAlgError, matrix_float, pivots_to_permutation, square_float
from .indexing import tril, triu, where
from .linalg import matmul
from .scans import cumprod
from .shape import cat

# ---- norms ----------------------------------------------------------------------------------------


def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    r"""(\sum |x|^ord)^(1/ord) over dim (all dims when None); ord inf: max |x|, -inf: min |x|, 0: the non-zeros."""
    x = x if dtype is None else x.to(dtype)
    _float_input(x, "linalg.vector_norm")
    if dim is None and keepdim and x.ndim:  # PyTorch keeps every dim as size 1
        return vector_norm(x, ord, tuple(range(x.ndim)), True)
    return R.norm(x, p=ord, dim=dim, keepdim=keepdim)


def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    r"""'fro': sqrt(\sum a_ij^2); 'nuc': \sum s_i; 2 / -2: the largest / smallest singular value;
    1 / -1: the largest / smallest column sum of |A|; inf / -inf: the same of the row sums."""
    A = A if dtype is None else A.to(dtype)
    _float_input(A, "linalg.matrix_norm")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions, got shape "
                           f"{tuple(A.shape)}")
    d0, d1 = (_wrap_dim(d, A.ndim, "linalg.matrix_norm") for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different, got {tuple(dim)}")
    if ord == "fro":
        return R.norm(A, dim=(d0, d1), keepdim=keepdim)
    if ord in ("nuc", 2, -2):
        s = D.svdvals(A.movedim((d0, d1), (-2, -1)))
        out = s.sum(dim=-1) if ord == "nuc" else (R.amax(s, dim=-1) if ord == 2 else R.amin(s, dim=-1))
        return _keep_two(out, A.ndim, d0, d1) if keepdim else out
    if ord in (1, -1, float("inf"), float("-inf")):
        summed, other = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(dim=summed, keepdim=True)
        out = R.amax(sums, dim=other, keepdim=True) if ord > 0 else R.amin(sums, dim=other, keepdim=True)
        return out if keepdim else out.squeeze((d0, d1))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(input: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """A vector norm (dim an int, or A 1-D) or a matrix norm (dim two ints, or A 2-D); ord None: the 2-norm of
    the flattened tensor, or Frobenius for two dims."""
    A = input  # (PyTorch names the argument `input` here, `A` in the rest of torch.linalg)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is None and ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if dim is not None and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number: s_max / s_min (p None or 2), s_min / s_max (-2), else norm(A, p) norm(A^{-1}, p)."""
    if p in (None, 2, -2):
        s = D.svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    square_float(A, "linalg.cond")
    return matrix_norm(A, p) * matrix_norm(D.inv(A), p)


# ---- inverses, solves and factorizations ------------------------------------------------------------

def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False) -> Tensor:
    """The pseudo-inverse V diag(1/s) U^T, singular values under max(atol, rtol * s_max) taken as 0
    (rtol defaults to eps * max(m, n) when neither is given)."""
    A = matrix_float(A, "linalg.pinv")
    u, s, vh = D.svd(A, full_matrices=False)
    cutoff = _cutoff(A, s, atol, rtol)
    keep = Tensor._make(s._array > cutoff)
    s_inv = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
    return (vh.mT * s_inv.unsqueeze(-2)) @ u.mT


def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
                hermitian: bool = False) -> Tensor:
    """How many singular values exceed max(atol, rtol * s_max) (int64, no gradient)."""
    A = matrix_float(A, "linalg.matrix_rank")
    s = np.linalg.svd(A._array, compute_uv=False)
    cutoff = _cutoff(A, Tensor._make(s), atol, rtol)
    return Tensor._make(np.asarray((s > cutoff).sum(axis=-1), dtype=np.int64))


def torch_matrix_power(input: Tensor, n: int) -> Tensor:
    """torch.matrix_power(input, n): linalg.matrix_power under torch's name for its argument.

    forward: out = A^n
    VJP:     each Matmul's (and Inverse's) in turn
    """
    return matrix_power(input, n)


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A^n by repeated squaring (n = 0: the identity; n < 0: the inverse's power).

    forward: out = A^n   (A^{-1} for n < 0)
    VJP:     each Matmul's (and Inverse's) in turn
    """
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, got shape {tuple(A.shape)}")
    if n == 0:
        return Tensor._make(np.broadcast_to(np.eye(A.shape[-1], dtype=A._array.dtype), A.shape).copy())
    if n < 0:
        A, n = D.inv(A), -n
    out: Tensor | None = None
    base = A
    while n:
        if n & 1:
            out = base if out is None else matmul(out, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    assert out is not None
    return out


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (or X A = B) reading only A's upper or lower triangle (its diagonal as 1s if unitriangular)."""
    A = square_float(A, "linalg.solve_triangular")
    D.same_dtype(A, B, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError(f"linalg.solve_triangular: The input tensor B must have at least 2 dimensions, got "
                           f"shape {tuple(B.shape)}")
    tri = triu(A, 1 if unitriangular else 0) if upper else tril(A, -1 if unitriangular else 0)
    if unitriangular:
        tri = tri + D._eye_like(A)
    return D.solve(tri, B, left=left)


class lstsq_result(NamedTuple):
    """What `linalg.lstsq` returns (residuals and singular_values empty, as PyTorch's default driver 'gelsy')."""

    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> lstsq_result:
    """The least-squares solution X minimising |A X - B| (the least-norm one when A is rank-deficient): pinv(A) B."""
    A = matrix_float(A, "linalg.lstsq")
    D.same_dtype(A, B, "linalg.lstsq")
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    if b.shape[-2] != A.shape[-2]:
        raise RuntimeError(f"linalg.lstsq: input.size(-2) should match other.size(-2), got shapes "
                           f"{tuple(A.shape)} and {tuple(B.shape)}")
    x = matmul(pinv(A, rtol=rcond), b)
    empty = Tensor._make(np.zeros((0,), A._array.dtype))
    return lstsq_result(x.squeeze(-1) if vector else x, empty, matrix_rank(A, rtol=rcond), empty)


class inv_ex_result(NamedTuple):
    inverse: Tensor
    info: Tensor


class solve_ex_result(NamedTuple):
    result: Tensor
    info: Tensor


class cholesky_ex_result(NamedTuple):
    L: Tensor
    info: Tensor


class lu_result(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


# printed under PyTorch's names: torch.return_types.linalg_inv_ex(inverse=..., info=...)
return_type(lstsq_result, "linalg_lstsq")
return_type(inv_ex_result, "linalg_inv_ex")
return_type(solve_ex_result, "linalg_solve_ex")
return_type(cholesky_ex_result, "linalg_cholesky_ex")
return_type(lu_result, "linalg_lu")


def inv_ex(A: Tensor, *, check_errors: bool = False) -> inv_ex_result:
    """(inverse, info): info 0 where the matrix was inverted, > 0 where it is singular (its inverse then NaN)."""
    A = square_float(A, "linalg.inv_ex")
    info = _lu_info(A)
    if not info.any():
        return inv_ex_result(D.inv(A), Tensor._make(info))
    if check_errors:
        raise LinAlgError(f"linalg.inv_ex: The diagonal element {int(info.max())} is zero, the inversion could not "
                          "be completed because the input matrix is singular.")
    return inv_ex_result(Tensor._make(np.full(A.shape, np.nan, A._array.dtype)), Tensor._make(info))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> solve_ex_result:
    """(solution, info) as inv_ex: info > 0 where A is singular."""
    A = square_float(A, "linalg.solve_ex")
    info = _lu_info(A)
    if not info.any():
        return solve_ex_result(D.solve(A, B, left=left), Tensor._make(info))
    if check_errors:
        raise LinAlgError("linalg.solve_ex: The solver failed because the input matrix is singular.")
    shape = np.broadcast_shapes(A.shape[:-1], B.shape[:-1]) + B.shape[-1:] if B.ndim > 1 else B.shape
    return solve_ex_result(Tensor._make(np.full(shape, np.nan, A._array.dtype)), Tensor._make(info))


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> cholesky_ex_result:
    """(L, info): info 0 where A is positive-definite, else the order of its first leading minor that is not."""
    A = square_float(A, "linalg.cholesky_ex")
    flat = A._array.reshape((-1,) + A._array.shape[-2:])
    info = np.array([_first_bad_minor(a) for a in flat], np.int32).reshape(A._array.shape[:-2])
    if not info.any():
        return cholesky_ex_result(D.cholesky(A, upper=upper), Tensor._make(info))
    if check_errors:
        raise LinAlgError(f"linalg.cholesky_ex: The factorization could not be completed because the input is not "
                          f"positive-definite (the leading minor of order {int(info.max())} is not positive-definite).")
    return cholesky_ex_result(Tensor._make(np.full(A.shape, np.nan, A._array.dtype)), Tensor._make(info))


def lu(A: Tensor, *, pivot: bool = True) -> lu_result:
    """A = P L U: P a permutation matrix, L unit lower (m, k), U upper (k, n), read from lu_factor's packing."""
    lu_, piv = D.lu_factor(A, pivot=pivot)
    m, n = A.shape[-2:]
    k = min(m, n)
    perm = pivots_to_permutation(piv._array.astype(np.int64), m)
    p = np.zeros(A._array.shape[:-2] + (m, m), A._array.dtype)
    np.put_along_axis(p, perm[..., :, None], 1, axis=-1)
    low = tril(lu_[..., :, :k], -1) + Tensor._make(np.eye(m, k, dtype=A._array.dtype))
    return lu_result(Tensor._make(np.swapaxes(p, -1, -2).copy()), low, triu(lu_[..., :k, :]))


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False) -> Tensor:
    """X with A X = B (A^T X = B with adjoint; X A = B without left), A given by lu_factor's (LU, pivots)."""
    n = LU.shape[-1]
    low = tril(LU, -1) + Tensor._make(np.eye(n, dtype=LU._array.dtype))
    up = triu(LU)
    perm = pivots_to_permutation(pivots._array.astype(np.int64))
    pm = np.zeros(LU._array.shape[:-2] + (n, n), LU._array.dtype)
    np.put_along_axis(pm, perm[..., :, None], 1, axis=-1)  # pm @ A = L U
    P = Tensor._make(pm)
    a_like = (P.mT @ low @ up)  # A itself, in terms of LU's entries (so the gradient reaches LU)
    if adjoint:
        a_like = a_like.mT
    return D.solve(a_like, B, left=left)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of A read as a matrix with A.shape[:ind] rows and A.shape[ind:] columns."""
    if ind > A.ndim:
        raise RuntimeError(f"linalg.tensorinv: ind={ind} is more than the {A.ndim} dims of shape {tuple(A.shape)}")
    rows, cols = A.shape[:ind], A.shape[ind:]
    if ind <= 0 or math.prod(rows) != math.prod(cols):
        raise RuntimeError(f"linalg.tensorinv: Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got shape {tuple(A.shape)} and ind={ind}")
    return D.inv(A.reshape(math.prod(rows), math.prod(cols))).reshape(tuple(cols) + tuple(rows))


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B."""
    if dims is not None:
        A = A.movedim(list(dims), list(range(A.ndim - len(dims), A.ndim)))
    rest = A.shape[B.ndim:]
    n = math.prod(B.shape)
    if math.prod(rest) != n:
        raise RuntimeError(f"linalg.tensorsolve: Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), got shape "
                           f"{tuple(A.shape)} and other {tuple(B.shape)}")
    return D.solve(A.reshape(n, n), B.reshape(n)).reshape(tuple(rest))


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    r"""\sum_i x_i y_i along dim (broadcast)."""
    tensor_input(x, "linalg.vecdot", "x"), tensor_input(y, "linalg.vecdot", "y")
    if x.dtype != y.dtype:  # (one dtype, as PyTorch's kernel: a float32 and a float64 are refused, not promoted)
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_dtype.scalar_name(x.dtype)} and y of type {_dtype.scalar_name(y.dtype)} instead")
    if _dtype.kind(x.dtype) != "f":  # (PyTorch's vecdot checks it itself: RuntimeError)
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. "
                           f"Got {_dtype.scalar_name(x.dtype)}")
    return (x * y).sum(dim=dim)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of A over dims (dim1, dim2), offset above (> 0) or below (< 0) the main one, as the last dim."""
    tensor_input(A, "linalg.diagonal", "A")
    d1, d2 = _wrap_dim(dim1, A.ndim, "diagonal"), _wrap_dim(dim2, A.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal: dimensions cannot be identical {dim1}, {dim2}")
    x = A.movedim((d1, d2), (-2, -1))
    rows, cols = x.shape[-2:]
    start_r, start_c = max(-offset, 0), max(offset, 0)
    k = max(min(rows - start_r, cols - start_c), 0)
    i = np.arange(k)
    return x[..., start_r + i, start_c + i]


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    r"""a x b along dim (size 3): (a_2 b_3 - a_3 b_2, a_3 b_1 - a_1 b_3, a_1 b_2 - a_2 b_1), batch dims broadcast.

    forward: out = a x b along dim
    VJP:     ga = b x g;  gb = g x a
    """
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise RuntimeError(f"linalg.cross: shapes {tuple(input.shape)} and {tuple(other.shape)} cannot be "
                           "broadcast together") from None
    d = _wrap_dim(dim, len(shape), "linalg.cross")
    a, b = input.expand(shape), other.expand(shape)
    if input.ndim != other.ndim or input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3, got shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)}")
    no_bool(input, "linalg.cross")  # (PyTorch's kernel has no bool form, checked before the dtypes)
    if input.dtype != other.dtype:  # (PyTorch's cross does not promote)
        raise RuntimeError(f"linalg.cross: expected both inputs of one dtype, got {input.dtype} and {other.dtype}")
    ai = [a.narrow(d, i, 1) for i in range(3)]
    bi = [b.narrow(d, i, 1) for i in range(3)]
    return cat([ai[1] * bi[2] - ai[2] * bi[1], ai[2] * bi[0] - ai[0] * bi[2], ai[0] * bi[1] - ai[1] * bi[0]], dim=d)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    r"""(..., n, N) with columns x^0, x^1, ..., x^(N-1) (a running product: no 0^0 slope problem).

    forward: out[..., i, j] = x_i^j
    VJP:     gx_i = \sum_j g_ij j x_i^(j-1)   (Cumprod's)
    """
    tensor_input(x, "linalg.vander", "x")
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    no_bool(x, "linalg.vander", RuntimeError)  # (PyTorch's vander refuses bool itself)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError(f"linalg.vander: N must be greater than 1, got {N}")
    x = x.to(_dtype.int64) if x._array.dtype.kind in "biu" else x
    ones = Tensor._make(np.ones(tuple(x.shape) + (1,), x._array.dtype))
    if n == 1:
        return ones


    return cat([ones, cumprod(x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)), -1)], dim=-1)


# ---- torch's own names for these (older signatures) ---------------------------------------------------

def inverse(input: Tensor) -> Tensor:
    """torch.inverse: linalg.inv.

    forward: out = A^{-1}
    VJP:     gA = -out^T g out^T   (Inverse's)
    """
    return D.inv(input)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: linalg.pinv with singular values under rcond * s_max taken as 0.

    forward: out = V diag(1/s) U^T over the singular values above rcond * s_max
    VJP:     through SVD's VJP (distinct singular values)
    """
    return pinv(input, rtol=rcond)


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """torch.cholesky: linalg.cholesky (upper positional).

    forward: L with A = L L^T (U = L^T when upper)
    VJP:     Cholesky's: gA = sym(L^{-T} Phi(L^T gL) L^{-1})
    """
    return D.cholesky(input, upper=upper)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """X with A X = B, given B (input) and A's Cholesky factor (input2): two triangular solves.

    forward: X = (L L^T)^{-1} B   (two triangular solves)
    VJP:     Solve's for each solve: gB = A^{-T} g, gL through L L^T
    """
    low = input2.mT if upper else input2
    y = solve_triangular(low, input, upper=False)
    return solve_triangular(low.mT, y, upper=True)


def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """A^{-1} from A's Cholesky factor L (`input`): (L L^T)^{-1}.

    forward: out = (L L^T)^{-1}
    VJP:     Solve's, through cholesky_solve(I, L)
    """
    if input.ndim < 2:
        raise RuntimeError(f"cholesky_inverse: the input tensor A must have at least 2 dimensions, got shape "
                           f"{tuple(input.shape)}")
    if input.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, got shape {tuple(input.shape)}")
    low = input.mT if upper else input
    eye = D._eye_like(low)
    return cholesky_solve(eye, low)


class torch_qr_result(NamedTuple):
    """What torch.qr (and `Tensor.qr`) returns: linalg.qr's pair under the older name."""

    Q: Tensor
    R: Tensor


return_type(torch_qr_result, "qr")


def torch_qr(input: Tensor, some: bool = True) -> torch_qr_result:
    """torch.qr: linalg.qr, reduced when some else complete.

    forward: A = Q R   (linalg.qr)
    VJP:     QR's
    """
    return torch_qr_result(*D.qr(input, "reduced" if some else "complete"))


class svd_uv_result(NamedTuple):
    """What torch.svd returns: A = U diag(S) V^T (V, not Vh)."""

    U: Tensor
    S: Tensor
    V: Tensor


return_type(svd_uv_result, "svd")


def torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> svd_uv_result:
    """torch.svd: (U, S, V) with A = U diag(S) V^T; without compute_uv, U and V are zeros.

    forward: A = U diag(S) V^T   (linalg.svd, V = Vh^T)
    VJP:     SVD's (distinct singular values)
    """
    u, s, vh = D.svd(input, full_matrices=not some)
    if not compute_uv:
        z = input._array.dtype
        m, n = input.shape[-2:]
        return svd_uv_result(Tensor._make(np.zeros(tuple(input.shape[:-2]) + (m, m), z)), s,
                             Tensor._make(np.zeros(tuple(input.shape[:-2]) + (n, n), z)))
    return svd_uv_result(u, s, vh.mT)


def torch_lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """torch.lu_solve(b, LU, pivots): linalg.lu_solve(LU, pivots, b), b PyTorch's `input`.

    forward: X = A^{-1} b with A = P L U from lu_factor
    VJP:     Solve's on A = P L U, which reaches LU through L and U
    """
    return lu_solve(LU_data, LU_pivots, input)


class triangular_solve_result(NamedTuple):
    solution: Tensor
    cloned_coefficient: Tensor


return_type(triangular_solve_result, "triangular_solve")


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> triangular_solve_result:
    """(X, A clone) with A X = b (A^T X = b with transpose), A triangular, b PyTorch's `input`.

    forward: X = A^{-1} b, A read as triangular
    VJP:     Solve's: gb = A^{-T} g;  gA = -gb X^T on A's triangle
    """
    a = A.mT if transpose else A
    x = solve_triangular(a, input, upper=upper != transpose, unitriangular=unitriangular)
    return triangular_solve_result(x, A.clone())


def torch_cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """torch.cross: linalg.cross along dim, or (dim None) along the first dim of size 3.

    forward: out = a x b along dim
    VJP:     ga = b x g;  gb = g x a
    """
    if dim is None:
        shape = _broadcast_shapes("cross", tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return cross(input, other, dim=dim)


def torch_vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    r"""torch.vander: 1-D x, decreasing powers unless increasing.

    forward: out[i, j] = x_i^(N-1-j)   (x_i^j when increasing)
    VJP:     gx_i = \sum_j g_ij j x_i^(j-1)   (Cumprod's)
    """
    if x.ndim != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor, got shape {tuple(x.shape)}")
    out = vander(x, N=N)
    return out if increasing else out.flip(-1)


def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    r"""sqrt(\\sum x^2) over dim.

    forward: out = sqrt(\sum x^2) over dim
    VJP:     gx = g x / out
    """
    return R.norm(input, dim=dim, keepdim=keepdim)


def nuclear_norm(input: Tensor, dim: Any = (-2, -1), keepdim: bool = False) -> Tensor:
    r"""The sum of the singular values.

    forward: out = \sum_i s_i
    VJP:     gA = g U Vh   (SVD's)
    """
    if isinstance(dim, int):  # PyTorch reads one int as a 1-tuple: a dim out of range, else not two dims
        _wrap_dim(dim, input.ndim, "nuclear_norm")
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    return matrix_norm(input, "nuc", tuple(dim), keepdim)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of input - other (broadcast).

    forward: out = |a - b|_p
    VJP:     ga = g d|x|_p/dx at x = a - b;  gb = -ga
    """
    return shown_as(R.norm(input - other, p=p), "DistBackward0", inputs=(input, other))  # PyTorch's one kernel


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    r"""Distances between the rows of x1 (..., P, M) and of x2 (..., R, M): (..., P, R).

    forward: out[i, j] = |x1_i - x2_j|_p
    VJP:     g_x1_i = \sum_j g_ij d|d|_p/dd;  g_x2_j = -\sum_i ... (the norm's VJP)
    """
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns and be at least 2-D, got "
                           f"shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    for name, t in (("X1", x1), ("X2", x2)):
        if _dtype.kind(t.dtype) != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_dtype.scalar_name(t.dtype)}")
    if x1.dtype != x2.dtype:  # (PyTorch's kernel is one-dtype: it refuses a float32 and a float64, not promotes)
        raise RuntimeError(f"expected scalar type {_dtype.scalar_name(x1.dtype)} but found "
                           f"{_dtype.scalar_name(x2.dtype)}")
    if p < 0:
        raise RuntimeError(f"cdist: cdist only supports non-negative p values, got {p}")
    return shown_as(R.norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p=p, dim=-1), "CdistBackward0", inputs=(x1, x2))


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The distances between every pair of rows i < j of a 2-D input, in row-major order of the pairs.

    forward: out_k = |x_i - x_j|_p for each pair i < j
    VJP:     the norm's VJP, scattered back to rows i and j
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist: pdist only supports 2D tensors, got: {input.ndim}D")
    i, j = np.triu_indices(input.shape[0], 1)
    return shown_as(R.norm(input[i] - input[j], p=p, dim=-1), "PdistBackward0")


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    r"""The covariance of the variables (rows) over the observations (columns), optionally weighted:
    \sum_k w_k (x_ik - mu_i)(x_jk - mu_j) / (\sum w - correction * (\sum w a / \sum w if aweights else 1)).

    forward: C_ij = \sum_k w_k (x_ik - mu_i)(x_jk - mu_j) / (\sum w - correction)
    VJP:     gx_ik = w_k \sum_j (g_ij + g_ji)(x_jk - mu_j) / denom
    """
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    no_bool(input, "cov", RuntimeError)  # (PyTorch's cov refuses a bool input itself; corrcoef is cov's)
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if x._array.dtype.kind in "biu":
        x = x.to(_dtype.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        mean = x.mean(dim=1, keepdim=True)
        denom: Any = n - correction
        xc = x - mean
        out = (xc @ xc.mT) / max(denom, 0) if denom > 0 else (xc @ xc.mT) / 0.0
    else:
        wsum = w.sum()
        mean = (x * w).sum(dim=1, keepdim=True) / wsum
        xc = x - mean
        if aweights is None:
            denom = wsum - correction
        else:
            denom = wsum - correction * (w * aweights.to(x.dtype)).sum() / wsum
        out = ((xc * w) @ xc.mT) / denom
    return out.reshape(()) if input.ndim < 2 else out


def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the rows: cov / sqrt(var_i var_j), clipped to [-1, 1].

    forward: out_ij = C_ij / sqrt(C_ii C_jj)
    VJP:     through cov, sqrt and division
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = D._diagonal(c).sqrt()
    return (c / d.unsqueeze(-1) / d.unsqueeze(-2)).clamp(-1, 1)


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along dim (every dim but dim reduced) scaled down to p-norm maxnorm where its norm exceeds it.

    forward: out = x * min(1, maxnorm / |x_slice|_p) for each slice along dim
    VJP:     gx = g * scale + the norm's VJP where the slice was scaled
    """
    d = _wrap_dim(dim, input.ndim, "renorm")
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = R.norm(input, p=p, dim=others, keepdim=True)
    scale = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return input * scale


# ---- edge cases and argument checks, named ------------------------------------------------------------

def _float_input(x, op):
    if _dtype.kind(x._array.dtype) != "f":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got {x.dtype}")


def _keep_two(out, ndim, d0, d1):
    for d in sorted((d0, d1)):
        out = out.unsqueeze(d)
    return out


def _cutoff(A, s, atol, rtol):
    """max(atol, rtol * s_max) per matrix, with PyTorch's default rtol = eps * max(m, n)."""
    smax = s._array[..., :1] if s.shape[-1] else np.zeros(s._array.shape[:-1] + (1,), s._array.dtype)
    if rtol is None:
        rtol = np.finfo(A._array.dtype).eps * max(A.shape[-2:]) if atol is None or atol == 0 else 0.0
    return np.maximum(atol or 0.0, rtol * smax)


def _lu_info(A):
    """LAPACK's info of getrf: 0, or the 1-based index of the first zero pivot of U."""
    lu_, _ = D._lu(A._array)
    diag = np.diagonal(lu_, axis1=-2, axis2=-1)
    zero = diag == 0
    return np.where(zero.any(axis=-1), zero.argmax(axis=-1) + 1, 0).astype(np.int32)


def _first_bad_minor(a):
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0
