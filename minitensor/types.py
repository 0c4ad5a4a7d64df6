"""The names minitensor's annotations use for what a function accepts (as `torch.types` does).

They are for type checkers and editors (`Tensor.sum(dim: Dims | None = None, ...)` reads as "an
int or a sequence of ints"); nothing at runtime checks against them. A Python `int` and `bool`
count as a `float` to a type checker, so `Number` is spelled out only for the reader.

The methods of `Tensor` are declared for checkers in `tensor.pyi` beside `tensor.py` (the ops
attach most of them to the class at import time, which a checker cannot see).
"""
import os
from types import EllipsisType
from typing import IO, Any, Sequence, Union

import numpy as np
from numpy.typing import NDArray

from . import _dtype
from .tensor import Tensor, device

Number = Union[int, float, bool]
"""A Python number."""

TensorOrNumber = Union[Tensor, Number]
"""An operand of arithmetic and comparison: a tensor, or a number broadcast against the other operand."""

DType = np.dtype[Any]
"""numpy's dtype, which minitensor's own code passes around (`x._array.dtype`)."""

PublicDType = _dtype.PublicDType
"""A tensor's dtype as users see it (`x.dtype`, `minitensor.float32`; at runtime the class `minitensor.dtype`):
numpy's dtype that prints as PyTorch's (h-dtype29)."""

DTypeLike = Union[PublicDType, np.dtype[Any], str, type]
"""Anything that names a dtype: `minitensor.float64`, `"float64"`, Python's `float`/`int`/`bool`,
a numpy scalar type, or a legacy class such as `minitensor.LongTensor`."""

DeviceLike = Union[device, str]
"""A device: `minitensor.device("cpu")` or `"cpu"` (another device is refused at runtime)."""

Dims = Union[int, Sequence[int]]
"""The dims to reduce over: one dim, or several."""

SizeArg = Union[int, Sequence[int]]
"""One item of a shape given as `*size`: ints (`zeros(2, 3)`) or one sequence of ints (`zeros((2, 3))`)."""

Index = Union[None, int, slice, EllipsisType, Tensor, Sequence[Any], NDArray[Any]]
"""What `x[index]` takes: ints, slices, None, `...`, integer or bool tensors, lists, arrays, and tuples of them."""

ArrayLike = Any
"""Data a tensor can be built from: nested lists or tuples of numbers, a number, a numpy array, a tensor."""

# ---- h-mods: the rest of `torch.types`' public aliases (its `Storage` class has no minitensor counterpart)
Device = Union[device, str, int, None]
"""What a `device=` argument takes in PyTorch's annotations: a device, its name, a GPU index, or None."""

FileLike = Union[str, os.PathLike[str], IO[bytes]]
"""Where `save`/`load` read and write: a path, or a binary file object."""

__all__ = ["Number", "TensorOrNumber", "DType", "PublicDType", "DTypeLike", "DeviceLike", "Dims", "SizeArg", "Index",
           "ArrayLike", "Device", "FileLike"]
