r"""`segment_reduce` (issue 29, h-names29): a reduction over consecutive segments of one dim.

`lengths` (or `offsets`, the running sum of the lengths with a leading 0) cut dim `axis` of `data` into
segments; each is reduced to one slice, so the result has as many slices along `axis` as there are
segments. `lengths` has shape data.shape[:axis] + (segments,): every leading position has its own cut.

    out_s = reduce(data[start_s : start_s + length_s])        reduce: sum, mean, prod, max, min
    with `initial` c:  sum + c,  (sum + c) / length,  prod * c,  max(max, c),  min(min, c)
    an empty segment:  c, or (without c) sum 0, prod 1, mean nan, max -inf, min +inf

Each segment is a slice reduced by minitensor's own reductions, so the gradient is theirs (a max or min
split evenly among equal extremes, as PyTorch's).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from ..tensor import Tensor, _wrap_dim
from .shape import narrow, stack

_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": np.nan, "max": -np.inf, "min": np.inf}
_NAMES = {"amax": "max", "amin": "min"}


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None, indices: Tensor | None = None,
                   offsets: Tensor | None = None, axis: int = 0, unsafe: bool = False,
                   initial: Any = None) -> Tensor:
    """Each segment of dim `axis` (cut by `lengths` or `offsets`) reduced by `reduce`.

    forward: out_s = reduce(data[start_s : start_s + length_s])   (sum, mean, prod, max or min; `initial` joins in)
    VJP:     the reduction's own on each segment: g_s to every element (sum), g_s / length_s (mean), g_s times
             the product of the others (prod), g_s split among the equal extremes (max, min)
    """
    how = _reduction(reduce)
    axis, cuts = _segments(data, lengths, indices, offsets, axis, unsafe)
    rows = []
    for idx in np.ndindex(cuts.shape[:-1]):
        row = data[idx] if idx else data  # (n, *rest): the leading position's slice
        starts = np.concatenate([[0], np.cumsum(cuts[idx])[:-1]])
        rows.append(stack([_one(row, how, int(s), int(n), initial) for s, n in zip(starts, cuts[idx])]))
    out = stack(rows) if rows else None
    shape = tuple(data.shape[:axis]) + (cuts.shape[-1],) + tuple(data.shape[axis + 1:])
    return out.reshape(shape) if out is not None else Tensor._make(np.empty(shape, data._array.dtype))


def _one(row: Tensor, how: str, start: int, length: int, initial: Any) -> Tensor:
    if length == 0:
        fill = _EMPTY[how] if initial is None else float(initial)
        return Tensor._make(np.full(tuple(row.shape[1:]), fill, dtype=row._array.dtype))
    part = narrow(row, 0, start, length)
    if how == "sum":
        out = part.sum(0)
        return out if initial is None else out + initial
    if how == "mean":
        return part.mean(0) if initial is None else (part.sum(0) + initial) / length
    if how == "prod":
        out = part.prod(0)
        return out if initial is None else out * initial
    out = part.amax(0) if how == "max" else part.amin(0)
    if initial is None:
        return out
    bound = Tensor._make(np.full(out.shape, initial, dtype=row._array.dtype))
    return out.maximum(bound) if how == "max" else out.minimum(bound)


# ---- arguments -------------------------------------------------------------------------------------------

def _reduction(reduce: str) -> str:
    how = _NAMES.get(reduce, reduce)
    if how not in _EMPTY:
        raise RuntimeError(f"segment_reduce: reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    return how


def _segments(data: Tensor, lengths: Any, indices: Any, offsets: Any, axis: int, unsafe: bool) -> tuple[int, Any]:
    """(axis, cuts): the dim wrapped, and the segment lengths as an int64 array of shape data.shape[:axis] + (S,)."""
    op = "segment_reduce()"
    if not isinstance(data, Tensor):
        raise TypeError(f"{op}: data must be a Tensor, got {type(data).__name__}")
    if _dtype.kind(data._array.dtype) != "f":
        raise NotImplementedError(f"{op}: not implemented for dtype {data.dtype} (floating point data only)")
    if indices is not None:
        raise RuntimeError(f"{op}: indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError(f"{op}: Either lengths or offsets must be defined.")
    axis = _wrap_dim(axis, data.ndim, op)
    given = lengths if lengths is not None else offsets
    if not isinstance(given, Tensor) or given._array.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: lengths and offsets must be integer tensors, got {given!r}")
    cuts = given._array.astype(np.int64)
    if cuts.ndim - 1 != axis:
        raise RuntimeError(f"{op}: Expected axis to be the last dimension of lengths but got {axis}.")
    if cuts.shape[:-1] != tuple(data.shape[:axis]):
        raise RuntimeError(f"{op}: lengths of shape {cuts.shape} do not fit data of shape {tuple(data.shape)} "
                           f"along axis {axis}")
    if lengths is None:
        cuts = np.diff(cuts, axis=-1)
    if not unsafe:
        if (cuts < 0).any():
            raise RuntimeError(f"{op}: lengths contains negative value!")
        if (cuts.sum(axis=-1) != data.shape[axis]).any():
            raise RuntimeError(f"{op}: Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) "
                               f"when !unsafe (lengths sum to {cuts.sum(axis=-1).tolist()}, data.size({axis}) = "
                               f"{data.shape[axis]}).")
    return axis, cuts
