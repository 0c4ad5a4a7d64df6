"""dtypes under PyTorch's names, the default dtype, and PyTorch's type-promotion rules.

numpy does the arithmetic, but two of its rules differ from PyTorch's and learners notice both:
an integer tensor times a Python float is float64 in numpy and the *default* dtype in PyTorch,
and an int64 tensor plus a float32 tensor is float64 in numpy and float32 in PyTorch.
`result_dtype` applies PyTorch's rules so the result of every op matches what a tutorial prints.
"""
from __future__ import annotations

import functools
import math
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
uint16: DType = np.dtype("uint16")
uint32: DType = np.dtype("uint32")
uint64: DType = np.dtype("uint64")
bool_: DType = np.dtype("bool")

float = float32  # torch.float is float32
double = float64
long = int64
int = int32  # noqa: A001 - torch.int is int32
half = float16
short = int16

_default = float32

_ALIASES = {
    "float32": float32, "float": float32, "float64": float64, "double": float64,
    "float16": float16, "half": float16, "int64": int64, "long": int64, "int32": int32,
    "int": int32, "int16": int16, "short": int16, "int8": int8, "uint8": uint8, "bool": bool_,
    "uint16": uint16, "uint32": uint32, "uint64": uint64,
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
    if isinstance(dtype, StoragelessDType):
        raise TypeError(f"{op + ': ' if op else ''}{dtype.refusal()}")
    if isinstance(dtype, PublicDType):
        return dtype.dtype
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
    if kind(d) not in "biuf":  # np.dtype(object), np.dtype(str) ... hold no numbers autograd can use
        raise TypeError(f"{op + ': ' if op else ''}unsupported dtype {dtype!r}; expected one of {sorted(_ALIASES)}")
    return d


import builtins as _b  # noqa: E402 - the names float/int above shadow the builtins on purpose

builtins_float, builtins_int, builtins_bool = _b.float, _b.int, _b.bool


def set_default_dtype(d: np.dtype[Any] | str | type) -> None:
    """Set the dtype `d` that Python floats and float factories produce (float32 or float64)."""
    global _default
    dtype = as_dtype(d)
    if dtype not in (float32, float64, float16):
        raise TypeError(f"set_default_dtype: only floating dtypes are allowed, got {dtype}")
    _default = dtype


def get_default_dtype() -> DType:
    return _default


def is_floating(dtype):
    return kind(dtype) == "f"


def _category(dtype):
    return {"b": 0, "u": 1, "i": 1, "f": 2}.get(kind(dtype), 3)


def _scalar_category(x):
    if isinstance(x, (bool, np.bool_)):
        return 0
    if isinstance(x, (_b.int, np.integer)):
        return 1
    return 2


@functools.lru_cache(maxsize=None)  # a table, filled as pairs of dtypes are met (there are few)
def promote_types(a, b):
    """PyTorch's promotion of the dtypes of two dimensioned tensors: the higher category wins
    (bool < integer < float), and within a category numpy's rule (int32 + int64 is int64)."""
    # (run on a cache miss only: a minitensor dtype passed in is cached as numpy's, which every caller gets back)
    a, b = getattr(a, "dtype", a), getattr(b, "dtype", b)
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if has_bfloat16 and bfloat16 in (a, b) and a != b:  # numpy has no rule for it: PyTorch's is the
        return float32 if float16 in (a, b) else np.promote_types(float32, a if b == bfloat16 else b)  # wider
    return np.promote_types(a, b)


def result_dtype(*operands):
    """PyTorch's promoted dtype of operands, each an np.ndarray (a tensor's data) or a Python scalar.

    The operands form three tiers: dimensioned tensors, 0-d tensors, Python scalars (a Python
    float counts as the default float dtype, an int as int64). Each tier promotes within itself as
    numpy does (int32 and int64 give int64), then a lower tier changes the result only when its
    category is higher (bool < integer < float): float32 * a 0-d float64 is float32, an int8
    tensor + 1000 stays int8, an int8 tensor * 2.5 is the default float dtype.
    """
    tiers = [None, None, None]
    for x in operands:
        if isinstance(x, np.ndarray):
            tier, d = (0 if x.ndim else 1), x.dtype
        else:
            tier, d = 2, (bool_, int64, _default)[_scalar_category(x)]
        tiers[tier] = d if tiers[tier] is None else promote_types(tiers[tier], d)
    dims, zero_d, scalars = tiers
    return _combine(dims, _combine(zero_d, scalars))


@functools.lru_cache(maxsize=None)
def _combine(higher, lower):
    """A tier's dtype `higher` updated by the lower tiers' `lower`: only a higher category counts."""
    higher, lower = getattr(higher, "dtype", higher), getattr(lower, "dtype", lower)  # (as promote_types)
    if higher is None:
        return lower
    if lower is None or _category(lower) <= _category(higher):
        return higher
    return promote_types(higher, lower)


def wrapped_int(n, dtype):
    """Python int `n` as PyTorch reads it next to a tensor of `dtype`: a 64-bit int (int64, or
    uint64 up to 2^64 - 1; beyond is an OverflowError, as in PyTorch), wrapped into an integer
    dtype, so -1 is 255 for uint8 and 1000 is -24 for int8 (arithmetic and comparisons wrap;
    `fill_` & co check instead, see `scalar_to`)."""
    if not -2 ** 63 <= n < 2 ** 64:
        raise OverflowError(f"int too big to convert: {n} does not fit in 64 bits")
    if dtype.kind not in "iu":
        return n
    low, high = _int_range(dtype)
    if low <= n <= high:
        return n
    return np.array(n % 2 ** 64, dtype=np.uint64).astype(dtype)  # the low bits, as a C cast keeps them


@functools.lru_cache(maxsize=None)
def _int_range(dtype):
    info = np.iinfo(dtype)
    return builtins_int(info.min), builtins_int(info.max)


def values_fit(arr, dtype):
    """Whether the numbers in `arr` fit an integer `dtype` by `scalar_to`'s rule (1.7 truncates, 300
    is no int8, a negative int wraps into uint8 down to -255; NaN and inf fit no integer), all at once."""
    if dtype.kind not in "iu" or kind(arr.dtype) not in "iuf" or not arr.size:
        return True
    info = np.iinfo(dtype)
    low = -info.max if info.min == 0 and arr.dtype.kind in "iu" else info.min
    with np.errstate(invalid="ignore"):
        return bool(((arr >= low) & (arr <= info.max)).all())


def for_draws(dtype, op):
    """`dtype`, if a draw from a continuous distribution (rand, randn, normal_, uniform_ ...) can be
    of it: a float dtype. PyTorch has no integer kernel for those and raises NotImplementedError."""
    if kind(dtype) != "f":
        raise NotImplementedError(f"{op}: not implemented for dtype {dtype}; its draws are floating point")
    return dtype


def scalar_to(value, dtype, op):
    """Python number `value` converted to `dtype` with PyTorch's overflow check, for ops that put a
    number into a tensor (fill_, masked_fill, full, where, clamp's bounds, x[i] = v ...): an int8
    tensor can't hold 1000, nor can float32 hold 1e300 (inf and NaN can be floats; for integers
    they are overflows too). A negative int may wrap into an unsigned dtype (-1 is 255 in uint8,
    down to -255), as PyTorch allows. Returns a 0-d array of `dtype`."""
    if isinstance(value, builtins_int) and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError(f"{op}: int too big to convert: {value} does not fit in 64 bits")
    if isinstance(value, builtins_bool) or dtype == bool_:
        return np.asarray(value).astype(dtype)
    if kind(dtype) == "f":
        big = finfo(dtype).max
        overflows = math.isfinite(value) and abs(value) > big
    else:
        info = np.iinfo(dtype)
        if isinstance(value, builtins_int):
            low = -info.max if info.min == 0 else info.min  # a negative int wraps into an unsigned dtype
            overflows = not low <= value <= info.max
        else:
            overflows = not info.min <= value <= info.max  # NaN compares False: an overflow too
    if overflows:
        raise RuntimeError(f"{op}: value {value!r} cannot be converted to type {dtype} without overflow")
    if isinstance(value, builtins_int) and value < 0 and dtype.kind == "u":
        return wrapped_int(value, dtype)
    return np.asarray(value, dtype=dtype)


# ---- the dtype objects users see: `minitensor.float32`, `Tensor.dtype` ----------------------------------

class PublicDType:
    """A dtype as a user meets it (`minitensor.float32`, `x.dtype`; the class is `minitensor.dtype`, as
    `torch.dtype`): numpy's dtype with PyTorch's printing and fields.

    Printing is why it exists: `print(x.dtype)` shows `torch.float32` under `python -m minitensor.run`
    (inside `torch_is_minitensor()`), as the tutorial's text does, and `minitensor.float32` otherwise,
    the name it is reached by (as `minitensor.Size([2, 3])`); a bare `float32`, numpy's print, would
    be neither. Everything else is numpy's dtype, held in `.dtype`: numpy reads an object's `.dtype`
    wherever it takes a dtype (`np.zeros(3, dtype=mt.float32)`, `arr.astype(mt.float64)`), it compares
    equal to numpy's dtype, type and name (`x.dtype == np.float32`) with numpy's hash (dict keys mix),
    and numpy's other fields (`.kind`, `.char`, `.type` ...) are read through.

    Inside, minitensor works on numpy's dtypes (`x._array.dtype`, the module constants of `_dtype`):
    the promotion tables and the per-op paths never meet this class; it is made at the API's edges
    (`Tensor.dtype`, `minitensor.float32`, `get_default_dtype()`), one object per dtype."""

    __module__ = "minitensor"  # (its repr and pickles name it `minitensor.dtype`, where users reach it)
    __slots__ = ("dtype", "name", "itemsize", "kind", "is_floating_point", "is_complex", "is_signed", "_hash")
    dtype: DType  # numpy's dtype (numpy reads it from here when given this object as a dtype)
    name: str
    itemsize: _b.int
    kind: str
    is_floating_point: _b.bool
    is_complex: _b.bool
    is_signed: _b.bool
    _hash: _b.int

    def __init__(self) -> None:  # (as PyTorch's: the dtypes are the module's, `public` makes them)
        raise TypeError(f"cannot create '{shown_as()}.dtype' instances")

    @classmethod
    def _of(cls, np_dtype: DType) -> PublicDType:
        self = object.__new__(cls)
        self.dtype, self.name, self.itemsize, self._hash = np_dtype, np_dtype.name, np_dtype.itemsize, hash(np_dtype)
        self.kind = k = kind(np_dtype)
        self.is_floating_point, self.is_complex, self.is_signed = k == "f", k == "c", k in "ifc"
        return self

    def __eq__(self, other: object) -> _b.bool:  # numpy's rule: equal to its np.dtype, numpy type or name
        if other is self or other is self.dtype:  # (numpy's dtype objects of an array are its shared ones)
            return True
        if other.__class__ is PublicDType or other is None:  # (numpy reads None as float64; PyTorch does not)
            return False
        try:
            return _b.bool(self.dtype == other)
        except TypeError:
            return False

    def __ne__(self, other: object) -> _b.bool:  # (written out: `x.dtype != d` is in the backward pass's loop)
        if other is self or other is self.dtype:
            return False
        if other.__class__ is PublicDType or other is None:
            return True
        try:
            return _b.bool(self.dtype != other)
        except TypeError:
            return True

    def __hash__(self) -> _b.int:
        return self._hash

    def __repr__(self) -> str:
        return f"{shown_as()}.{self.name}"

    __str__ = __repr__

    def __getattr__(self, name: str) -> Any:  # numpy's fields (char, type, str, byteorder ...), read through
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dtype, name)

    def __reduce__(self) -> str:
        return self.name  # pickles as `minitensor.<name>`, which is this object

    @property
    def abbr(self) -> str:
        """PyTorch's short name: 'f32', 'i64', 'u8', 'b8' ..."""
        return ("b" if self.kind == "b" else "bf" if self.name == "bfloat16" else self.kind) + str(8 * self.itemsize)

    def to_real(self) -> PublicDType:
        """The real dtype of the same precision: itself, as minitensor has no complex dtypes."""
        return self


PublicDType.__name__ = PublicDType.__qualname__ = "dtype"  # `minitensor.dtype`, as `torch.dtype`


# ---- bfloat16: numpy's through the optional package ml_dtypes ---------------------------------------

class StoragelessDType(PublicDType):
    """A PyTorch dtype this installation has no storage for: bfloat16 without the optional package
    ml_dtypes (`pip install minitensor-attention[bfloat16]`), which gives numpy a bfloat16 dtype. It
    exists so code that names it, compares it or asks `finfo(bfloat16)` runs; a tensor of it is refused
    with a clear error rather than stored as float32 while printing bfloat16 (every op would then
    compute at float32's precision, which is not what a bfloat16 tutorial shows)."""

    def __init__(self, name: str, itemsize: _b.int) -> None:  # (no `.dtype`: numpy must not take it for one)
        self.name, self.itemsize, self.kind, self._hash = name, itemsize, "f", hash(name)
        self.is_floating_point, self.is_complex, self.is_signed = True, False, True

    def __eq__(self, other: object) -> _b.bool:
        return other is self

    def __ne__(self, other: object) -> _b.bool:
        return other is not self

    __hash__ = PublicDType.__hash__

    def refusal(self) -> str:
        return (f"minitensor has no {self.name} tensors here: numpy has no {self.name} storage of its own; install "
                f"the optional package that gives it one with `pip install ml_dtypes` (the extra "
                f"`minitensor-attention[bfloat16]`), or use float32 (or float16)")

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __reduce__(self) -> str:
        return self.name  # pickles as the module attribute (minitensor._dtype.bfloat16 is this object)


def _numpy_bfloat16() -> Any:
    """numpy's bfloat16 dtype from the optional package ml_dtypes; None without it (then bfloat16 is a
    name that refuses tensors)."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


bfloat16: Any = _numpy_bfloat16()
has_bfloat16 = bfloat16 is not None
if not has_bfloat16:
    bfloat16 = StoragelessDType("bfloat16", 2)
if has_bfloat16:
    _ALIASES.update(bfloat16=bfloat16, BFloat16Tensor=bfloat16)


public_of: dict[Any, PublicDType] = {}  # np.dtype -> its PublicDType (a plain dict: `Tensor.dtype` reads it first)


def public(np_dtype: DType) -> PublicDType:
    """The dtype users see for numpy's `np_dtype` (`Tensor.dtype`, `minitensor.get_default_dtype()`)."""
    try:
        return public_of[np_dtype]
    except KeyError:
        d = np.dtype(np_dtype)
        public_of[d] = made = PublicDType._of(d) if d.isnative else public(d.newbyteorder("="))
        return made


def kind(dtype: Any) -> str:
    """numpy's one-letter kind of `dtype` ('b', 'i', 'u', 'f'), with ml_dtypes' bfloat16 a float: numpy
    files a dtype from another package under 'V' (raw bytes), which no rule of PyTorch's means."""
    if dtype is bfloat16:
        return "f"
    k = dtype.kind
    return "f" if k == "V" and has_bfloat16 and dtype == bfloat16 else k  # (only a 'V' dtype can be bfloat16)


def kept_bfloat16(raw: Any, args: tuple[Any, ...]) -> Any:
    """An op's result array `raw`, rounded back to bfloat16 where numpy widened it and PyTorch does not:
    ml_dtypes' numpy computes a bfloat16 array with a Python float (or a matmul of two) in float32 or
    float64 and keeps that dtype, where PyTorch computes in float32 and rounds the result to bfloat16 once.
    The rule: a float32/float64 result of an op whose floating tensor arguments are all bfloat16 is
    rounded to bfloat16, unless a dtype is among the arguments (a conversion, `sum(dtype=...)`)."""
    if raw.dtype not in (float32, float64):
        return raw
    seen = False
    for a in args:
        d = getattr(a, "_array", a)
        if isinstance(d, (np.ndarray, np.generic)):  # (first: every op runs this, and a Tensor comes first)
            k = d.dtype.kind
            if k == "V" and d.dtype == bfloat16:
                seen = True
            elif k not in "biu":
                return raw  # a float of another dtype among the arguments
        elif isinstance(d, (np.dtype, type, PublicDType)):  # (asked after arrays: slow for a numpy dtype)
            return raw
    return raw.astype(bfloat16) if seen else raw


def computes_in_float32(dtype: Any) -> _b.bool:
    """Whether PyTorch computes ops of `dtype` in float32 and rounds once: the 16-bit floats."""
    return dtype == float16 or (has_bfloat16 and dtype == bfloat16)


def names_device(arg: object) -> bool:
    """Whether `.to(arg)` means a device: PyTorch reads every string there as one ('cpu', 'cuda:0', 'meta'),
    minitensor also takes dtype names ('float64'), so a string is a device unless it names a dtype."""
    if type(arg).__name__ == "device":
        return True
    return isinstance(arg, str) and arg.replace("torch.", "").replace("minitensor.", "") not in _ALIASES


def shown_as() -> str:
    """The library name reprs print: 'torch' under `python -m minitensor.run`, else 'minitensor'."""
    from .tensor import Size  # (tensor.py imports this module)

    return Size.shown_as


# PyTorch's scalar-type names, as its error messages spell them ("result type Float can't be cast ...")
_SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
                 "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool", "uint16": "UInt16",
                 "uint32": "UInt32", "uint64": "UInt64", "bfloat16": "BFloat16"}


def scalar_name(dtype: Any) -> str:
    return _SCALAR_NAMES.get(str(getattr(dtype, "name", dtype)), str(dtype))


def can_cast(from_: DType, to: DType) -> _b.bool:
    """PyTorch's casting rule for results written into a given tensor (`out=`, in-place ops): no
    cast to a lower category (float to an integer, an integer to bool); any cast within one."""
    return _category(from_) <= _category(to)


# ---- finfo and iinfo: PyTorch's fields, from numpy's (bfloat16's written out: numpy has no bfloat16)

class finfo:
    """The machine limits of a floating dtype, with PyTorch's fields: bits, eps, max, min, tiny
    (= smallest_normal), resolution and dtype (a str such as 'float32')."""

    bits: _b.int
    eps: _b.float
    max: _b.float
    min: _b.float
    tiny: _b.float
    smallest_normal: _b.float
    resolution: _b.float
    dtype: str

    def __init__(self, type: Any = None) -> None:
        if type is None:
            type = get_default_dtype()
        if isinstance(type, StoragelessDType) or (has_bfloat16 and as_dtype(type, "finfo") == bfloat16):
            # bfloat16: float32's exponent, 8 bits of mantissa
            self.bits, self.eps, self.max = 16, 2.0 ** -7, builtins_float((2 - 2.0 ** -7) * 2.0 ** 127)
            self.tiny = self.smallest_normal = 2.0 ** -126
            self.resolution, self.dtype = 0.01, "bfloat16"
        else:
            d = as_dtype(type, "finfo")
            if d.kind != "f":
                raise TypeError("finfo() requires a floating point input type; use iinfo for an integer type")
            info = np.finfo(d)
            self.bits, self.eps, self.max = info.bits, builtins_float(info.eps), builtins_float(info.max)
            self.tiny = self.smallest_normal = builtins_float(info.smallest_normal)
            self.resolution, self.dtype = 10.0 ** -info.precision, d.name  # (numpy's is float32-rounded)
        self.min = -self.max

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The limits of an integer (or bool) dtype, with PyTorch's fields: bits, max, min and dtype."""

    bits: _b.int
    max: _b.int
    min: _b.int
    dtype: str

    def __init__(self, type: Any) -> None:
        d = None if isinstance(type, StoragelessDType) else as_dtype(type, "iinfo")
        if d is not None and d.kind == "b":
            raise TypeError("iinfo: bool is not supported (PyTorch's iinfo takes integer dtypes only)")
        if d is None or d.kind not in "iu":
            raise TypeError("iinfo() requires an integer input type; use finfo for a floating point type")
        info = np.iinfo(d)
        self.bits, self.min, self.max = info.bits, builtins_int(info.min), builtins_int(info.max)
        self.dtype = d.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
