r"""Gathering from and writing into positions named by an index (issue 29): take, put, index_add,
index_copy, index_put, index_reduce, masked_scatter, scatter_reduce and the *_scatter writers.

Every op here is a composite of indexing's three nodes, so none has a backward of its own:

    Index     out = x[key]                       VJP: gx = zeros with g added at [key]
    IndexPut  out = x with out[key] = v          VJP: gx = g with g[key] = 0;  gv = g[key]
    IndexAdd  out = zeros with src added at key  VJP: gsrc = g[key]

so `x.index_add(dim, i, s)` is `x + IndexAdd(s, key)`, `x.index_copy(dim, i, s)` is
`IndexPut(x, key, s)`, and a reduction (mean, amax, amin) is a sum of such adds, each term weighted
by a constant (1 / count, or 1 / number of tied maxima), selected with `where`.
"""
from __future__ import annotations

import numbers
from typing import Sequence

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.formulas import with_formulas
from ..tensor import Tensor, _wrap_dim
from ..types import TensorOrNumber
from ._util import broadcast_shapes, int_arg
from .indexing import Index, IndexAdd, IndexPut, Where, _scatter_positions, where

# ---- reading: take, take_along_dim ----------------------------------------------------------------

@with_formulas(Index)
def take(input: Tensor, index: Tensor) -> Tensor:
    """input's elements, counted in row-major order, at `index` (negative ones from the end); the result
    has index's shape."""
    idx = _long_index(index, "take")
    n = input.numel()
    _check_flat(idx, n, "take")
    return input.reshape(-1)[idx]


@with_formulas(Index)
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """`gather` along `dim` after input and indices broadcast over the other dims; without dim, of the
    flattened input (`take`, negative indices not allowed)."""
    idx = _long_index(indices, "take_along_dim")
    if dim is None:
        return input.reshape(-1).gather(0, Tensor._make(idx.reshape(-1)))
    if idx.ndim != input.ndim:  # (checked before dim, as PyTorch)
        raise RuntimeError(f"take_along_dim: input and indices should have the same number of dimensions, but got "
                           f"{input.ndim} and {idx.ndim}")
    d = _wrap_dim(dim, input.ndim, "take_along_dim")
    if idx.ndim != input.ndim:
        raise RuntimeError(f"take_along_dim: input and indices should have the same number of dimensions, but got "
                           f"{input.ndim} dimensions for input, and {idx.ndim} dimensions for indices")
    shape_x, shape_i = list(input.shape), list(idx.shape)
    shape_x[d] = shape_i[d] = 1
    common = broadcast_shapes("take_along_dim", tuple(shape_x), tuple(shape_i))
    x = input.expand(common[:d] + (input.shape[d],) + common[d + 1:])
    idx = np.broadcast_to(idx, common[:d] + (idx.shape[d],) + common[d + 1:])
    return x.gather(d, Tensor._make(np.ascontiguousarray(idx)))


# ---- writing along a dim: index_add, index_copy, index_reduce -------------------------------------

@with_formulas(IndexAdd)
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: TensorOrNumber = 1) -> Tensor:
    """input with alpha * source[..., k, ...] added at input[..., index[k], ...] along `dim` (repeated
    indices add up): `input + IndexAdd(alpha * source)`."""
    key, x, src = _along_dim(input, dim, index, source, "index_add")
    if not isinstance(alpha, numbers.Number) or alpha != 1:
        src = src * alpha
    out = x + IndexAdd.apply(src, key, tuple(x.shape))
    return out.reshape(()) if input.ndim == 0 else out


@with_formulas(IndexPut)
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """input with input[..., index[k], ...] = source[..., k, ...] along `dim` (an IndexPut node; with a
    repeated index, which copy lands is unspecified, as in PyTorch)."""
    _copy_shapes(input, dim, index, source)
    key, x, src = _along_dim(input, dim, index, source, "index_copy")
    out = IndexPut.apply(x, key, src)
    return out.reshape(()) if input.ndim == 0 else out


@with_formulas(Where)
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """Reduce ('prod', 'mean', 'amax', 'amin') source's slices into input's slices at `index` along
    `dim`: `scatter_reduce` with the index spread over source's shape."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce: expected reduce to be one of prod, mean, amax or amin but got {reduce}")
    key, x, src = _along_dim(input, dim, index, source, "index_reduce")
    d = _wrap_dim(dim, input.ndim, "index_reduce")
    idx = key[d].reshape((-1,) + (1,) * (src.ndim - d - 1))
    spread = Tensor._make(np.ascontiguousarray(np.broadcast_to(idx, tuple(src.shape))))
    out = scatter_reduce(x, d, spread, src, reduce, include_self=include_self)
    return out.reshape(()) if input.ndim == 0 else out


# ---- writing at named positions: index_put, put, masked_scatter -----------------------------------

@with_formulas(IndexPut)
def index_put(input: Tensor, indices: Sequence[Tensor | None], values: Tensor, accumulate: bool = False) -> Tensor:
    """`x[indices] = values` as a new tensor (indices: a tuple of integer or bool tensors, as in x[i, j]);
    with accumulate=True, values are added there instead (repeated positions add up)."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put: values must be a Tensor, got {type(values).__name__}")
    if values.dtype != input.dtype:
        raise RuntimeError(f"index_put: values (dtype {values.dtype}) must have the same dtype as self "
                           f"({input.dtype})")
    key = tuple(slice(None) if i is None else _index_array(i, "index_put") for i in indices)
    try:
        target = input._array[key].shape
        np.broadcast_to(values._array, target)
    except IndexError as e:
        raise IndexError(f"index_put: indices are invalid for a tensor of shape {tuple(input.shape)}: {e}") from None
    except ValueError:
        raise RuntimeError(f"index_put: shape mismatch: value tensor of shape {tuple(values.shape)} cannot be "
                           f"broadcast to indexing result of shape {target}") from None
    if not accumulate:
        return IndexPut.apply(input, key, values)
    return input + IndexAdd.apply(values.expand(target), key, tuple(input.shape))


@with_formulas(IndexPut)
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """input with its elements, counted in row-major order, at `index` replaced by source's (or, with
    accumulate=True, increased by them); negative indices count from the end."""
    idx = _long_index(index, "put")
    if not isinstance(source, Tensor) or source.dtype != input.dtype:
        raise RuntimeError(f"put: expected source of input's dtype {input.dtype}, got "
                           f"{getattr(source, 'dtype', type(source).__name__)}")
    if source.numel() != idx.size:
        raise IndexError(f"put: expected source and index to have the same number of elements, but got "
                           f"{source.numel()} and {idx.size}")
    n = input.numel()
    _check_flat(idx, n, "put")
    flat = input.reshape(-1)
    out = index_put(flat, (Tensor._make(idx.reshape(-1) % max(n, 1)),), source.reshape(-1), accumulate)
    return out.reshape(input.shape)


@with_formulas(IndexPut)
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """input with the positions where `mask` is True (mask and input broadcast together) filled, in
    row-major order, with source's first elements."""
    m = mask._array if isinstance(mask, Tensor) else None
    if m is None or m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter: expected a bool mask, got {getattr(m, 'dtype', type(mask).__name__)}")
    if not isinstance(source, Tensor) or source.dtype != input.dtype:
        raise RuntimeError(f"masked_scatter: expected source of input's dtype {input.dtype}, got "
                           f"{getattr(source, 'dtype', type(source).__name__)}")
    shape = broadcast_shapes("masked_scatter", tuple(input.shape), m.shape)
    x = input if tuple(input.shape) == shape else input.expand(shape).clone()
    m = np.broadcast_to(m, shape)
    count = int(m.sum())
    if source.numel() < count:
        raise RuntimeError(f"masked_scatter: number of elements of source ({source.numel()}) < number of ones in "
                           f"mask ({count})")
    return IndexPut.apply(x, (np.nonzero(m)), source.reshape(-1)[:count])


# ---- scatter_reduce -------------------------------------------------------------------------------

@with_formulas(Where)
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    r"""Reduce src's elements into input at the positions `index` gives along `dim` (as `scatter`:
    out[index[i][j]][j] for dim=0) with 'sum', 'prod', 'mean', 'amax' or 'amin'; include_self=False
    leaves input's own value out of the reduction at the positions written. A composite:

    sum:   out = base + IndexAdd(src),  base = input, or input zeroed where written
    mean:  out = where(written, (base + IndexAdd(src)) / count, input)   (integers: floor division)
    amax, amin: out = where(written, base * w_self + IndexAdd(src * w_src), input), w = 1/(number of
           elements equal to the extreme) on those equal to it, else 0: the gradient is shared among
           tied extremes, as in PyTorch
    prod:  no gradient here (PyTorch has one): computed without a graph, refused when one is recorded
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # (PyTorch reads these two too)
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"scatter_reduce: reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce: src must be a Tensor, got {type(src).__name__}")
    if input.ndim == 0:
        return scatter_reduce(input.reshape(1), dim, index, src, reduce, include_self=include_self).reshape(())
    key, part = _scatter_positions(input, dim, index, src, "scatter_reduce")
    shape = tuple(input.shape)
    hits = np.zeros(shape, np.int64)
    np.add.at(hits, key, 1)
    written = hits > 0
    zero = Tensor._make(np.zeros((), input._array.dtype))
    base = input if include_self else where(Tensor._make(written), zero, input)
    if reduce == "sum":
        return base + IndexAdd.apply(part, key, shape)
    if reduce == "mean":
        count = hits + (1 if include_self else 0)
        total = base + IndexAdd.apply(part, key, shape)
        divisor = Tensor._make(np.maximum(count, 1).astype(input._array.dtype))
        mean = total / divisor if _dtype.kind(input.dtype) == "f" else total // divisor
        return where(Tensor._make(written), mean, input)
    if reduce == "prod":
        if grad_mode.modes.grad_enabled and (input.requires_grad or src.requires_grad):
            raise RuntimeError("scatter_reduce: the gradient of reduce='prod' is not implemented in minitensor; "
                               "compute it under no_grad(), or use reduce='sum' of logarithms")
        out = input._array.copy()
        if not include_self:
            out[written] = 1
        with np.errstate(over="ignore", invalid="ignore"):
            np.multiply.at(out, key, part._array)
        return Tensor._make(out)
    return _scatter_extreme(input, key, part, written, include_self, reduce)


def _scatter_extreme(input, key, part, written, include_self, reduce):
    """scatter_reduce's amax/amin: the extreme computed in numpy, then the output written as a weighted
    sum of the elements equal to it (see scatter_reduce), so the gradient reaches them."""
    x, s = input._array, part._array
    ufunc = np.maximum if reduce == "amax" else np.minimum  # (a NaN wins, as in PyTorch)
    fill = -np.inf if reduce == "amax" else np.inf
    if _dtype.kind(x.dtype) != "f":
        info = np.iinfo(x.dtype) if x.dtype.kind in "iu" else None
        fill = (info.min if reduce == "amax" else info.max) if info else (reduce != "amax")
    extreme = x.copy() if include_self else np.where(written, np.asarray(fill, x.dtype), x)
    ufunc.at(extreme, key, s)
    if _dtype.kind(x.dtype) != "f":  # no gradient for integers: the values are the answer
        return Tensor._make(extreme)

    def same(v, e):  # equal to the extreme (NaN counts as equal to a NaN extreme)
        return (v == e) | (np.isnan(v) & np.isnan(e))

    ties_self = same(x, extreme) & written if include_self else np.zeros(x.shape, bool)
    ties_src = same(s, extreme[key])
    count = ties_self.astype(np.int64)
    np.add.at(count, key, ties_src)
    count = np.maximum(count, 1).astype(x.dtype)
    zero = Tensor._make(np.zeros((), x.dtype))
    own = where(Tensor._make(ties_self), input / Tensor._make(count), zero)
    added = IndexAdd.apply(where(Tensor._make(ties_src), part / Tensor._make(count[key]), zero), key, tuple(x.shape))
    return where(Tensor._make(written), own + added, input)


# ---- the *_scatter writers: the inverse of select, slicing and diagonal -----------------------------

@with_formulas(IndexPut)
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """input with the slice `select(dim, index)` replaced by src (of that slice's shape)."""
    index = int_arg(index, "select_scatter", "index")
    if input.ndim == 0:
        raise IndexError("select_scatter: cannot be applied to a 0-dim tensor")
    d = _wrap_dim(dim, input.ndim, "select_scatter")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter: index {index} out of range for tensor of size {list(input.shape)} "
                         f"at dimension {d}")
    return _write(input, (slice(None),) * d + (index % n,), src, "select_scatter")


@with_formulas(IndexPut)
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Tensor:
    """input with the slice start:end:step along `dim` replaced by src (of that slice's shape)."""
    if step <= 0:
        raise RuntimeError(f"slice_scatter: slice step must be positive, got {step}")
    d = _wrap_dim(dim, input.ndim, "slice_scatter")
    return _write(input, (slice(None),) * d + (slice(start, end, step),), src, "slice_scatter")


@with_formulas(IndexPut)
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """input with its diagonal `diagonal(offset, dim1, dim2)` replaced by src (of that diagonal's shape)."""
    from .shape import _diagonal_key, movedim
    d1, d2 = _wrap_dim(dim1, input.ndim, "diagonal_scatter"), _wrap_dim(dim2, input.ndim, "diagonal_scatter")
    if d1 == d2:
        raise RuntimeError(f"diagonal_scatter: dimensions cannot be identical {dim1}, {dim2}")
    x = movedim(input, (d1, d2), (-2, -1))
    out = _write(x, (Ellipsis,) + _diagonal_key(x.shape[-2], x.shape[-1], offset), src, "diagonal_scatter")
    return movedim(out, (-2, -1), (d1, d2))


@with_formulas(Where)
def tensor_where(input: Tensor, condition: Tensor, other: TensorOrNumber) -> Tensor:
    """`x.where(condition, other)`: x where condition holds, other elsewhere (`where(condition, x, other)`)."""
    return where(condition, input, other)


# ---- argument checks, named -----------------------------------------------------------------------

def _write(input, key, src, op):
    """IndexPut(input, key, src), src of exactly the shape input[key] has (as PyTorch's *_scatter)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}: src must be a Tensor, got {type(src).__name__}")
    want = input._array[key].shape
    if tuple(src.shape) != want:
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(want)}")
    if src.dtype != input.dtype:
        src = src.to(input.dtype)
    return IndexPut.apply(input, key, src)


def _long_index(index, op):
    """An int64/int32 index tensor's array (PyTorch's take and put want int64; int32 is read too)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}: index must be a Tensor, got {type(index).__name__}")
    if index._array.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: expected an integer (int64) index, got dtype {index.dtype}")
    return index._array.astype(np.int64)


def _index_array(index, op):
    """One entry of index_put's indices: an integer or bool tensor's array."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}: indices must be Tensors (or None), got {type(index).__name__}")
    if index._array.dtype.kind not in "biu":
        raise IndexError(f"{op}: tensors used as indices must be long, int or bool tensors, got {index.dtype}")
    return index._array


def _check_flat(idx, n, op):
    """take's and put's range: -n <= index < n."""
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx.min() if idx.min() < -n else idx.max()
        raise IndexError(f"{op}: out of range: tried to access index {int(bad)} on a tensor of {n} elements.")


def _copy_shapes(input, dim, index, source):
    """index_copy's shape checks, which PyTorch makes before the dtypes' and with an IndexError of their own
    (index_add's and index_reduce's are `_along_dim`'s RuntimeError)."""
    d = _wrap_dim(dim, input.ndim, "index_copy")
    if not isinstance(index, Tensor) or not isinstance(source, Tensor):
        return  # (`_along_dim` names the argument)
    if index.ndim > 1:
        raise IndexError(f"index_copy: index must be a vector (at most 1-d), got shape {tuple(index.shape)}")
    if source.ndim == 0 and index.numel() != 1:
        raise IndexError(f"index_copy: source is 0-d (one value), so index should have one element, got "
                         f"{index.numel()}")
    if source.ndim and input.ndim and source.ndim != input.ndim:
        raise IndexError(f"index_copy: source ({source.ndim}-d, shape {tuple(source.shape)}) must have as many "
                         f"dims as input ({input.ndim}-d, shape {tuple(input.shape)})")
    if source.ndim and input.ndim and source.shape[d] != index.numel() \
            and source.shape[:d] + source.shape[d + 1:] == input.shape[:d] + input.shape[d + 1:]:
        raise IndexError(f"index_copy: the number of indices ({index.numel()}) should be source's size along dim "
                         f"{d} ({source.shape[d]})")


def _along_dim(input, dim, index, source, op):
    """index_add/index_copy/index_reduce's arguments checked as PyTorch does: (key, x, src) with the key
    (:, ..., index) into x (input at least 1-d) and src (source at least 1-d)."""
    d = _wrap_dim(dim, input.ndim, op)
    if not isinstance(index, Tensor) or index._array.dtype.kind not in "iu":
        raise IndexError(f"{op}: index must be an int64 or int32 tensor, got "
                         f"{getattr(index, 'dtype', type(index).__name__)}")
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    if index.ndim > 1:
        raise IndexError(f"{op}: index must be a vector (at most 1-d), got shape {tuple(index.shape)}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"{op}: self ({input.dtype}) and source ({source.dtype}) must have the same scalar type")
    x = input.reshape(1) if input.ndim == 0 else input
    src = source.reshape(1) if source.ndim == 0 else source
    idx = index._array.reshape(-1).astype(np.int64)
    want = x.shape[:d] + (idx.size,) + x.shape[d + 1:]
    if src.ndim != x.ndim or tuple(src.shape) != want:
        raise RuntimeError(f"{op}: source of shape {tuple(source.shape)} should have the shape {want}: input's "
                           f"shape {tuple(input.shape)} with dim {d} of the index's length {idx.size}")
    n = x.shape[d]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise RuntimeError(f"{op}: index {int(bad)} is out of bounds for dimension {d} with size {n}")
    return (slice(None),) * d + (idx,), x, src

