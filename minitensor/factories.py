"""Making tensors: from data, filled with a value, ranges, identity, and random draws.

Every factory takes PyTorch's keywords `dtype`, `device` ('cpu' only) and `requires_grad`; float
factories use the default dtype (float32 unless `set_default_dtype` changed it).
"""
from __future__ import annotations

import math
import operator
from typing import Callable, Sequence, SupportsIndex

import numpy as np

from . import _dtype
from ._layout import layout as _layout_type, memory_format as _memory_format_type, strided
from .random import Generator, _gen
from .tensor import Tensor, _size_arg, _to_array, check_device, refuse_foreign_byte_order
from .types import ArrayLike, DeviceLike, DTypeLike, Number, SizeArg


def _finish(arr, requires_grad, device, where, layout=None, pin_memory=False, memory_format=None):
    check_device(device, where)
    check_memory(where, layout, pin_memory, memory_format)
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def check_memory(where: str, layout: object = None, pin_memory: object = False, memory_format: object = None) -> None:
    """PyTorch's `layout=`, `pin_memory=` and `memory_format=`, checked as `device=` is: what a dense
    CPU tensor can be (strided, not pinned, any memory format: every result is row-major) is taken,
    anything else refused as PyTorch refuses it on a machine without an accelerator."""
    if layout is not None:
        if not isinstance(layout, _layout_type):
            raise TypeError(f"{where}(): argument 'layout' must be torch.layout, not {type(layout).__name__}")
        if layout is not strided:
            raise RuntimeError(f"{where}(): layout {layout!r} is not supported; minitensor's tensors are dense "
                               "(layout=torch.strided)")
    if pin_memory:
        raise RuntimeError(f"{where}(): pin_memory=True requires a CUDA or other accelerator backend; minitensor runs "
                           "on the CPU only and has no pinned memory")
    if memory_format is not None and not isinstance(memory_format, _memory_format_type):
        raise TypeError(f"{where}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")


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


def _sizes(sizes, size, op):
    """The shape given positionally (`zeros(2, 3)`, `zeros((2, 3))`) or as the keyword `size=` (`zeros(size=(2, 3))`),
    as PyTorch takes either, never both."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{op}() got the size both positionally ({sizes!r}) and as size={size!r}")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{op}(): argument 'size' must be a tuple of ints, not {type(size).__name__}")
    return (size,)


def _drawn_dtype(dtype, op):
    """The dtype of a draw from a continuous distribution: `dtype`, else the default, and a float one."""
    return _dtype.for_draws(_float_dtype(dtype), op)


def tensor(data: ArrayLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor that owns a copy of `data` (lists, numbers, numpy arrays, tensors)."""
    check_memory("tensor", pin_memory=pin_memory)
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
    if type(ndarray) is _ndarray and _dtype.kind(ndarray.dtype) in "biuf" and ndarray.dtype.isnative:
        return _make(ndarray)
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray, got {type(ndarray).__name__}")
    if _dtype.kind(ndarray.dtype) not in "biuf":
        raise TypeError(f"from_numpy: can't convert an array of dtype {ndarray.dtype}")
    refuse_foreign_byte_order(ndarray, "from_numpy")
    return _make(ndarray)


_ndarray, _make = np.ndarray, Tensor._make


def zeros(*sizes: SizeArg, size: Sequence[int] | None = None, dtype: DTypeLike | None = None,
          layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
          requires_grad: bool = False) -> Tensor:
    shape = _shape(_sizes(sizes, size, "zeros"), "zeros")
    return _finish(np.zeros(shape, _float_dtype(dtype)), requires_grad, device, "zeros", layout, pin_memory)


def ones(*sizes: SizeArg, size: Sequence[int] | None = None, dtype: DTypeLike | None = None,
         layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
         requires_grad: bool = False) -> Tensor:
    shape = _shape(_sizes(sizes, size, "ones"), "ones")
    return _finish(np.ones(shape, _float_dtype(dtype)), requires_grad, device, "ones", layout, pin_memory)


def empty(*sizes: SizeArg, size: Sequence[int] | None = None, dtype: DTypeLike | None = None,
          layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
          requires_grad: bool = False, memory_format: object = None) -> Tensor:
    """Here 'uninitialised' memory is zeros, so results never depend on garbage."""
    shape = _shape(_sizes(sizes, size, "empty"), "empty")
    return _finish(np.zeros(shape, _float_dtype(dtype)), requires_grad, device, "empty", layout, pin_memory,
                   memory_format)


def full(size: SizeArg, fill_value: Number, *, dtype: DTypeLike | None = None, layout: object = None,
         device: DeviceLike | None = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = np.asarray(_to_array(fill_value, None, "full")).dtype
    dtype = _dtype.as_dtype(dtype)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full: argument 'size' must be a tuple of ints, not {type(size).__name__}")
    filled = np.full(_shape((size,), "full"), _fill(fill_value, dtype, "full"), dtype)
    return _finish(filled, requires_grad, device, "full", layout, pin_memory)


def _fill(value, dtype, op):
    """A Python number checked to fit `dtype`, as PyTorch checks it (an int8 tensor can't hold 1000)."""
    return _dtype.scalar_to(value, dtype, op) if type(value) in (bool, int, float) else value


def _like(input, dtype):
    return _dtype.as_dtype(dtype) or input.dtype


def zeros_like(input: Tensor, *, dtype: DTypeLike | None = None, layout: object = None,
               device: DeviceLike | None = None, pin_memory: bool = False, requires_grad: bool = False,
               memory_format: object = None) -> Tensor:
    return _finish(np.zeros(input.shape, _like(input, dtype)), requires_grad, device, "zeros_like", layout,
                   pin_memory, memory_format)


def ones_like(input: Tensor, *, dtype: DTypeLike | None = None, layout: object = None,
              device: DeviceLike | None = None, pin_memory: bool = False, requires_grad: bool = False,
              memory_format: object = None) -> Tensor:
    return _finish(np.ones(input.shape, _like(input, dtype)), requires_grad, device, "ones_like", layout,
                   pin_memory, memory_format)


def empty_like(input: Tensor, *, dtype: DTypeLike | None = None, layout: object = None,
               device: DeviceLike | None = None, pin_memory: bool = False, requires_grad: bool = False,
               memory_format: object = None) -> Tensor:
    return _finish(np.zeros(input.shape, _like(input, dtype)), requires_grad, device, "empty_like", layout, pin_memory,
                   memory_format)


def full_like(input: Tensor, fill_value: Number, *, dtype: DTypeLike | None = None, layout: object = None,
              device: DeviceLike | None = None, pin_memory: bool = False, requires_grad: bool = False,
              memory_format: object = None) -> Tensor:
    dtype = _like(input, dtype)
    filled = np.full(input.shape, _fill(fill_value, dtype, "full_like"), dtype)
    return _finish(filled, requires_grad, device, "full_like", layout, pin_memory, memory_format)


def arange(start: Number, end: Number | None = None, step: Number = 1, *, dtype: DTypeLike | None = None,
           layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
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
    return _finish(np.arange(start, end, step).astype(dtype), requires_grad, device, "arange", layout, pin_memory)


def linspace(start: float, end: float, steps: int, *, dtype: DTypeLike | None = None, layout: object = None,
             device: DeviceLike | None = None,
             pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
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
    return _finish(_linspace_values(start, end, steps, dtype), requires_grad, device, "linspace", layout, pin_memory)


def _linspace_values(start, end, steps, dtype):
    """PyTorch's CPU values to the last bit (tutorials build data from linspace, and a sum that cancels
    to 0 there should cancel here): the step in the dtype itself (in double for integers), the first half
    of the values `start + step * i`, the second half `end - step * (steps - 1 - i)`, so the range is
    symmetric, each computed as one fused multiply-add rounded once (as PyTorch's compiled kernel does).
    numpy's linspace (`start + i * step` throughout, in double) differs in the last bit on about a third
    of the values. In float16 and bfloat16 every step is rounded to the dtype, as PyTorch's half types do."""
    kind = _dtype.kind(dtype)
    if steps < 2 or kind not in "fiu":
        return np.linspace(float(start), float(end), steps).astype(dtype)
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    i = np.arange(steps, dtype=np.float64)
    half = i < steps // 2
    from_end = np.where(half, i, steps - 1 - i)  # how many steps from its end of the range a value is
    with np.errstate(invalid="ignore", over="ignore"):
        if kind == "f" and dtype.itemsize < 4:  # PyTorch's half types round every step to the dtype
            first, last = (np.asarray(v).astype(dtype) for v in (start, end))
            step = ((last - first) / np.asarray(steps - 1).astype(dtype)).astype(dtype)
            offset = (step * from_end.astype(dtype)).astype(dtype)
            return np.where(half, first + offset, last - offset).astype(dtype)
        wide = np.float32 if dtype == np.float32 else np.float64
        first, last = (np.asarray(v).astype(dtype).astype(wide) for v in (start, end))  # (the ends in the dtype)
        step = wide((last - first) / wide(steps - 1))
        if dtype == np.float32:  # a float32 times an int below 2**29 is exact in float64: so, rounded once
            values = np.where(half, np.float64(first), np.float64(last)) + (
                np.where(half, 1.0, -1.0) * np.float64(step) * from_end)
        else:
            values = _fused_multiply_add(np.where(half, step, -step), from_end, np.where(half, first, last))
        return values.astype(dtype)


def _fused_multiply_add(a, b, c):
    """a * b + c rounded once, in float64 (numpy has no fma): the product split exactly into p + p_err
    (Dekker's TwoProduct), then p + c with its rounding error (TwoSum), the errors added last."""
    def split(x):  # x = hi + lo, each half of the bits (Veltkamp)
        big = 134217729.0 * x  # 2**27 + 1
        hi = big - (big - x)
        return hi, x - hi

    with np.errstate(invalid="ignore", over="ignore"):
        p = a * b
        (ah, al), (bh, bl) = split(a), split(b)
        p_err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        t = p + c
        bv = t - p
        t_err = (p - (t - bv)) + (c - bv)
        out = t + (t_err + p_err)
    return np.where(np.isfinite(out), out, p + c)  # (inf or nan on the way: the plain result)


def eye(n: int, m: int | None = None, *, dtype: DTypeLike | None = None, layout: object = None,
        device: DeviceLike | None = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    for name, k in (("n", n), ("m", m)):
        if k is not None and k < 0:
            raise RuntimeError(f"eye: {name} must be greater or equal to 0, got {k}")
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype)), requires_grad, device, "eye", layout, pin_memory)


def rand(*sizes: SizeArg, size: Sequence[int] | None = None, generator: Generator | None = None,
         dtype: DTypeLike | None = None, layout: object = None, device: DeviceLike | None = None,
         pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Uniform on [0, 1), from the global generator (seeded by manual_seed)."""
    shape = _shape(_sizes(sizes, size, "rand"), "rand")
    return _finish(_gen(generator).random(shape).astype(_drawn_dtype(dtype, "rand")), requires_grad, device, "rand",
                   layout, pin_memory)


def randn(*sizes: SizeArg, size: Sequence[int] | None = None, generator: Generator | None = None,
          dtype: DTypeLike | None = None, layout: object = None, device: DeviceLike | None = None,
          pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Standard normal, from the global generator (seeded by manual_seed)."""
    shape = _shape(_sizes(sizes, size, "randn"), "randn")
    return _finish(_gen(generator).standard_normal(shape).astype(_drawn_dtype(dtype, "randn")), requires_grad, device,
                   "randn", layout, pin_memory)


def randint(low: int = 0, high: int | Sequence[int] | None = None, size: SizeArg | None = None, *,
            generator: Generator | None = None, dtype: DTypeLike | None = None, layout: object = None,
            device: DeviceLike | None = None,
            pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high): randint(high, size) or randint(low, high, size)."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:  # randint(high, size=size)
        low, high = 0, low
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
    return _finish(arr.astype(dtype), requires_grad, device, "randint", layout, pin_memory)


def randperm(n: int, *, generator: Generator | None = None, dtype: DTypeLike | None = None, layout: object = None,
             device: DeviceLike | None = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    dtype = _dtype.as_dtype(dtype) or _dtype.int64
    if n < 0:
        raise RuntimeError(f"randperm: trying to create a tensor with negative dimension {n}: [{n}]")
    if dtype == _dtype.bool_:
        raise RuntimeError("randperm: not implemented for dtype bool")
    if dtype.kind in "iu" and n - 1 > np.iinfo(dtype).max:
        raise RuntimeError(f"randperm: n={n} values can't be held in {dtype} without overflow")
    g = _gen(generator)
    return _finish(g.permutation(n).astype(dtype), requires_grad, device, "randperm", layout, pin_memory)


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: DTypeLike | None = None,
              layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
              requires_grad: bool = False, memory_format: object = None) -> Tensor:
    return _finish(_gen(generator).random(input.shape).astype(_drawn_dtype(_like(input, dtype), "rand_like")),
                   requires_grad, device, "rand_like", layout, pin_memory, memory_format)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: DTypeLike | None = None,
               layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
               requires_grad: bool = False, memory_format: object = None) -> Tensor:
    return _finish(_gen(generator).standard_normal(input.shape).astype(_drawn_dtype(_like(input, dtype), "randn_like")),
                   requires_grad, device, "randn_like", layout, pin_memory, memory_format)


def normal(mean: float | Tensor, std: float | Tensor = 1.0, size: Sequence[int] | None = None, *,
           generator: Generator | None = None, dtype: DTypeLike | None = None, layout: object = None,
           device: DeviceLike | None = None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """Draws from N(mean, std^2): one per element of a tensor `mean` and/or `std` (of its dtype), or
    `size` of them for a number mean and std (of `dtype`, else the default float dtype)."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if tensors:
        if size is not None:
            raise TypeError("normal: size is taken only with a number mean and std, not with tensors")
        for t in tensors:
            if _dtype.kind(t.dtype) != "f":
                raise NotImplementedError(f"normal: not implemented for dtype {t.dtype}; mean and std must be float "
                                          "tensors")
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
        return _finish(np.asarray(mu + sd * draws).astype(dtype), requires_grad, device, "normal", layout, pin_memory)


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability p (each element of `input`, or the number `p`), else 0, in input's dtype."""
    if p is None and _dtype.kind(input.dtype) != "f":
        raise NotImplementedError(f"bernoulli: not implemented for dtype {input.dtype}; the probabilities must "
                                  "be floats")
    probs = input._array if p is None else np.asarray(p)
    if not ((probs >= 0) & (probs <= 1)).all():  # (NaN too)
        raise RuntimeError("bernoulli: expects probabilities in [0, 1], got "
                           f"{probs[~((probs >= 0) & (probs <= 1))].flat[0]}")
    g = _gen(generator)
    return Tensor._make((g.random(input.shape) < probs).astype(input.dtype))


class _LowNotGiven(int):
    """randint_like's default `low`, a 0 that knows it wasn't given: `randint_like(x)` then has no high."""


_LOW_NOT_GIVEN = _LowNotGiven(0)


def randint_like(input: Tensor, low: int = _LOW_NOT_GIVEN, high: int | None = None, *,
                 generator: Generator | None = None, dtype: DTypeLike | None = None, layout: object = None,
                 device: DeviceLike | None = None, pin_memory: bool = False, requires_grad: bool = False,
                 memory_format: object = None) -> Tensor:
    """Integers uniform on [low, high) in input's shape and dtype: randint_like(x, high), randint_like(x, low, high)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"randint_like(): argument 'input' must be Tensor, not {type(input).__name__}")
    check_memory("randint_like", layout, pin_memory, memory_format)
    if high is None and low is _LOW_NOT_GIVEN:
        raise TypeError("randint_like(): missing the bound: randint_like(input, high) or "
                        "randint_like(input, low, high)")
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=_like(input, dtype), device=device,
                   requires_grad=requires_grad, generator=generator)


def scalar_tensor(s: Number, *, dtype: DTypeLike | None = None, layout: object = None,
                  device: DeviceLike | None = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number `s`, of the default float dtype unless `dtype` says otherwise
    (PyTorch's: `scalar_tensor(3)` is `tensor(3.)`, unlike `tensor(3)`)."""
    check_memory("scalar_tensor", layout, pin_memory)
    return tensor(s, dtype=_float_dtype(dtype), device=device, requires_grad=requires_grad)


def asarray(obj: ArrayLike, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
            copy: bool | None = None, requires_grad: bool | None = None) -> Tensor:
    """A tensor of `obj` that shares its memory when it can (a tensor, or a numpy array of a dtype
    kept), copying when it must or when `copy=True`; `copy=False` refuses a needed copy."""
    if isinstance(obj, Tensor):
        same = dtype is None or obj.dtype == _dtype.as_dtype(dtype)
        if copy is False and not same:
            raise ValueError("asarray: copy=False, but changing the dtype needs a copy")
        t = obj if same and not copy else tensor(obj.detach(), dtype=dtype)
        if requires_grad and not t.requires_grad:
            t = t.detach().requires_grad_(True) if t is obj else t.requires_grad_(True)
        return _finish_device(t, device, "asarray")
    if isinstance(obj, np.ndarray) and copy is False and dtype is not None and obj.dtype != _dtype.as_dtype(dtype):
        raise ValueError("asarray: copy=False, but changing the dtype needs a copy")
    if isinstance(obj, np.ndarray) and not copy:
        t = as_tensor(obj, dtype=dtype)
    elif copy is False:
        raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} has to be copied into a tensor")
    else:
        t = tensor(obj, dtype=dtype)
    if requires_grad:
        t.requires_grad_(True)
    return _finish_device(t, device, "asarray")


def _finish_device(t: Tensor, device: DeviceLike | None, where: str) -> Tensor:
    check_device(device, where)
    return t


def frombuffer(buffer: object, *, dtype: DTypeLike, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-d tensor sharing the memory of a Python buffer (bytes, bytearray, array.array ...): `count`
    items of `dtype` from byte `offset` (-1: all that follow)."""
    d = _dtype.as_dtype(dtype, "frombuffer")
    size = memoryview(buffer).nbytes  # type: ignore[arg-type]
    if offset < 0 or offset > size or (count < 0 and (size - offset) % d.itemsize) or count == 0:
        raise ValueError(f"frombuffer: a buffer of {size} bytes holds no whole number of {d} items from byte "
                         f"{offset} (count={count})")
    if count > 0 and offset + count * d.itemsize > size:
        raise ValueError(f"frombuffer: {count} items of {d} from byte {offset} overrun the buffer of {size} bytes")
    return _finish(np.frombuffer(buffer, dtype=d, count=count, offset=offset), requires_grad,  # type: ignore[call-overload]
                   None, "frombuffer")


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: DTypeLike | None = None,
                  layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
                  requires_grad: bool = False) -> Tensor:
    """An (here zero-filled) tensor of `size`; the strides are checked but not kept: numpy owns the
    layout and a tensor's strides are not part of minitensor's API."""
    shape = _shape((size,), "empty_strided")
    if len(tuple(stride)) != len(shape):
        raise RuntimeError(f"empty_strided: mismatch in length of strides ({len(tuple(stride))}) and shape "
                           f"({len(shape)})")
    return _finish(np.zeros(shape, _float_dtype(dtype)), requires_grad, device, "empty_strided", layout, pin_memory)


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: DTypeLike | None = None,
             layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    """`steps` values base ** linspace(start, end, steps), both ends included."""
    exponents = linspace(start, end, steps, dtype=_dtype.float64)._array
    with np.errstate(over="ignore"):
        values = np.power(float(base), exponents)
    d = _float_dtype(dtype)
    if d.kind in "iu":
        values = np.round(values)  # (PyTorch computes in double, then casts: 10 ** 2 is 100, not 99)
    return _finish(values.astype(d), requires_grad, device, "logspace", layout, pin_memory)


# (torch.range: this module calls no builtin range below)
def range(start: Number = 0, end: Number | None = None, step: Number = 1, *, dtype: DTypeLike | None = None,  # noqa: A001
          device: DeviceLike | None = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Deprecated in PyTorch (with a warning, given here too): [start, end] in steps, the end included,
    of the default float dtype whatever the arguments. Prefer `arange`, which leaves the end out."""
    import warnings

    warnings.warn("minitensor.range is deprecated, as torch.range is: its end is included, unlike Python's range; "
                  "use minitensor.arange, which produces values in [start, end)", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"range: upper bound and lower bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    n = int(math.floor((end - start) / step)) + 1
    values = start + step * np.arange(n, dtype=np.float64)
    return _finish(values.astype(_float_dtype(dtype)), requires_grad, device, "range", None, pin_memory)


# ---- window functions (signal processing): values in float64, then the dtype asked for -----------------

def _window(name: str, window_length: int, periodic: bool, dtype: DTypeLike | None, device: DeviceLike | None,
            requires_grad: bool, values: Callable[[np.ndarray, int], np.ndarray], layout: object = None,
            pin_memory: bool = False) -> Tensor:
    """A window of `window_length` points: `values(n, N)` at n = 0..N-1 for the symmetric window of N
    points; a periodic window is the symmetric one of length + 1 without its last point."""
    check_memory(name, layout, pin_memory)
    if window_length < 0:
        raise RuntimeError(f"{name}: requires non-negative window_length, got window_length={window_length}")
    d = _float_dtype(dtype)
    if _dtype.kind(d) != "f":
        raise RuntimeError(f"{name}: expects a floating point dtype, got {d}")
    if window_length <= 1:
        return _finish(np.ones(window_length, d), requires_grad, device, name)
    n_points = window_length + 1 if periodic else window_length
    w = values(np.arange(n_points, dtype=np.float64), n_points)[:window_length]
    return _finish(w.astype(d), requires_grad, device, name)


def hann_window(window_length: int, periodic: bool = True, *, dtype: DTypeLike | None = None,
                layout: object = None, device: DeviceLike | None = None,
                pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """0.5 - 0.5 cos(2 pi n / (N - 1))."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * np.pi * n / (N - 1)), layout, pin_memory)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: DTypeLike | None = None, layout: object = None, device: DeviceLike | None = None,
                   pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: alpha - beta * np.cos(2 * np.pi * n / (N - 1)), layout, pin_memory)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: DTypeLike | None = None,
                    layout: object = None, device: DeviceLike | None = None,
                    pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.42 - 0.5 * np.cos(2 * np.pi * n / (N - 1)) + 0.08 * np.cos(4 * np.pi * n / (N - 1)),
                   layout, pin_memory)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: DTypeLike | None = None,
                    layout: object = None, device: DeviceLike | None = None,
                    pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """1 - |2n / (N - 1) - 1| (a triangle)."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1), layout, pin_memory)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: DTypeLike | None = None,
                  layout: object = None, device: DeviceLike | None = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta), I0 the modified Bessel function of order 0."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / (N - 1) - 1) ** 2, 0, None))) / np.i0(beta),
                   layout, pin_memory)


# ---- `x.new_zeros(...)` & co: new tensors with x's dtype (unless `dtype=` says otherwise) -------------

def new_tensor(self: Tensor, data: ArrayLike, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
               requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (cut from any graph), of self's dtype unless `dtype` is given."""
    return tensor(data.detach() if isinstance(data, Tensor) else data, dtype=dtype or self.dtype, device=device,
                  requires_grad=requires_grad, pin_memory=pin_memory)


def new_zeros(self: Tensor, *sizes: SizeArg, size: Sequence[int] | None = None, dtype: DTypeLike | None = None,
              layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
              requires_grad: bool = False) -> Tensor:
    return zeros(_shape(_sizes(sizes, size, "new_zeros"), "new_zeros"), dtype=dtype or self.dtype, layout=layout,
                 device=device, pin_memory=pin_memory, requires_grad=requires_grad)


def new_ones(self: Tensor, *sizes: SizeArg, size: Sequence[int] | None = None, dtype: DTypeLike | None = None,
             layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    return ones(_shape(_sizes(sizes, size, "new_ones"), "new_ones"), dtype=dtype or self.dtype, layout=layout,
                device=device, pin_memory=pin_memory, requires_grad=requires_grad)


def new_empty(self: Tensor, *sizes: SizeArg, size: Sequence[int] | None = None, dtype: DTypeLike | None = None,
              layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
              requires_grad: bool = False) -> Tensor:
    return empty(_shape(_sizes(sizes, size, "new_empty"), "new_empty"), dtype=dtype or self.dtype, layout=layout,
                 device=device, pin_memory=pin_memory, requires_grad=requires_grad)


def new_full(self: Tensor, size: Sequence[int], fill_value: Number, *, dtype: DTypeLike | None = None,
             layout: object = None, device: DeviceLike | None = None, pin_memory: bool = False,
             requires_grad: bool = False) -> Tensor:
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full: size must be a tuple of ints, got {type(size).__name__}")
    return full(size, fill_value, dtype=dtype or self.dtype, layout=layout, device=device, pin_memory=pin_memory,
                requires_grad=requires_grad)
