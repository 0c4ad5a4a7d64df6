r"""QR as LAPACK stores it (issue 29, h-names29): `geqrf`, `orgqr` and `ormqr`.

`geqrf(A)` returns (a, tau): R on and above a's diagonal, and below it the Householder vectors v_i
(their leading 1 left out), so that Q = H_1 H_2 ... H_k with H_i = I - tau_i v_i v_i^T. It is LAPACK's
dgeqrf (through numpy's `qr(mode='raw')`), bit for bit what PyTorch returns; as in PyTorch it has no
derivative, so its results do not require grad.

`orgqr(a, tau)` is `linalg.householder_product` (Q's first n columns). `ormqr(a, tau, C)` multiplies C by
Q or Q^T, from the left or the right, one reflector at a time:

    H_i X = X - tau_i v_i (v_i^T X)        X H_i = X - tau_i (X v_i) v_i^T

a composite of differentiable ops, so a, tau and C all get their gradients from those ops.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..tensor import Tensor
from ._util import return_type
from .decompositions import matrix_float
from .factorizations import householder_product
from .indexing import tril
from .linalg import matmul


class geqrf_result(NamedTuple):
    a: Tensor
    tau: Tensor


return_type(geqrf_result, "geqrf")


def geqrf(input: Tensor) -> geqrf_result:
    """(a, tau): A = QR with R in a's upper triangle and Q's Householder vectors below it (LAPACK's packing)."""
    if isinstance(input, Tensor) and input._array.dtype.kind in "biu":  # PyTorch has no integer kernel
        raise NotImplementedError(f"geqrf: not implemented for dtype {input.dtype} (floating point only)")
    A = matrix_float(input, "geqrf")
    x = A._array
    m, n = x.shape[-2:]
    packed = np.empty_like(x)
    taus = np.empty(x.shape[:-2] + (min(m, n),), dtype=x.dtype)
    for idx in np.ndindex(x.shape[:-2]):
        if m and n:
            h, t = np.linalg.qr(x[idx], mode="raw")  # h is the packing transposed (LAPACK's column order)
            packed[idx], taus[idx] = h.T, t
    return geqrf_result(Tensor._make(packed), Tensor._make(taus))


def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """Q's first n columns from geqrf's (a, tau): `linalg.householder_product` under LAPACK's name.

    forward: Q = H_1 ... H_k [:, :n],  H_i = I - tau_i v_i v_i^T
    VJP:     through each reflection X - tau_i v_i (v_i^T X): to a's vectors v_i, to tau_i and to X
    """
    return householder_product(input, input2)


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
    """Q @ C (left) or C @ Q (right), Q^T for transpose=True; Q is m x m, given as geqrf's (a, tau).

    forward: out = H_1 (H_2 (... H_k C)) for Q C, one reflection X - tau_i v_i (v_i^T X) at a time
    VJP:     through each reflection: g to v_i (a's column below the diagonal), to tau_i and to C
    """
    op = "ormqr"
    a, tau, other = matrix_float(input, op), input2, matrix_float(input3, op)
    _check_ormqr(a, tau, other, left)
    k = tau.shape[-1]
    rows = a.shape[-2]
    eye = Tensor._make(np.eye(rows, k, dtype=a._array.dtype))
    vectors = tril(a[..., :, :k], -1) + eye  # column i is v_i (its 1 on the diagonal)
    # Q = H_1 ... H_k: Q C applies H_k first, Q^T C applies H_1 first; from the right the order flips
    order = range(k) if left == transpose else reversed(range(k))
    out = other
    for i in order:
        v = vectors[..., :, i:i + 1]
        t = tau[..., i:i + 1].unsqueeze(-1)
        out = out - t * matmul(v, matmul(v.mT, out)) if left else out - t * matmul(matmul(out, v), v.mT)
    return out


def _check_ormqr(a: Tensor, tau: object, other: Tensor, left: bool) -> None:
    op = "ormqr"
    if not isinstance(tau, Tensor):
        raise TypeError(f"{op}: tau must be a Tensor, got {type(tau).__name__}")
    if a.ndim != other.ndim or tau.ndim != a.ndim - 1:
        raise RuntimeError(f"{op}: input, tau and other must have batch dimensions alike, got shapes "
                           f"{tuple(a.shape)}, {tuple(tau.shape)} and {tuple(other.shape)}")
    if tuple(a.shape[:-2]) != tuple(other.shape[:-2]) or tuple(tau.shape[:-1]) != tuple(a.shape[:-2]):
        raise RuntimeError(f"{op}: batch dimensions differ: input {tuple(a.shape)}, tau {tuple(tau.shape)}, "
                           f"other {tuple(other.shape)}")
    side = -2 if left else -1
    if other.shape[side] != a.shape[-2]:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"torch.ormqr: {which} must be equal to input.shape[-2], got {other.shape[side]} and "
                           f"{a.shape[-2]} (input {tuple(a.shape)}, other {tuple(other.shape)})")
    if tau.shape[-1] > a.shape[-1] or tau.shape[-1] > a.shape[-2]:
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1] and "
                           f"input.shape[-2], got tau {tuple(tau.shape)} for input {tuple(a.shape)}")
    if not (a.dtype == tau.dtype == other.dtype):
        raise RuntimeError(f"torch.ormqr: Expected input, tau and other to have the same dtype, got {a.dtype}, "
                           f"{tau.dtype} and {other.dtype}")
