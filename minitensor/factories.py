"""Making tensors: from data, filled with a value, ranges, identity, and random draws.

Every factory takes PyTorch's keywords `dtype`, `device` ('cpu' only) and `requires_grad`; float
factories use the default dtype (float32 unless `set_default_dtype` changed it).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from . import _dtype
from .random import Generator, _gen
from .tensor import Tensor, _size_arg, _to_array, check_device, tensor_method
from .types import ArrayLike, DeviceLike, DTypeLike, Number, SizeArg


def _finish(arr, requires_grad, device, where):
    check_device(device, where)
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _float_dtype(dtype):
    return _dtype.as_dtype(dtype) or _dtype.get_default_dtype()


def tensor(data: ArrayLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """A new tensor that owns a copy of `data` (lists, numbers, numpy arrays, tensors)."""
    arr = np.array(_to_array(data, dtype, "tensor"), copy=True)
    return _finish(arr, requires_grad, device, "tensor")


def as_tensor(data: ArrayLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None) -> Tensor:
    """Like `tensor`, but shares memory with a numpy array (or returns a tensor as it is) when it can."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == _dtype.as_dtype(dtype)):
        return data
    return _finish(_to_array(data, dtype, "as_tensor"), False, device, "as_tensor")


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with `ndarray`, keeping its dtype."""
    # one test for the usual case (hand-written VJPs wrap each gradient with this)
    if type(ndarray) is _ndarray and ndarray.dtype.kind in "biuf":
        return _make(ndarray)
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray, got {type(ndarray).__name__}")
    if ndarray.dtype.kind not in "biuf":
        raise TypeError(f"from_numpy: can't convert an array of dtype {ndarray.dtype}")
    return _make(ndarray)


_ndarray, _make = np.ndarray, Tensor._make


def zeros(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _finish(np.zeros(_size_arg(size, "zeros"), _float_dtype(dtype)), requires_grad, device, "zeros")


def ones(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _finish(np.ones(_size_arg(size, "ones"), _float_dtype(dtype)), requires_grad, device, "ones")


def empty(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """Here 'uninitialised' memory is zeros, so results never depend on garbage."""
    return _finish(np.zeros(_size_arg(size, "empty"), _float_dtype(dtype)), requires_grad, device, "empty")


def full(size: SizeArg, fill_value: Number, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = np.asarray(_to_array(fill_value, None, "full")).dtype
    dtype = _dtype.as_dtype(dtype)
    filled = np.full(_size_arg((size,), "full"), _fill(fill_value, dtype, "full"), dtype)
    return _finish(filled, requires_grad, device, "full")


def _fill(value, dtype, op):
    """A Python number checked to fit `dtype`, as PyTorch checks it (an int8 tensor can't hold 1000)."""
    return _dtype.scalar_to(value, dtype, op) if type(value) in (bool, int, float) else value


def _like(input, dtype):
    return _dtype.as_dtype(dtype) or input.dtype


def zeros_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _finish(np.zeros(input.shape, _like(input, dtype)), requires_grad, device, "zeros_like")


def ones_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _finish(np.ones(input.shape, _like(input, dtype)), requires_grad, device, "ones_like")


def empty_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return zeros_like(input, dtype, device, requires_grad)


def full_like(input: Tensor, fill_value: Number, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    dtype = _like(input, dtype)
    filled = np.full(input.shape, _fill(fill_value, dtype, "full_like"), dtype)
    return _finish(filled, requires_grad, device, "full_like")


def arange(start: Number, end: Number | None = None, step: Number = 1, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """[start, end) in steps; int64 when all arguments are integers, else the default float dtype."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = _dtype.int64 if ints else _dtype.get_default_dtype()
    return _finish(np.arange(start, end, step).astype(_dtype.as_dtype(dtype)), requires_grad, device, "arange")


def linspace(start: float, end: float, steps: int, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _finish(np.linspace(start, end, int(steps)).astype(_float_dtype(dtype)), requires_grad, device, "linspace")


def eye(n: int, m: int | None = None, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad, device, "eye")


def rand(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False,
         generator: Generator | None = None) -> Tensor:
    """Uniform on [0, 1), from the global generator (seeded by manual_seed)."""
    g = _gen(generator)
    return _finish(g.random(_size_arg(size, "rand")).astype(_float_dtype(dtype)), requires_grad, device, "rand")


def randn(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False,
          generator: Generator | None = None) -> Tensor:
    """Standard normal, from the global generator (seeded by manual_seed)."""
    g = _gen(generator)
    return _finish(g.standard_normal(_size_arg(size, "randn")).astype(_float_dtype(dtype)), requires_grad, device, "randn")


def randint(low: int = 0, high: int | Sequence[int] | None = None, size: SizeArg | None = None,
            dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False, generator: Generator | None = None) -> Tensor:
    """Integers uniform on [low, high): randint(high, size) or randint(low, high, size)."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if high is None or size is None:
        raise TypeError("randint: expected randint(high, size) or randint(low, high, size)")
    g = _gen(generator)
    arr = g.integers(low, high, size=_size_arg((size,), "randint"))
    return _finish(arr.astype(_dtype.as_dtype(dtype) or _dtype.int64), requires_grad, device, "randint")


def randperm(n: int, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False,
             generator: Generator | None = None) -> Tensor:
    g = _gen(generator)
    return _finish(g.permutation(n).astype(_dtype.as_dtype(dtype) or _dtype.int64), requires_grad, device, "randperm")


def rand_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return rand(*input.shape, dtype=_like(input, dtype), device=device, requires_grad=requires_grad)


def randn_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return randn(*input.shape, dtype=_like(input, dtype), device=device, requires_grad=requires_grad)


def normal(mean: float, std: float, size: Sequence[int] | None = None, generator: Generator | None = None) -> Tensor:
    g = _gen(generator)
    return Tensor._make(np.asarray(g.normal(mean, std, size), dtype=_dtype.get_default_dtype()))


def bernoulli(input: Tensor, p: float | None = None, generator: Generator | None = None) -> Tensor:
    g = _gen(generator)
    probs = input._array if p is None else np.full(input.shape, p)
    return Tensor._make((g.random(input.shape) < probs).astype(input.dtype))


# ---- `x.new_zeros(...)` & co: new tensors with x's dtype (unless `dtype=` says otherwise) -------------

@tensor_method()
def new_tensor(self: Tensor, data: ArrayLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (cut from any graph), of self's dtype unless `dtype` is given."""
    return tensor(data.detach() if isinstance(data, Tensor) else data, dtype=dtype or self.dtype, device=device,
                  requires_grad=requires_grad)


@tensor_method()
def new_zeros(self: Tensor, *size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return zeros(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@tensor_method()
def new_ones(self: Tensor, *size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return ones(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@tensor_method()
def new_empty(self: Tensor, *size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    return empty(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@tensor_method()
def new_full(self: Tensor, size: Sequence[int], fill_value: Number, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full: size must be a tuple of ints, got {type(size).__name__}")
    return full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
