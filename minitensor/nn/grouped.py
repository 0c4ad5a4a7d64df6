r"""`grouped_mm`: several matrix products in one call, one per group (a Mixture-of-Experts layer's experts).

A composite of slicing, `matmul`, `cat` and `stack` (exact, so no backward of its own). The groups are
either a leading dimension (a 3-d operand) or, for a 2-d operand, consecutive slices of one dimension
cut at the int32 offsets `offs` (group i is `[offs[i-1], offs[i])`, group 0 starts at 0):

    a (M, K),    b (G, K, N), offs (G,):  out (M, N);   out[rows of group i] = a[rows] @ b[i]
    a (G, M, K), b (K, N),    offs (G,):  out (M, N);   out[:, cols of group i] = a[i] @ b[:, cols]
    a (M, K),    b (K, N),    offs (G,):  out (G, M, N); out[i] = a[:, ks of group i] @ b[ks of group i]
    a (G, M, K), b (G, K, N), no offs:    out (G, M, N); out[i] = a[i] @ b[i]

What lies beyond offs[-1] belongs to no group: its rows (columns) of the output are zero.
"""
from __future__ import annotations

from .. import _dtype
from ..factories import zeros
from ..ops.linalg import matmul
from ..ops.shape import cat, stack
from ..tensor import Tensor
from ..types import DTypeLike


def _check(mat_a: Tensor, mat_b: Tensor, offs: Tensor | None, bias: Tensor | None,
           out_dtype: DTypeLike | None) -> list[int] | None:
    """The offsets as Python ints (None without offs), after PyTorch's checks, each naming what it got."""
    for label, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if not isinstance(m, Tensor):
            raise TypeError(f"grouped_mm(): argument '{label}' must be Tensor, not {type(m).__name__}")
        if m.ndim not in (2, 3):
            raise RuntimeError(f"grouped_mm: {label} must be a 2d or 3d tensor, got shape {tuple(m.shape)}")
        if _dtype.scalar_name(m.dtype) not in ("Float", "BFloat16", "Half"):  # PyTorch's kernel refuses float64
            raise RuntimeError(f"grouped_mm: expected {label} to be float32, bfloat16 or float16, got {m.dtype}")
    if mat_a.dtype != mat_b.dtype:
        raise RuntimeError(f"grouped_mm: mat_a and mat_b must have the same dtype, got {mat_a.dtype} and {mat_b.dtype}")
    if bias is not None:
        raise RuntimeError("grouped_mm: bias is not supported (as in PyTorch 2.13)")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError(f"grouped_mm: out_dtype must be mat_a's dtype {mat_a.dtype}, got {out_dtype}")
    if (offs is None) != (mat_a.ndim == 3 and mat_b.ndim == 3):
        raise RuntimeError("grouped_mm: offs is needed when an operand is 2d, and not allowed when both are 3d "
                           f"(got shapes {tuple(mat_a.shape)} and {tuple(mat_b.shape)})")
    k_a = mat_a.shape[-1]
    k_b = mat_b.shape[-2]
    if k_a != k_b:
        raise RuntimeError(f"grouped_mm: contraction dimensions differ: mat_a {tuple(mat_a.shape)} and mat_b "
                           f"{tuple(mat_b.shape)}")
    if offs is None:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError(f"grouped_mm: group counts differ: mat_a {tuple(mat_a.shape)}, "
                               f"mat_b {tuple(mat_b.shape)}")
        return None
    if not isinstance(offs, Tensor) or offs.ndim != 1 or offs.dtype != _dtype.int32:
        got = f"{offs.dtype} of shape {tuple(offs.shape)}" if isinstance(offs, Tensor) else type(offs).__name__
        raise RuntimeError(f"grouped_mm: offs must be a 1-d int32 tensor, got {got}")
    ends = [int(v) for v in offs._array]
    groups = mat_b.shape[0] if mat_b.ndim == 3 else mat_a.shape[0] if mat_a.ndim == 3 else len(ends)
    if len(ends) != groups:
        raise RuntimeError(f"grouped_mm: offs has {len(ends)} entries for {groups} groups")
    sliced = mat_a.shape[0] if mat_b.ndim == 3 else mat_b.shape[-1] if mat_a.ndim == 3 else k_a
    if any(e < s for s, e in zip([0] + ends, ends)) or (ends and (ends[0] < 0 or ends[-1] > sliced)):
        raise RuntimeError(f"grouped_mm: offs must increase and stay within the sliced dimension of size {sliced}, "
                           f"got {ends}")
    return ends


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None, bias: Tensor | None = None,
               out_dtype: DTypeLike | None = None) -> Tensor:
    r"""One matrix product per group, the groups cut as the module's docstring shows (Slice, MatMul, Cat
    and Stack nodes).

    forward: out_i = A_i B_i   for each group i (A_i, B_i: a's and b's part of group i)
    VJP:     gA_i = g_i B_i^T;  gB_i = A_i^T g_i   (MatMul's, sliced back into a and b; 0 outside every group)
    """
    ends = _check(mat_a, mat_b, offs, bias, out_dtype)
    if ends is None:
        return matmul(mat_a, mat_b)
    starts = [0] + ends[:-1]
    if mat_a.ndim == 2 and mat_b.ndim == 2:
        return stack([matmul(mat_a[:, s:e], mat_b[s:e]) for s, e in zip(starts, ends)])
    if mat_b.ndim == 3:  # a's rows are cut
        parts = [matmul(mat_a[s:e], mat_b[i]) for i, (s, e) in enumerate(zip(starts, ends))]
        rest = mat_a.shape[0] - ends[-1]
        parts.append(zeros(rest, mat_b.shape[-1], dtype=mat_a.dtype))
        return cat(parts, 0)
    parts = [matmul(mat_a[i], mat_b[:, s:e]) for i, (s, e) in enumerate(zip(starts, ends))]  # b's columns are cut
    parts.append(zeros(mat_a.shape[1], mat_b.shape[-1] - ends[-1], dtype=mat_a.dtype))
    return cat(parts, 1)


FUNCTIONS = ["grouped_mm"]
