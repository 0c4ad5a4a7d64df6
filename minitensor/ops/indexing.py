r"""Indexing and masking: `x[...]`, `where`, `masked_fill`, `tril`/`triu`, `gather`, `index_select`.

The adjoint of reading `x[key]` is *scattering* `g` back into a zero tensor of x's shape. With
integer-array keys an element can be read more than once (an embedding lookup of a repeated
token), and then its gradients must add up: `np.add.at` accumulates, `gx[key] += g` would keep
only one of them.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Literal, TypeVar, overload

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..tensor import Tensor, _wrap_dim
from ..types import DType, Index as IndexKey, Number, TensorOrNumber
from ._util import broadcast_shapes, operand, raw, unbroadcast


class Index(Function):
    r"""out = x[key]   (ints, slices, None, ..., integer arrays, bool masks)
    VJP: gx = zeros(x.shape) with g added at [key] (repeated indices accumulate)"""

    saves_values = False  # only the key and x's shape
    is_view = True  # basic indexing (ints, slices, None, ...) returns a view of x's memory

    @staticmethod
    def forward(ctx, x, key):
        return x._array[_keeping_0d(key)]

    @staticmethod
    def backward(ctx, g):
        x, key = ctx.inputs
        return IndexAdd.apply(g, key, tuple(x.shape)), None


class IndexAdd(Function):
    r"""out = zeros(shape) with src added at [key]: the scatter that is the adjoint of indexing
    VJP: gsrc = g[key]   (reading back where it was scattered)"""

    @staticmethod
    def forward(ctx, src, key, shape):
        out = np.zeros(shape, dtype=src._array.dtype)
        if any(_is_bool_scalar(k) for k in key):  # x[m] with a 0-d bool m: a new dim, of size 1 if m else 0
            if not all(k for k in key if _is_bool_scalar(k)):
                return out  # nothing was read
            key = tuple(None if _is_bool_scalar(k) else k for k in key)  # (read once, as x[None] reads)
        if _is_advanced(key):
            np.add.at(out, _scatter_key(key), src._array)
        else:
            out[key] = src._array  # basic indexing never reads an element twice
        return out

    @staticmethod
    def backward(ctx, g):
        _, key, _ = ctx.inputs
        return Index.apply(g, key), None, None


class IndexPut(Function):
    r"""out = x with out[key] = value   (`x[key] = value` as an op: what setitem records)
    VJP: gx = g with g[key] = 0   (those elements were overwritten);  gvalue = unbroadcast(g[key], value.shape)"""

    saves_values = False  # only the key and the shapes

    @staticmethod
    def forward(ctx, x, key, value):
        out = x._array.copy()
        out[key] = raw(value)
        return out

    @staticmethod
    def backward(ctx, g):
        x, key, value = ctx.inputs
        gx = IndexPut.apply(g, key, 0.0) if ctx.needs_input_grad[0] else None
        gv = unbroadcast(Index.apply(g, key), value.shape) if ctx.needs_input_grad[2] else None
        return gx, None, gv


class Where(Function):
    r"""out = a where cond else b   (a, b broadcast with cond)
    VJP: ga = unbroadcast(where(cond, g, 0), a.shape);  gb = unbroadcast(where(cond, 0, g), b.shape)
    Selecting, not multiplying by a 0/1 mask, so an inf in the unselected branch can't make 0 * inf = nan."""

    @staticmethod
    def forward(ctx, cond, a, b):
        return np.where(cond._array, a._array, b._array)

    @staticmethod
    def backward(ctx, g):
        cond, a, b = ctx.inputs
        zero = Tensor._make(np.zeros((), dtype=g._array.dtype))
        ga = unbroadcast(where(cond, g, zero), a.shape) if ctx.needs_input_grad[1] else None
        gb = unbroadcast(where(cond, zero, g), b.shape) if ctx.needs_input_grad[2] else None
        return None, ga, gb


# ---- the public functions -----------------------------------------------------------------------

def getitem(input: Tensor, index: IndexKey) -> Tensor:
    """`x[index]` with PyTorch/numpy semantics; gradients scatter back (accumulating)."""
    key = _index_key(index)
    if len(key) == 1 and (key[0] is Ellipsis or (isinstance(key[0], slice) and key[0] == slice(None) and input.ndim)):
        return input  # x[...] and x[:] select everything
    if input.requires_grad and grad_mode.modes.grad_enabled:
        _check_scatterable(key)
    try:
        return Index.apply(input, key)
    except IndexError as e:  # numpy's reason, with the key as the user wrote it
        raise IndexError(f"__getitem__: index {_describe(key)} is invalid for a tensor of shape "
                         f"{tuple(input.shape)}: {e}") from None


@overload
def where(condition: Tensor) -> tuple[Tensor, ...]: ...
@overload
def where(condition: Tensor, input: TensorOrNumber, other: TensorOrNumber) -> Tensor: ...
@with_formulas(Where)
def where(condition: Tensor, input: TensorOrNumber | None = None,
          other: TensorOrNumber | None = None) -> Tensor | tuple[Tensor, ...]:
    """Elementwise select; with only a condition, the indices where it holds (like nonzero)."""
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in np.nonzero(raw(condition)))
    cond = condition if isinstance(condition, Tensor) else Tensor._make(np.asarray(condition))
    if cond.dtype != np.bool_:
        if cond.dtype != np.uint8:  # (a uint8 condition is read as bool, as PyTorch still does)
            raise RuntimeError(f"where: expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{cond.dtype} (compare it, e.g. `x > 0`, or use .bool())")
        cond = Tensor._make(cond._array.astype(bool))
    a, b = operand(input, "where"), operand(other, "where")
    x, y = _as_result_type(a, b, "where"), _as_result_type(b, a, "where")
    _check_where_shapes(cond, x, y)
    return Where.apply(cond, x, y)


@with_formulas(Where)
def masked_fill(input: Tensor, mask: Tensor, value: TensorOrNumber) -> Tensor:
    """`value` where `mask` is True, `input` elsewhere, of the broadcast shape of mask and input."""
    m = _fill_mask(input, mask, value, "masked_fill")
    name = "MaskedFillBackward1" if isinstance(value, Tensor) else "MaskedFillBackward0"  # PyTorch's overloads
    if isinstance(value, Tensor):  # PyTorch reads a 0-d value as a number: it must fit input's dtype
        _dtype.scalar_to(value.item(), input.dtype, "masked_fill")
    value = fill_value(value, input._array.dtype, "masked_fill")
    # the user's mask tensor itself, so that the node sees it changed in place before backward
    out = where(mask if isinstance(mask, Tensor) else Tensor._make(m), value, input)
    return shown_as(out, name, inputs=(input,) if name == "MaskedFillBackward0" else (input, value))


@with_formulas(Where)
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """Keep the lower triangle (j <= i + diagonal) of the last two dims, zero the rest."""
    return shown_as(_tri(input, diagonal, False, "tril"), "TrilBackward0", inputs=(input,))


@with_formulas(Where)
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """Keep the upper triangle (j >= i + diagonal) of the last two dims, zero the rest."""
    return shown_as(_tri(input, diagonal, True, "triu"), "TriuBackward0", inputs=(input,))


@with_formulas(Index)
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """out[i][j][k] = input[i][index[i][j][k]][k] for dim=1 (and likewise for other dims)."""
    if sparse_grad:
        raise RuntimeError("gather: sparse_grad=True asks for a sparse gradient; minitensor's tensors are dense "
                           "(sparse tensors are out of scope), so its gradient is always dense: use sparse_grad=False")
    d = _wrap_dim(dim, input.ndim, "gather")
    if not isinstance(index, Tensor):
        raise TypeError(f"gather: index must be an integer Tensor, got {type(index).__name__}")
    idx = raw(index)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"gather: expected an integer (int64 or int32) index, got dtype {idx.dtype}")
    if max(idx.ndim, 1) != max(input.ndim, 1):  # (a 0-d tensor counts as 1-d, as in PyTorch)
        raise RuntimeError(f"gather: index of shape {idx.shape} must have as many dims as input of "
                           f"shape {tuple(input.shape)}")
    x, lines = input.reshape(input.shape or (1,)), idx.reshape(idx.shape or (1,))
    _check_range(lines, x.shape[d], d, "gather", RuntimeError)  # (PyTorch's gather raises a RuntimeError here)
    for i, (k, n) in enumerate(zip(lines.shape, x.shape)):
        if i != d and k > n:
            raise RuntimeError(f"gather: index of shape {idx.shape} is larger than input of shape "
                               f"{tuple(input.shape)} in dim {i}")
    grids = list(np.indices(lines.shape, sparse=True))
    grids[d] = lines
    out = getitem(x, tuple(grids))
    out = out.reshape(idx.shape) if out.shape != idx.shape else out  # a 0-d index reads one element
    return shown_as(out, "GatherBackward0")


@with_formulas(Index)
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The entries of `index` along `dim` (a 1-d integer tensor)."""
    d = _wrap_dim(dim, input.ndim, "index_select")
    idx = np.asarray(raw(index))
    if idx.ndim > 1:
        raise IndexError(f"index_select: index must be a 0-d or 1-d integer tensor, got shape {idx.shape}")
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"index_select: expected an int64 or int32 index, got dtype {idx.dtype}")
    if input.ndim == 0 and idx.size > 1:
        raise RuntimeError(f"index_select: an index into a 0-d tensor can have only 1 value, got {idx.size}")
    # (out of range in an empty tensor of 2 dims or more, PyTorch's error is a RuntimeError)
    error = RuntimeError if input.ndim > 1 and input.numel() == 0 else IndexError
    _check_range(idx, input.shape[d] if input.ndim else 1, d, "index_select", error)
    if input.ndim == 0:  # a 0-d tensor has one entry to select, and stays 0-d (as in PyTorch)
        if idx.size != 1:
            raise RuntimeError(f"index_select: the index into a 0-d tensor can have only 1 value, got {idx.size}")
        return shown_as(input.reshape(1)[idx.reshape(-1)].reshape(()), "IndexSelectBackward0")
    return shown_as(getitem(input, (slice(None),) * d + (idx.reshape(-1),)), "IndexSelectBackward0")


@overload
def nonzero(input: Tensor, *, as_tuple: Literal[False] = False) -> Tensor: ...
@overload
def nonzero(input: Tensor, *, as_tuple: Literal[True]) -> tuple[Tensor, ...]: ...
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    if input.ndim == 0:  # PyTorch: one row of no coordinates if the scalar is non-zero (numpy refuses 0-d)
        rows = int(bool(input._array))
        return (Tensor._make(np.zeros(rows, np.int64)),) if as_tuple else Tensor._make(np.zeros((rows, 0), np.int64))
    idx = np.nonzero(input._array)
    if as_tuple:
        return tuple(Tensor._make(i) for i in idx)
    return Tensor._make(np.stack(idx, axis=-1).astype(np.int64))


@with_formulas(Index)
def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of `input` where `mask` is True, as a 1-d tensor (the two broadcast together first)."""
    m = raw(mask)
    if not isinstance(m, np.ndarray) or m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected a bool tensor for mask, got "
                           f"{getattr(m, 'dtype', type(m).__name__)}")
    shape = broadcast_shapes("masked_select", input.shape, m.shape) or (1,)  # (the result is 1-d anyway)
    if input.shape != shape:
        input = input.expand(shape)
    return getitem(input, Tensor._make(np.broadcast_to(m, shape)))


@with_formulas(Where)
def index_fill(input: Tensor, dim: int, index: Tensor, value: TensorOrNumber) -> Tensor:
    """`value` in every position whose index along `dim` is in `index` (negative ones count from the end)."""
    op = "index_fill"
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"{op}: value must be a number or a 0-d tensor, got shape {tuple(value.shape)}")
    d = _wrap_dim(dim, input.ndim, op)
    idx = raw(index)
    if not isinstance(idx, np.ndarray) or idx.dtype != np.int64:
        raise IndexError(f"{op}: expected an int64 index tensor, got {getattr(idx, 'dtype', type(idx).__name__)}")
    if idx.ndim > 1:
        raise RuntimeError(f"{op}: index must be a 0-d or 1-d tensor, got shape {idx.shape}")
    if isinstance(value, Tensor):  # PyTorch reads a 0-d value as a number: it must fit input's dtype
        _dtype.scalar_to(value.item(), input.dtype, op)
    fill = fill_value(value, input._array.dtype, op)  # (converted before the index is checked, as in PyTorch)
    n = input.shape[d] if input.ndim else 1
    # an empty input whose filled dim is not empty has nothing to fill: PyTorch checks no index there
    checked = input.numel() or n == 0
    if checked and idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx.min() if idx.min() < -n else idx.max()
        error = IndexError if n else RuntimeError  # (PyTorch's error for a dim of size 0 is a RuntimeError)
        raise error(f"{op}: index {int(bad)} is out of bounds for dimension {d} with size {n}")
    rows = np.zeros(n, dtype=bool)
    if checked:
        rows[idx] = True
    selected = rows.reshape((n,) + (1,) * (input.ndim - d - 1)) if input.ndim else rows.reshape(())
    return where(Tensor._make(selected), fill, input)


# (a decorator: defined above the functions it wraps, as it runs when the module is imported)

_Op = TypeVar("_Op", bound=Callable[..., Tensor])


def _at_least_1d(scatter_op: _Op) -> _Op:
    """Run a scatter on a 0-d input as on its 1-element vector, as PyTorch does."""
    def run(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if input.ndim == 0:
            return scatter_op(input.reshape(1), *args, **kwargs).reshape(())
        return scatter_op(input, *args, **kwargs)

    run.__name__, run.__doc__, run.__wrapped__ = scatter_op.__name__, scatter_op.__doc__, scatter_op  # type: ignore[attr-defined]
    return run  # type: ignore[return-value]  # run takes what scatter_op takes


@_at_least_1d
def scatter(input: Tensor, dim: int, index: Tensor, src: TensorOrNumber | None = None,
            value: Number | None = None, *,
            reduce: str | None = None) -> Tensor:
    r"""input with src's elements written at the positions `index` gives along `dim`:
    out[index[i][j]][j] = src[i][j] for dim=0 (likewise for other dims); a number `value` fills them instead.
    reduce='add' or 'multiply' combines src with what is there instead (no gradient, as in PyTorch).
    One IndexPut node (x with x[key] = v):

    forward: out = input with out[key] = src,  key = the positions `index` names along `dim`
    VJP:     g_input = g with the written positions zeroed;  g_src = g.gather(dim, index)
             (at a position written twice, PyTorch's formula too gives g to both)
    """
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter: expected src (a tensor) or value (a number)")
    if reduce is not None:
        return _scatter_reduce(input, dim, index, src, reduce)
    key, part = _scatter_positions(input, dim, index, src, "scatter")
    return IndexPut.apply(input, key, part)


@_at_least_1d
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    r"""input plus src's elements added at the positions `index` gives along `dim`:
    out[index[i][j]][j] += src[i][j] for dim=0 (repeated positions add up). An IndexAdd node, then an Add:

    forward: out = input + (zeros with src added at key),  key = the positions `index` names along `dim`
    VJP:     g_input = g;  g_src = g.gather(dim, index)
    """
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add: src must be a Tensor, got {type(src).__name__}")
    key, part = _scatter_positions(input, dim, index, src, "scatter_add")
    return input + IndexAdd.apply(part, key, tuple(input.shape))


# ---- keys: how a user's index becomes numpy's, and how a gradient is scattered back -------------

def _index_key(index, shape=None):
    """A user's index (ints, slices, None, ..., lists, int/bool tensors) as a numpy key."""
    items = index if isinstance(index, tuple) else (index,)
    key = []
    for item in items:
        if isinstance(item, Tensor):
            item = item._array
        elif isinstance(item, list):
            item = np.asarray(item)
        if isinstance(item, np.ndarray) and item.dtype.kind not in "biu":
            raise IndexError(f"__getitem__: tensors used as indices must be long, int or bool, got {item.dtype}")
        key.append(item)
    return tuple(key)


def _keeping_0d(key):
    """The key with a trailing `...` (when it has none): then x[0] of a vector is a 0-d view, as in
    PyTorch, where numpy would give a scalar copy."""
    return key if any(k is Ellipsis for k in key) else key + (Ellipsis,)


def _is_advanced(key):
    return any(isinstance(k, np.ndarray) for k in key)


def _is_bool_scalar(k):
    return isinstance(k, np.ndarray) and k.dtype == bool and k.ndim == 0


def _scatter_key(key):
    """The key with bool arrays replaced by their nonzero() indices, as `np.add.at` needs."""
    out = []
    for k in key:
        if isinstance(k, np.ndarray) and k.dtype == bool:
            out.extend(np.nonzero(k))
        else:
            out.append(k)
    return tuple(out)


def _describe(key):
    """The key as the user wrote it: `[:, 5]`, not `[slice(None, None, None), 5]`."""
    return "[" + ", ".join(_describe_item(k) for k in key) + "]"


def _describe_item(k):
    if isinstance(k, np.ndarray):
        return f"array{tuple(k.shape)}"
    if isinstance(k, slice):
        text = ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step))
        return text[:-1] if text.endswith(":") and k.step is None else text
    return "..." if k is Ellipsis else repr(k)


# ---- edge cases, argument checks and dtype rules, named -----------------------------------------

def _check_scatterable(key):
    """Reading x[m, idx] with a 0-d True mask m and integer arrays idx works, but its gradient is not
    scattered back here (numpy reads the 0-d mask as one more integer array): refused while a
    gradient is recorded."""
    masks = [k for k in key if _is_bool_scalar(k)]
    if masks and all(masks) and any(isinstance(k, np.ndarray) and not _is_bool_scalar(k) for k in key):
        raise IndexError("__getitem__: a 0-d bool mask with integer-array indices has no gradient here; "
                         "index in two steps")


def _as_result_type(v: TensorOrNumber, other: TensorOrNumber, op: str) -> Tensor:
    """`v` as a tensor of PyTorch's result dtype of v and other (a Cast node where a tensor's dtype
    differs, so its gradient comes back in its own dtype): a number must fit that dtype (an int8
    tensor can't take 1000 here, though `+` wraps it)."""
    want = _dtype.result_dtype(raw(v), raw(other))
    if isinstance(v, Tensor):
        return v if v._array.dtype == want else v.to(want)
    return Tensor._make(_dtype.scalar_to(v, want, op))


def _check_where_shapes(cond: Tensor, x: Tensor, y: Tensor) -> None:
    try:
        np.broadcast_shapes(cond._array.shape, x._array.shape, y._array.shape)
    except ValueError:
        raise RuntimeError(
            f"where: condition of shape {cond._array.shape}, input of shape {x._array.shape} and other of shape "
            f"{y._array.shape} cannot be broadcast together"
        ) from None


def _fill_mask(input, mask, value, op):
    """The bool ndarray of `mask`, checked (as `value`) for masked_fill and masked_fill_."""
    m = np.asarray(raw(mask))
    if m.dtype != np.bool_:
        raise RuntimeError(f"{op}: expected a bool mask, got dtype {m.dtype} (use mask.bool() or mask == 0)")
    try:  # the input broadcasts up to the mask too: the result has their broadcast shape, as in PyTorch
        np.broadcast_shapes(m.shape, input._array.shape)
    except ValueError:
        raise RuntimeError(f"{op}: mask of shape {m.shape} and input of shape {tuple(input.shape)} "
                           "cannot be broadcast together") from None
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"{op}: value must be a number or a 0-dim tensor, got shape {tuple(value.shape)}")
    if not isinstance(value, (Tensor, numbers.Number)):
        raise TypeError(f"{op}: value must be a number or a 0-dim tensor, got {type(value).__name__} {value!r}")
    return m


def fill_value(value: TensorOrNumber, dtype: DType, op: str) -> Tensor:
    """The value a fill writes (masked_fill, fill_, index_fill ...) as a tensor of the filled tensor's
    dtype, as PyTorch converts it: a number must fit the dtype (an int8 tensor can't take 1000), a
    0-d tensor is cast (its gradient flows back through the cast)."""
    if isinstance(value, Tensor):
        if value.requires_grad and _dtype.kind(dtype) != "f" and grad_mode.modes.grad_enabled:
            raise RuntimeError(f"{op}: the value requires grad, but the result has dtype {dtype}, which carries "
                               "no gradient (PyTorch refuses it too); pass value.detach()")
        return value if value.dtype == dtype else value.to(dtype)
    return Tensor._make(_dtype.scalar_to(value, dtype, op))


def _tri(input, diagonal, upper, op):
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, got shape {tuple(input.shape)}")
    n, m = input.shape[-2:]
    keep = np.triu(np.ones((n, m), dtype=bool), diagonal) if upper else np.tril(np.ones((n, m), dtype=bool), diagonal)
    return where(Tensor._make(keep), input, Tensor._make(np.zeros((), dtype=input.dtype)))


def _check_range(idx, n, d, op, error=IndexError):
    """PyTorch's rule for gather/index_select/embedding: 0 <= index < n; a negative index is an error, not a wrap."""
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise error(f"{op}: index {int(bad)} is out of bounds for dimension {d} with size {n}")


def _scatter_positions(input, dim, index, src, op):
    """Check scatter's arguments as PyTorch does; return the numpy key of the positions written
    (for dim=0: out[index[i][j]][j]) and the part of `src` written there (a number converted to
    input's dtype). An empty index writes nothing, and PyTorch checks nothing else of it then.

    The index may be smaller than src in every dim and than input in every dim but `dim`: only
    src's corner of the index's shape is used."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}: index must be a Tensor, got {type(index).__name__}")
    d = _wrap_dim(dim, input.ndim, op)
    idx = index._array
    if isinstance(src, Tensor) and src.dtype != input.dtype:
        raise RuntimeError(f"{op}: expected src of the input's dtype {input.dtype}, got {src.dtype}")
    if idx.size == 0:  # (a src tensor stays in the graph, its gradient zeros; a number is not converted)
        nothing = src.reshape(-1)[:0] if isinstance(src, Tensor) else np.zeros(0, input._array.dtype)
        return (np.zeros(0, np.int64),) * input.ndim, nothing
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: expected an int64 or int32 index, got dtype {idx.dtype}")
    if max(idx.ndim, 1) != input.ndim:  # (a 0-d index counts as 1-d, as in PyTorch; callers make input >= 1-d)
        raise RuntimeError(f"{op}: index of shape {idx.shape} must have as many dims as input of "
                           f"shape {tuple(input.shape)}")
    idx = idx.reshape(idx.shape or (1,))
    in_shape = tuple(input.shape)
    src_shape = (tuple(src.shape) or (1,)) if isinstance(src, Tensor) else None
    if any(k > n for i, (k, n) in enumerate(zip(idx.shape, in_shape)) if i != d) or (
            src_shape is not None and any(k > n for k, n in zip(idx.shape, src_shape))):
        raise RuntimeError(f"{op}: index of shape {idx.shape} must be no larger than input of shape "
                           f"{tuple(input.shape)} apart from dim {d}, and no larger than src of shape {src_shape}")
    if idx.min() < 0 or idx.max() >= in_shape[d]:
        bad = idx.min() if idx.min() < 0 else idx.max()
        raise RuntimeError(f"{op}: index {int(bad)} is out of bounds for dimension {d} with size {in_shape[d]}")
    grids = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    key = tuple(grids)
    if not isinstance(src, Tensor):
        return key, _dtype.scalar_to(src, input.dtype, op)  # it must fit input's dtype, as in PyTorch
    if src.ndim == 0:
        src = src.reshape(1)
    part = src if tuple(src.shape) == idx.shape else getitem(src, tuple(slice(0, k) for k in idx.shape))
    return key, part


def _scatter_reduce(input, dim, index, src, reduce):
    """scatter(..., reduce='add' | 'multiply'): PyTorch has no derivative for it, so neither does minitensor."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r}")
    if grad_mode.modes.grad_enabled and (input.requires_grad or (isinstance(src, Tensor) and src.requires_grad)):
        raise RuntimeError("scatter: the derivative of scatter with reduce= is not implemented (as in PyTorch); "
                           "use scatter_add for a sum you can differentiate, or compute under no_grad()")
    key, part = _scatter_positions(input, dim, index, src, "scatter")
    out = input._array.copy()
    with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 and overflow: NaN and inf, silently as in PyTorch
        (np.add if reduce == "add" else np.multiply).at(out, key, np.asarray(raw(part), dtype=out.dtype))
    return Tensor._make(out)
