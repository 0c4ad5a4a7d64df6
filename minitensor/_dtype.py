"""dtypes under PyTorch's names, the default dtype, and PyTorch's type-promotion rules.

numpy does the arithmetic, but two of its rules differ from PyTorch's and learners notice both:
an integer tensor times a Python float is float64 in numpy and the *default* dtype in PyTorch,
and an int64 tensor plus a float32 tensor is float64 in numpy and float32 in PyTorch.
`result_dtype` applies PyTorch's rules so the result of every op matches what a tutorial prints.
"""
from __future__ import annotations

from typing import Any

import numpy as np

DType = np.dtype[Any]
float32: DType = np.dtype("float32")
float64: DType = np.dtype("float64")
float16: DType = np.dtype("float16")
int64: DType = np.dtype("int64")
int32: DType = np.dtype("int32")
int16: DType = np.dtype("int16")
int8: DType = np.dtype("int8")
uint8: DType = np.dtype("uint8")
bool_: DType = np.dtype("bool")

float = float32  # torch.float is float32
double = float64
long = int64
int = int32  # noqa: A001 - torch.int is int32
half = float16

_default = float32

_ALIASES = {
    "float32": float32, "float": float32, "float64": float64, "double": float64,
    "float16": float16, "half": float16, "int64": int64, "long": int64, "int32": int32,
    "int": int32, "int16": int16, "int8": int8, "uint8": uint8, "bool": bool_,
    # the legacy typed tensor names, as `x.type('torch.LongTensor')` takes them
    "FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16, "LongTensor": int64,
    "IntTensor": int32, "ShortTensor": int16, "CharTensor": int8, "ByteTensor": uint8, "BoolTensor": bool_,
}


def as_dtype(dtype, op=None):
    """Turn anything naming a dtype (np.dtype, numpy type, 'float32', Python float/int/bool) into an np.dtype
    (errors name `op` when given)."""
    if dtype is None:
        return None
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, str):
        try:
            return _ALIASES[dtype.replace("torch.", "").replace("minitensor.", "")]
        except KeyError:
            raise TypeError(f"unknown dtype {dtype!r}; expected one of {sorted(_ALIASES)}") from None
    if dtype is builtins_float:
        return _default
    if dtype is builtins_int:
        return int64
    if dtype is builtins_bool:
        return bool_
    if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), np.dtype):
        return dtype.dtype  # LongTensor & co (minitensor.legacy) stand for their dtype
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"unknown dtype {dtype!r}") from None
    if d.kind not in "biuf":  # np.dtype(object), np.dtype(str) ... hold no numbers autograd can use
        raise TypeError(f"{op + ': ' if op else ''}unsupported dtype {dtype!r}; expected one of {sorted(_ALIASES)}")
    return d


import builtins as _b  # noqa: E402 - the names float/int above shadow the builtins on purpose

builtins_float, builtins_int, builtins_bool = _b.float, _b.int, _b.bool


def set_default_dtype(dtype: np.dtype[Any] | str | type) -> None:
    """Set the dtype that Python floats and float factories produce (float32 or float64)."""
    global _default
    d = as_dtype(dtype)
    if d not in (float32, float64, float16):
        raise TypeError(f"set_default_dtype: only floating dtypes are allowed, got {d}")
    _default = d


def get_default_dtype() -> DType:
    return _default


def is_floating(dtype):
    return dtype.kind == "f"


def _category(dtype):
    return {"b": 0, "u": 1, "i": 1, "f": 2}.get(dtype.kind, 3)


def _scalar_category(x):
    if isinstance(x, (bool, np.bool_)):
        return 0
    if isinstance(x, (_b.int, np.integer)):
        return 1
    return 2


def promote_types(a, b):
    """PyTorch's promotion of the dtypes of two dimensioned tensors: the higher category wins
    (bool < integer < float), and within a category numpy's rule (int32 + int64 is int64)."""
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    return np.promote_types(a, b)


def result_dtype(a, b):
    """PyTorch's promotion of two operands, each an np.ndarray (a tensor's data) or a Python scalar.

    Higher category wins (bool < integer < float). Within a category a dimensioned tensor beats a
    0-d tensor, which beats a Python scalar; two dimensioned tensors promote as numpy does. Two
    Python scalars give bool, int64 or the default float dtype (numpy would say float64).
    """
    a_arr, b_arr = isinstance(a, np.ndarray), isinstance(b, np.ndarray)
    if a_arr and b_arr:
        if (a.ndim == 0) != (b.ndim == 0) and _category(a.dtype) == _category(b.dtype):
            return b.dtype if a.ndim == 0 else a.dtype
        return promote_types(a.dtype, b.dtype)
    if not a_arr and not b_arr:
        return (bool_, int64, _default)[max(_scalar_category(a), _scalar_category(b))]
    arr, scalar = (a, b) if a_arr else (b, a)
    cs, ct = _scalar_category(scalar), _category(arr.dtype)
    if cs <= ct:
        return arr.dtype
    return _default if cs == 2 else int64
