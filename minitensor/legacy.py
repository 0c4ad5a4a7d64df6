"""PyTorch's typed tensor classes: `LongTensor`, `FloatTensor`, ... (its legacy constructors).

Older tutorials build tensors and test their type with them:

    ids = minitensor.LongTensor([3, 1, 4])        # int64 data
    buf = minitensor.FloatTensor(2, 3)            # a float32 tensor of shape (2, 3)
    isinstance(ids, minitensor.LongTensor)        # True: ids is an int64 tensor

As in PyTorch they are not subclasses of `Tensor`: every tensor is a `Tensor`, and "is a
LongTensor" means "is a Tensor whose dtype is int64". Calling one returns a plain `Tensor`.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from . import _dtype
from .tensor import Size, Tensor, _to_array, check_device


class _TypedTensorType(type):
    """The class of `LongTensor` & co: `isinstance` checks the dtype, calling builds a tensor."""

    dtype: np.dtype[Any]

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args: Any, device: str | None = None) -> Tensor:
        where = cls.__name__
        check_device(device, where)
        if not args:
            return Tensor._make(np.zeros((0,), cls.dtype))
        if len(args) == 1 and isinstance(args[0], Size):
            args = tuple(args[0])
        if all(isinstance(a, numbers.Integral) and not isinstance(a, (bool, np.bool_)) for a in args):
            if any(a < 0 for a in args):
                raise RuntimeError(f"{where}: trying to create a tensor with a negative dimension: {list(args)}")
            return Tensor._make(np.zeros(tuple(int(a) for a in args), cls.dtype))  # 'uninitialised': zeros here
        if len(args) > 1:
            raise TypeError(f"{where}: expected data or a size of ints, got {args!r}")
        data = args[0]
        if isinstance(data, Tensor):
            if data.dtype != cls.dtype:
                raise TypeError(f"{where}: expected a tensor of dtype {cls.dtype}, got one of dtype {data.dtype} "
                                f"(convert it with .to(minitensor.{cls.dtype}))")
            return data  # the same values, memory and graph (PyTorch returns an alias)
        if not isinstance(data, (list, tuple, np.ndarray)):
            raise TypeError(f"{where}: data must be a sequence (got {type(data).__name__})")
        return Tensor._make(np.array(_to_array(data, cls.dtype, where), copy=True))

    def __repr__(cls) -> str:
        return f"<class 'minitensor.{cls.__name__}'>"


def _typed(name: str, dtype: np.dtype[Any]) -> _TypedTensorType:
    return _TypedTensorType(name, (), {"dtype": dtype, "__doc__": f"A Tensor of dtype {dtype}: "
                                       f"`{name}(data)`, `{name}(*size)`, `isinstance(t, {name})`."})


FloatTensor = _typed("FloatTensor", _dtype.float32)
DoubleTensor = _typed("DoubleTensor", _dtype.float64)
HalfTensor = _typed("HalfTensor", _dtype.float16)
LongTensor = _typed("LongTensor", _dtype.int64)
IntTensor = _typed("IntTensor", _dtype.int32)
ShortTensor = _typed("ShortTensor", _dtype.int16)
CharTensor = _typed("CharTensor", _dtype.int8)
ByteTensor = _typed("ByteTensor", _dtype.uint8)
BoolTensor = _typed("BoolTensor", _dtype.bool_)
