r"""A tensor's storage (issue 29): `resize_` / `resize_as_`, which change how many elements a tensor
holds, `new`, PyTorch's legacy constructor from a tensor, and the in-place fills `random_` and
`fill_diagonal_`.

`resize_` keeps the first elements (in row-major order) and, when it grows, adds zeros: PyTorch
leaves the added elements uninitialized (whatever memory held), minitensor fills them with 0 so a
program's result never depends on it. A shrink reuses the tensor's memory; a grow allocates new
memory, so a view taken before it no longer shares the tensor's elements (as in PyTorch, where a
reallocated storage leaves old views on the old one).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import _dtype, factories as F
from ..random import Generator, _gen
from ..tensor import Size, Tensor, _size_arg
from ..types import SizeArg, TensorOrNumber
from . import indexing
from .indexing import where
from .inplace import inplace


def resize_(self: Tensor, *sizes: SizeArg, size: Sequence[int] | None = None,
            memory_format: object = None) -> Tensor:
    """In place: self takes the shape `sizes`, keeping its first elements in row-major order; elements
    added by a grow are 0 (PyTorch's are uninitialized). Refused for a tensor that requires grad."""
    if size is not None:
        if sizes:
            raise TypeError(f"resize_() got the size both positionally ({sizes!r}) and as size={size!r}")
        sizes = (size,)
    elif not sizes:  # (`x.resize_(())` is the 0-d shape; no size at all is PyTorch's missing argument)
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    shape = _size_arg(sizes, "resize_")
    if any(n < 0 for n in shape):
        raise RuntimeError(f"resize_: trying to create a tensor with negative dimension, got {list(shape)}")
    if self.requires_grad:
        raise RuntimeError("resize_: cannot resize variables that require grad")
    if not self._array.flags.writeable:
        raise RuntimeError("resize_: an expanded view can't be resized (its elements share memory); clone() it first")
    flat = self._array.reshape(-1)  # (a copy for a strided view: its memory is not row-major)
    n = math.prod(shape)
    if n <= flat.size:
        self._array = flat[:n].reshape(shape)
    else:
        grown = np.zeros(n, self._array.dtype)
        grown[:flat.size] = flat
        self._array = grown.reshape(shape)
    self._bump_version()
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: object = None) -> Tensor:
    """In place: `resize_` to the_template's shape."""
    return resize_(self, tuple(the_template.shape))


def new(self: Tensor, *args: Any, size: SizeArg | None = None, other: Tensor | None = None,
        device: object = None) -> Tensor:
    """PyTorch's legacy constructor, in self's dtype: `x.new(2, 3)`, `x.new(torch.Size([2, 3]))` or
    `x.new(size=(2, 3))` a new tensor of that shape (uninitialized in PyTorch, zeros here), `x.new([1, 2])`
    or `x.new((1, 2))` one of those values, `x.new()` an empty one, and `x.new(t)` or `x.new(other=t)` t's
    memory as a new tensor (a view of t, so gradients reach it; t must have x's dtype)."""
    if size is not None or other is not None:
        if args or (size is not None and other is not None):
            raise TypeError("new: takes a size, a tensor or data, once: by position or as size=/other=, not both")
        if size is not None:
            return F.new_zeros(self, _size_arg((size,), "new"))
        args = (other,)
    if not args:
        return F.new_empty(self, (0,))
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if t._array.dtype != self._array.dtype:
            raise TypeError(f"new: expected a tensor of dtype {self.dtype}, got one of {t.dtype}")
        return t.view(t._array.shape)
    if len(args) == 1 and isinstance(args[0], (list, tuple)) and not isinstance(args[0], Size):
        return F.new_tensor(self, args[0])
    return F.new_zeros(self, _size_arg(args, "new"))


def random_(self: Tensor, from_: int = 0, to: int | None = None, *, generator: Generator | None = None) -> Tensor:
    """In place: integers drawn uniformly from [from, to) (drawn by minitensor's generator). With one
    argument, from [0, that); with none, from [0, 2^m] where m is the float dtype's mantissa bits
    (24 for float32), or over the integer dtype's non-negative range.

    forward: out = k,  k ~ U{from, ..., to - 1}   (drawn, no input of the graph)
    VJP:     gx = 0
    """
    if to is None and from_ != 0:
        from_, to = 0, from_  # random_(to)
    if to is None:
        to = _random_top(self.dtype) + 1
    if from_ >= to:
        raise RuntimeError(f"random_: expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    if self.dtype.kind in "iub":
        info = np.iinfo(self.dtype) if self.dtype.kind != "b" else None
        lo, hi = (info.min, info.max) if info else (0, 1)
        if from_ < lo or to - 1 > hi:
            raise RuntimeError(f"random_: from={from_}, to - 1 = {to - 1} is out of bounds for {self.dtype}")
    draws = _gen(generator).integers(from_, to, self.shape, dtype=np.int64, endpoint=False)
    return inplace(self, "random_", _fill_all, Tensor._make(draws.astype(self.dtype)))


def _random_top(dtype):
    if _dtype.kind(dtype) == "f":
        return 2 ** (np.finfo(dtype).nmant + 1)
    if dtype.kind == "b":
        return 1
    return int(np.iinfo(dtype).max)


def _fill_all(t, values):
    return where(Tensor._make(np.ones((), bool)), values, t)


def fill_diagonal_(self: Tensor, fill_value: TensorOrNumber, wrap: bool = False) -> Tensor:
    """In place: the main diagonal (x[i, i, ...]) becomes fill_value; a tall matrix's diagonal
    restarts after every cols+1 rows when wrap=True. A Where node:

    forward: out = where(on_diagonal, fill_value, x)
    VJP:     gx = where(on_diagonal, 0, g);  gfill_value = sum of g on the diagonal (a 0-d tensor value)
    """
    if self.ndim < 2:
        raise RuntimeError("fill_diagonal_: dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions of input must be of equal length, got {tuple(self.shape)}")
    mask = np.zeros(self.shape, bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    if isinstance(fill_value, Tensor) and fill_value.ndim != 0:
        raise RuntimeError(f"fill_diagonal_: fill_value must be a number or a 0-d tensor, got shape "
                           f"{tuple(fill_value.shape)}")
    if not isinstance(fill_value, Tensor) and self.dtype.kind in "iu" and isinstance(fill_value, float):
        fill_value = int(fill_value)  # PyTorch truncates a float into an integer tensor here
    value = indexing.fill_value(fill_value, self._array.dtype, "fill_diagonal_")
    return inplace(self, "fill_diagonal_", lambda t: where(Tensor._make(mask), value, t))

