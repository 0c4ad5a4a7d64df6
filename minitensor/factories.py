"""Making tensors: from data, filled with a value, ranges, identity, and random draws.

Every factory takes PyTorch's keywords `dtype`, `device` ('cpu' only) and `requires_grad`; float
factories use the default dtype (float32 unless `set_default_dtype` changed it).
"""
from __future__ import annotations

import math
import operator
from typing import Sequence, SupportsIndex

import numpy as np

from . import _dtype
from .random import Generator, _gen
from .tensor import Tensor, _size_arg, _to_array, check_device, refuse_foreign_byte_order
from .types import ArrayLike, DeviceLike, DTypeLike, Number, SizeArg


def _finish(arr, requires_grad, device, where):
    check_device(device, where)
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _float_dtype(dtype):
    return _dtype.as_dtype(dtype) or _dtype.get_default_dtype()


def _shape(size, op):
    """A new tensor's shape from `size` (ints, or one tuple of ints), refusing a negative dim as PyTorch does.
    No size at all is PyTorch's TypeError too: `zeros()` is a mistake, `zeros(())` a 0-d tensor."""
    if not size:
        raise TypeError(f"{op}() missing 1 required positional argument: 'size' (give () for a 0-d tensor)")
    shape = _size_arg(size, op)
    for n in shape:
        if n < 0:
            raise RuntimeError(f"{op}: trying to create a tensor with negative dimension {n}: {list(shape)}")
    return shape


def _drawn_dtype(dtype, op):
    """The dtype of a draw from a continuous distribution: `dtype`, else the default, and a float one."""
    return _dtype.for_draws(_float_dtype(dtype), op)


def tensor(data: ArrayLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False) -> Tensor:
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
    if type(ndarray) is _ndarray and ndarray.dtype.kind in "biuf" and ndarray.dtype.isnative:
        return _make(ndarray)
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray, got {type(ndarray).__name__}")
    if ndarray.dtype.kind not in "biuf":
        raise TypeError(f"from_numpy: can't convert an array of dtype {ndarray.dtype}")
    refuse_foreign_byte_order(ndarray, "from_numpy")
    return _make(ndarray)


_ndarray, _make = np.ndarray, Tensor._make


def zeros(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False) -> Tensor:
    return _finish(np.zeros(_shape(size, "zeros"), _float_dtype(dtype)), requires_grad, device, "zeros")


def ones(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
         requires_grad: bool = False) -> Tensor:
    return _finish(np.ones(_shape(size, "ones"), _float_dtype(dtype)), requires_grad, device, "ones")


def empty(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
          requires_grad: bool = False) -> Tensor:
    """Here 'uninitialised' memory is zeros, so results never depend on garbage."""
    return _finish(np.zeros(_shape(size, "empty"), _float_dtype(dtype)), requires_grad, device, "empty")


def full(size: SizeArg, fill_value: Number, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
         requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = np.asarray(_to_array(fill_value, None, "full")).dtype
    dtype = _dtype.as_dtype(dtype)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full: argument 'size' must be a tuple of ints, not {type(size).__name__}")
    filled = np.full(_shape((size,), "full"), _fill(fill_value, dtype, "full"), dtype)
    return _finish(filled, requires_grad, device, "full")


def _fill(value, dtype, op):
    """A Python number checked to fit `dtype`, as PyTorch checks it (an int8 tensor can't hold 1000)."""
    return _dtype.scalar_to(value, dtype, op) if type(value) in (bool, int, float) else value


def _like(input, dtype):
    return _dtype.as_dtype(dtype) or input.dtype


def zeros_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
               requires_grad: bool = False) -> Tensor:
    return _finish(np.zeros(input.shape, _like(input, dtype)), requires_grad, device, "zeros_like")


def ones_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
              requires_grad: bool = False) -> Tensor:
    return _finish(np.ones(input.shape, _like(input, dtype)), requires_grad, device, "ones_like")


def empty_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
               requires_grad: bool = False) -> Tensor:
    return zeros_like(input, dtype, device, requires_grad)


def full_like(input: Tensor, fill_value: Number, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
              requires_grad: bool = False) -> Tensor:
    dtype = _like(input, dtype)
    filled = np.full(input.shape, _fill(fill_value, dtype, "full_like"), dtype)
    return _finish(filled, requires_grad, device, "full_like")


def arange(start: Number, end: Number | None = None, step: Number = 1, dtype: DTypeLike | None = None,
           device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    """[start, end) in steps; int64 when all arguments are integers, else the default float dtype."""
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))  # 0-d tensors
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise RuntimeError(f"arange: unsupported range: {start} -> {end} (step {step})")
    if (end - start) * step < 0:  # PyTorch refuses an empty range that runs the wrong way
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = _dtype.int64 if ints else _dtype.get_default_dtype()
    dtype = _dtype.as_dtype(dtype)
    if dtype == _dtype.bool_:
        raise RuntimeError("arange: not implemented for dtype bool")
    return _finish(np.arange(start, end, step).astype(dtype), requires_grad, device, "arange")


def linspace(start: float, end: float, steps: int, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
             requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from start to end, both included."""
    try:
        steps = operator.index(steps)  # an int or an integer tensor, never 2.5
    except TypeError:
        raise TypeError(f"linspace: steps must be an int, got {type(steps).__name__} {steps!r}") from None
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}")
    dtype = _float_dtype(dtype)
    if dtype == _dtype.bool_ and steps > 1:  # (0 or 1 steps need no kernel in PyTorch: start, or nothing)
        raise RuntimeError("linspace: not implemented for dtype bool")
    values = np.linspace(float(start), float(end), steps)
    return _finish(values.astype(dtype), requires_grad, device, "linspace")


def eye(n: int, m: int | None = None, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
        requires_grad: bool = False) -> Tensor:
    for name, k in (("n", n), ("m", m)):
        if k is not None and k < 0:
            raise RuntimeError(f"eye: {name} must be greater or equal to 0, got {k}")
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad, device, "eye")


def rand(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False,
         generator: Generator | None = None) -> Tensor:
    """Uniform on [0, 1), from the global generator (seeded by manual_seed)."""
    g = _gen(generator)
    return _finish(g.random(_shape(size, "rand")).astype(_drawn_dtype(dtype, "rand")), requires_grad, device, "rand")


def randn(*size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False,
          generator: Generator | None = None) -> Tensor:
    """Standard normal, from the global generator (seeded by manual_seed)."""
    g = _gen(generator)
    return _finish(g.standard_normal(_shape(size, "randn")).astype(_drawn_dtype(dtype, "randn")), requires_grad, device,
                   "randn")


def randint(low: int = 0, high: int | Sequence[int] | None = None, size: SizeArg | None = None,
            dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False,
            generator: Generator | None = None) -> Tensor:
    """Integers uniform on [low, high): randint(high, size) or randint(low, high, size)."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    if not (isinstance(low, SupportsIndex) and isinstance(high, SupportsIndex) and isinstance(size, (tuple, list))):
        raise TypeError(f"randint: expected randint(high, size) or randint(low, high, size) with int bounds (never "
                        f"2.5) and a tuple size, got low {low!r}, high {high!r} and size {size!r}")
    low, high = operator.index(low), operator.index(high)  # (a 0-d integer tensor is a bound too)
    if low >= high:
        raise RuntimeError(f"randint: expects 'low' to be less than 'high', but got low={low} >= high={high}")
    dtype = _dtype.as_dtype(dtype) or _dtype.int64
    if dtype.kind in "biu":  # both bounds must be values of the dtype, as PyTorch checks
        info = (0, 1) if dtype == _dtype.bool_ else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        if not info[0] <= low <= info[1] or not info[0] <= high - 1 <= info[1]:
            raise RuntimeError(f"randint: the range [{low}, {high}) is out of bounds for dtype {dtype}")
    g = _gen(generator)
    arr = g.integers(low, high, size=_shape((size,), "randint"))
    return _finish(arr.astype(dtype), requires_grad, device, "randint")


def randperm(n: int, dtype: DTypeLike | None = None, device: DeviceLike | None = None, requires_grad: bool = False,
             generator: Generator | None = None) -> Tensor:
    dtype = _dtype.as_dtype(dtype) or _dtype.int64
    if n < 0:
        raise RuntimeError(f"randperm: trying to create a tensor with negative dimension {n}: [{n}]")
    if dtype == _dtype.bool_:
        raise RuntimeError("randperm: not implemented for dtype bool")
    if dtype.kind in "iu" and n - 1 > np.iinfo(dtype).max:
        raise RuntimeError(f"randperm: n={n} values can't be held in {dtype} without overflow")
    g = _gen(generator)
    return _finish(g.permutation(n).astype(dtype), requires_grad, device, "randperm")


def rand_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
              requires_grad: bool = False) -> Tensor:
    return _finish(_gen(None).random(input.shape).astype(_drawn_dtype(_like(input, dtype), "rand_like")),
                   requires_grad, device, "rand_like")


def randn_like(input: Tensor, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
               requires_grad: bool = False) -> Tensor:
    return _finish(_gen(None).standard_normal(input.shape).astype(_drawn_dtype(_like(input, dtype), "randn_like")),
                   requires_grad, device, "randn_like")


def normal(mean: float | Tensor, std: float | Tensor = 1.0, size: Sequence[int] | None = None,
           generator: Generator | None = None, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False) -> Tensor:
    """Draws from N(mean, std^2): one per element of a tensor `mean` and/or `std` (of its dtype), or
    `size` of them for a number mean and std (of `dtype`, else the default float dtype)."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if tensors:
        if size is not None:
            raise TypeError("normal: size is taken only with a number mean and std, not with tensors")
        for t in tensors:
            if t.dtype.kind != "f":
                raise RuntimeError(f"normal: not implemented for dtype {t.dtype}; mean and std must be float tensors")
        shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors)) if len(tensors) == 2 else tensors[0].shape
        dtype = tensors[0].dtype
    else:
        if size is None:
            raise TypeError("normal: a number mean and std need a size: normal(mean, std, size)")
        shape, dtype = _shape((size,), "normal"), _drawn_dtype(dtype, "normal")
    sd = np.asarray(std._array if isinstance(std, Tensor) else std)
    if not (sd >= 0).all():  # (NaN too)
        raise RuntimeError(f"normal: expects std >= 0.0, but found std {sd[~(sd >= 0)].flat[0]}")
    mu = mean._array if isinstance(mean, Tensor) else mean
    draws = _gen(generator).standard_normal(shape)
    with np.errstate(invalid="ignore", over="ignore"):  # an infinite mean stays infinite
        return _finish(np.asarray(mu + sd * draws).astype(dtype), requires_grad, device, "normal")


def bernoulli(input: Tensor, p: float | None = None, generator: Generator | None = None) -> Tensor:
    """1 with probability p (each element of `input`, or the number `p`), else 0, in input's dtype."""
    if p is None and input.dtype.kind != "f":
        raise RuntimeError(f"bernoulli: not implemented for dtype {input.dtype}; the probabilities must be floats")
    probs = input._array if p is None else np.asarray(p)
    if not ((probs >= 0) & (probs <= 1)).all():  # (NaN too)
        raise RuntimeError("bernoulli: expects probabilities in [0, 1], got "
                           f"{probs[~((probs >= 0) & (probs <= 1))].flat[0]}")
    g = _gen(generator)
    return Tensor._make((g.random(input.shape) < probs).astype(input.dtype))


# ---- `x.new_zeros(...)` & co: new tensors with x's dtype (unless `dtype=` says otherwise) -------------

def new_tensor(self: Tensor, data: ArrayLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
               requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (cut from any graph), of self's dtype unless `dtype` is given."""
    return tensor(data.detach() if isinstance(data, Tensor) else data, dtype=dtype or self.dtype, device=device,
                  requires_grad=requires_grad)


def new_zeros(self: Tensor, *size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
              requires_grad: bool = False) -> Tensor:
    return zeros(_shape(size, "new_zeros"), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_ones(self: Tensor, *size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
             requires_grad: bool = False) -> Tensor:
    return ones(_shape(size, "new_ones"), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_empty(self: Tensor, *size: SizeArg, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
              requires_grad: bool = False) -> Tensor:
    return empty(_shape(size, "new_empty"), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_full(self: Tensor, size: Sequence[int], fill_value: Number, dtype: DTypeLike | None = None,
             device: DeviceLike | None = None, requires_grad: bool = False) -> Tensor:
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full: size must be a tuple of ints, got {type(size).__name__}")
    return full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
