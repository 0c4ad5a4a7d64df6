r"""Joining and splitting (issue 29): the stacks (hstack, vstack, dstack, column_stack), the splits
(tensor_split, hsplit, vsplit, dsplit, split_with_sizes), atleast_1d/2d/3d, meshgrid,
cartesian_prod, combinations, block_diag and kron.

All are composites of `cat`, reshape, expand, indexing and `*`, exact as such, so their gradients
are those ops': a Cat node splits g back, an Index node scatters it, a Mul multiplies it.
"""
from __future__ import annotations

import functools
import itertools
import warnings
from typing import Any, Sequence

import numpy as np

from .. import _dtype
from ..autograd.formulas import with_formulas
from ..tensor import Tensor, _wrap_dim
from ._util import int_arg
from .conversion import cast
from .indexing import Index
from .shape import Cat, Expand, Reshape, cat, split

# ---- at least n dims ------------------------------------------------------------------------------

def _atleast(n: int, tensors: tuple[Any, ...], op: str) -> Tensor | tuple[Tensor, ...]:
    """One tensor in, one out; several (or one sequence), a tuple, as PyTorch's atleast_*d."""
    many = len(tensors) != 1 or isinstance(tensors[0], (tuple, list))
    items = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)) else tensors
    for t in items:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
    out = tuple(_at_least(t, n) for t in items)
    return out if many else out[0]


def _at_least(t: Tensor, n: int) -> Tensor:
    if t.ndim >= n:
        return t
    if n == 1 or t.ndim == 0:
        return t.reshape((1,) * n)
    if n == 2:  # (k,) -> (1, k)
        return t.reshape(1, -1)
    return t.reshape(1, -1, 1) if t.ndim == 1 else t.unsqueeze(-1)  # n == 3: (k,) -> (1, k, 1), (a, b) -> (a, b, 1)


@with_formulas(Reshape)
def atleast_1d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least 1 dim (a 0-d one becomes shape (1,))."""
    return _atleast(1, tensors, "atleast_1d")


@with_formulas(Reshape)
def atleast_2d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least 2 dims (a 1-d one of k elements becomes (1, k))."""
    return _atleast(2, tensors, "atleast_2d")


@with_formulas(Reshape)
def atleast_3d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor with at least 3 dims ((k,) becomes (1, k, 1), (a, b) becomes (a, b, 1))."""
    return _atleast(3, tensors, "atleast_3d")


# ---- stacks -------------------------------------------------------------------------------------------

@with_formulas(Cat)
def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along dim 1 (dim 0 when every tensor is 1-d), 0-d tensors read as 1-d."""
    ts = [_at_least(t, 1) for t in _tensor_list(tensors, "hstack")]
    return cat(ts, 0 if all(t.ndim == 1 for t in ts) else 1)


@with_formulas(Cat)
def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along dim 0 as rows, each tensor at least 2-d first (a 1-d one is one row)."""
    return cat([_at_least(t, 2) for t in _tensor_list(tensors, "vstack")], 0)


@with_formulas(Cat)
def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    """`vstack`."""
    return vstack(tensors)


@with_formulas(Cat)
def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along dim 2 (depth), each tensor at least 3-d first."""
    return cat([_at_least(t, 3) for t in _tensor_list(tensors, "dstack")], 2)


@with_formulas(Cat)
def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Join as columns along dim 1: a 0-d or 1-d tensor of k elements is one column (k, 1)."""
    return cat([t.reshape(-1, 1) if t.ndim <= 1 else t for t in _tensor_list(tensors, "column_stack")], 1)


# ---- splits -------------------------------------------------------------------------------------------

@with_formulas(Index)
def tensor_split(input: Tensor, tensor_indices_or_sections: Tensor | int | Sequence[int] | None = None,
                 dim: int = 0, *, sections: int | None = None, indices: Sequence[int] | None = None
                 ) -> tuple[Tensor, ...]:
    """Pieces along `dim`: `sections` pieces of nearly equal size (the first n % sections one larger), or
    the pieces between the listed split points (a point past the end gives empty pieces). As PyTorch's
    three overloads, the second argument may be named after what it is: `sections=`, `indices=`."""
    indices_or_sections = _one_of("tensor_split", tensor_indices_or_sections=tensor_indices_or_sections,
                                  sections=sections, indices=indices)
    if input.ndim == 0:
        raise RuntimeError("tensor_split: expected at least a 1-dimensional tensor")
    d = _wrap_dim(dim, input.ndim, "tensor_split")
    n = input.shape[d]
    points = indices_or_sections
    if isinstance(points, Tensor):
        if points.dtype.kind not in "iu" or points.ndim > 1:
            raise RuntimeError("tensor_split: expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor of integers, got dtype {points.dtype} and shape "
                               f"{tuple(points.shape)}")
        points = int(points.item()) if points.ndim == 0 else [int(v) for v in points._array]
    if isinstance(points, (int, np.integer)):
        k = int(points)
        if k <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, got {k}")
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        points = np.cumsum(sizes)[:-1].tolist()  # where those sizes cut: slices, as PyTorch's tensor_split
    bounds = [0] + [_clip(int(p), n) for p in points] + [n]
    return tuple(input[(slice(None),) * d + (slice(a, max(a, b)),)] for a, b in zip(bounds, bounds[1:]))


def _one_of(op, **given):
    """The one argument given among PyTorch's overloads' names for it (`sections=` or `indices=`)."""
    named = {k: v for k, v in given.items() if v is not None}
    if len(named) != 1:
        raise TypeError(f"{op}(): expected exactly one of {', '.join(given)}, got "
                        f"{', '.join(named) or 'none'}")
    return next(iter(named.values()))


def _clip(p, n):
    """A split point as a slice bound: negative ones count from the end, and it stays in [0, n]."""
    return min(max(p + n if p < 0 else p, 0), n)


def _even_split(input, sections, dim, op):
    if isinstance(sections, int):
        n = input.shape[dim]
        if sections == 0 or n % sections:
            raise RuntimeError(f"{op}: attempted to split along dimension {dim}, but the size of the dimension {n} "
                               f"is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


@with_formulas(Index)
def hsplit(input: Tensor, sections: int | Sequence[int] | None = None, *,
           indices: Sequence[int] | None = None) -> tuple[Tensor, ...]:
    """`tensor_split` along dim 1 (dim 0 of a 1-d tensor); a number of sections must divide it evenly."""
    chosen = _one_of("hsplit", sections=sections, indices=indices)
    if input.ndim == 0:
        raise RuntimeError("hsplit: torch.hsplit requires a tensor with at least 1 dimension, but got a tensor "
                           "with 0 dimensions!")
    return _even_split(input, chosen, 1 if input.ndim > 1 else 0, "hsplit")


@with_formulas(Index)
def vsplit(input: Tensor, sections: int | Sequence[int] | None = None, *,
           indices: Sequence[int] | None = None) -> tuple[Tensor, ...]:
    """`tensor_split` along dim 0 of a tensor of 2 or more dims; a number of sections must divide it evenly."""
    chosen = _one_of("vsplit", sections=sections, indices=indices)
    if input.ndim < 2:
        raise RuntimeError(f"vsplit: torch.vsplit requires a tensor with at least 2 dimension, but got a tensor "
                           f"with {input.ndim} dimensions!")
    return _even_split(input, chosen, 0, "vsplit")


@with_formulas(Index)
def dsplit(input: Tensor, sections: int | Sequence[int] | None = None, *,
           indices: Sequence[int] | None = None) -> tuple[Tensor, ...]:
    """`tensor_split` along dim 2 of a tensor of 3 or more dims; a number of sections must divide it evenly."""
    chosen = _one_of("dsplit", sections=sections, indices=indices)
    if input.ndim < 3:
        raise RuntimeError(f"dsplit: torch.dsplit requires a tensor with at least 3 dimension, but got a tensor "
                           f"with {input.ndim} dimensions!")
    return _even_split(input, chosen, 2, "dsplit")


@with_formulas(Index)
def split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of the listed sizes along `dim` (they must add up to its size)."""
    sizes = [int(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes: expects split_sizes have only non-negative entries, got {sizes}")
    return split(input, sizes, dim)


# ---- grids and products -----------------------------------------------------------------------------

@with_formulas(Expand)
def meshgrid(*tensors: Tensor | Sequence[Tensor], indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids: the k-th output holds tensors[k]'s values along dim k ('ij', the default) of the
    shape (n_0, n_1, ...); 'xy' swaps the first two dims. Expanded views, as in PyTorch."""
    ts: list[Any] = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)) else list(tensors)
    if not ts:
        raise RuntimeError("meshgrid: expects a non-empty TensorList")
    if indexing is None:
        warnings.warn("meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in ts:
        if not isinstance(t, Tensor) or t.ndim > 1:
            raise RuntimeError("meshgrid: expects all tensors to be 0-D or 1-D, got "
                               f"{[tuple(getattr(x, 'shape', ())) for x in ts]}")
        if t.dtype != ts[0].dtype:
            raise RuntimeError(f"meshgrid: expects all tensors to have the same dtype, got {[x.dtype for x in ts]}")
    swap = indexing == "xy" and len(ts) >= 2
    order = [1, 0] + list(range(2, len(ts))) if swap else list(range(len(ts)))
    sizes = [t.numel() for t in ts]
    shape = tuple(sizes[i] for i in order)
    out = []
    for k, t in enumerate(ts):
        place = order.index(k)
        view = [1] * len(ts)
        view[place] = sizes[k]
        out.append(t.reshape(view).expand(shape))
    return tuple(out)


@with_formulas(Reshape)
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each 1-d tensor, as rows (the last tensor varying fastest);
    one tensor comes back as it is."""
    for t in tensors:
        if not isinstance(t, Tensor) or t.ndim != 1:
            raise RuntimeError("cartesian_prod: expect a 1D vector, but got shapes "
                               f"{[tuple(getattr(x, 'shape', ())) for x in tensors]}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return cat([g.reshape(-1, 1) for g in grids], 1)


@with_formulas(Index)
def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The r-element combinations of a 1-d tensor's elements, as rows (in itertools' order); with
    with_replacement=True an element may repeat. One Index node."""
    r = int_arg(r, "combinations", "r")  # (its type first, as PyTorch's parser)
    if input.ndim != 1:
        raise RuntimeError(f"combinations: expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"combinations: expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(np.zeros((0,), input._array.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return input[rows]


@with_formulas(Cat)
def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-d read as one row, or 2-d) as blocks along the diagonal of a matrix, zeros
    elsewhere: rows of [zeros, block, zeros] joined with `cat`."""
    blocks = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) or t.ndim > 2:
            raise RuntimeError(f"block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{getattr(t, 'ndim', '?')} dimensions")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return Tensor._make(np.zeros((1, 0), _dtype.get_default_dtype()))
    dtype = functools.reduce(_dtype.promote_types, (b._array.dtype for b in blocks))
    blocks = [cast(b, dtype) for b in blocks]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        h, w = b.shape
        parts = [Tensor._make(np.zeros((h, left), dtype)), b, Tensor._make(np.zeros((h, width - left - w), dtype))]
        rows.append(cat(parts, 1))
        left += w
    return cat(rows, 0)


@with_formulas(Reshape)
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: out[i * m + k] = a[i] * b[k] in each dim (the shorter shape padded with
    leading 1s). a reshaped to (a0, 1, a1, 1, ...) times b to (1, b0, 1, b1, ...), then merged."""
    a, b = input, other
    n = max(a.ndim, b.ndim)
    sa, sb = (1,) * (n - a.ndim) + tuple(a.shape), (1,) * (n - b.ndim) + tuple(b.shape)
    spread_a = tuple(v for s in sa for v in (s, 1))
    spread_b = tuple(v for s in sb for v in (1, s))
    out = a.reshape(spread_a) * b.reshape(spread_b)
    return out.reshape(tuple(x * y for x, y in zip(sa, sb)))


def _tensor_list(tensors, op):
    if isinstance(tensors, Tensor):  # iterating it would cut it into its rows: PyTorch refuses it
        raise TypeError(f"{op}: argument 'tensors' must be a tuple or list of Tensors, not a Tensor of shape "
                        f"{tuple(tensors.shape)}")
    ts = list(tensors)
    if not ts:
        raise RuntimeError(f"{op}: expects a non-empty TensorList")
    if not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"{op}: expected a sequence of Tensors, got {[type(t).__name__ for t in ts]}")
    return ts

