r"""Conversions: `cast`, `.to(dtype)`, `.float()` ..., `.type()`, `clone`: one op, Cast, whose VJP
converts the gradient back to the input's dtype."""

from __future__ import annotations

from typing import Callable

import numpy as np

from .. import _dtype
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..tensor import Tensor, _raw as raw, check_device, device as device_type
from ..types import DeviceLike, DType, DTypeLike


class Cast(Function):
    r"""out = x converted to `dtype`;   VJP: gx = g converted back to x's dtype (0 into integer inputs)"""

    saves_values = False

    @staticmethod
    def forward(ctx, x, dtype, copy):
        with np.errstate(over="ignore", invalid="ignore"):  # inf or NaN to an integer, 1e300 to float32:
            return x._array.astype(dtype, copy=copy)        # silently, as in PyTorch

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return cast(g, x._array.dtype, False), None, None


def cast(x: Tensor, dtype: DType, copy: bool = False) -> Tensor:
    if x.dtype == dtype and not copy:
        return x
    return Cast.apply(x, dtype, copy)


# ---- conversions: `.to(dtype)`, `.float()` ... (a Cast node, so gradients flow back in the input's dtype)
@with_formulas(Cast)
def to(self: Tensor, *args: DTypeLike | DeviceLike | Tensor, dtype: DTypeLike | None = None,
       device: DeviceLike | None = None, copy: bool = False, non_blocking: bool = False,
       memory_format: object = None) -> Tensor:
    """`.to(dtype)`, `.to('cpu')`, `.to(other_tensor)`, `.to(device, dtype)` as in PyTorch."""
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, device_type) or _dtype.names_device(a):
            check_device(a, "to")  # (the CPU passes; 'cuda', 'meta' ... say minitensor runs on the CPU only)
        else:
            dtype = a  # a dtype, or a string naming one
    check_device(device, "to")
    if dtype is None:
        return clone(self) if copy else self
    return cast(self, _dtype.as_dtype(dtype, "to"), copy)


def type_(self: Tensor, dtype: DTypeLike | None = None, non_blocking: bool = False) -> str | Tensor:
    """`x.type()`: the tensor's type name (`torch.FloatTensor` under the runner); `x.type(dtype)`: x
    converted, as `x.to(dtype)`."""
    if dtype is None:
        return f"{_dtype.shown_as()}.{_dtype.scalar_name(self._array.dtype)}Tensor"  # ('Float', 'UInt16' ...)
    return self.to(dtype)


def converter(name: str, dtype: DType) -> Callable[[Tensor], Tensor]:
    """The method `x.<name>()`, x converted to `dtype` (`x.float()`, `x.long()` ...)."""
    def convert(self: Tensor) -> Tensor:
        return self.to(dtype)

    convert.__name__ = name
    convert.__doc__ = f"self as a {dtype} tensor (the same tensor if it already is)"
    if _dtype.kind(dtype) == "f":  # a conversion to an integer or bool dtype passes no gradient back
        with_formulas(Cast)(convert)
    return convert


@with_formulas(Cast)
def type_as(self: Tensor, other: Tensor) -> Tensor:
    """self converted to other's dtype (`self.to(other.dtype)`)."""
    return self.to(other.dtype)


@with_formulas(Cast)
def clone(input: Tensor, *, memory_format: object = None) -> Tensor:
    """A copy with its own memory; gradients flow through it unchanged (every memory format is row-major here)."""
    return shown_as(Cast.apply(input, input.dtype, True), "CloneBackward0")


# ---- the operands of a binary op, in its result dtype -------------------------------------------

def prepare_operands(a, b, want=None):
    """The operands of a binary op in PyTorch's result dtype (or `want`), so the op's forward computes
    in it: a tensor of another dtype gets a Cast node (its gradient flows back in its own dtype), a
    Python int wraps into an integer dtype (-1 is 255 next to uint8). numpy would compute otherwise:
    int8 * 2.5 in float64 where PyTorch gives float32, float32 * a 0-d float64 tensor in float64."""
    if want is None:
        if _in_one_dtype(a, b):
            return a, b
        want = _dtype.result_dtype(raw(a), raw(b))

    def converted(x):
        if isinstance(x, Tensor):
            return cast(x, want)
        if type(x) is int:  # (an np.ndarray when it wraps: its one value, now in range)
            wrapped = _dtype.wrapped_int(x, want)
            return wrapped if type(wrapped) is int else wrapped.item()
        return x
    return converted(a), converted(b)


def prepare_division(a, b):
    """`/`'s operands: as `prepare_operands`, but integers and bools divide in the default float
    dtype (1 / 2 is 0.5), each converted to it directly (a 0-d int64 next to int32 is not cut to 32 bits)."""
    if _in_one_dtype(a, b) and _dtype.kind((a if isinstance(a, Tensor) else b)._array.dtype) == "f":
        return a, b
    want = _dtype.result_dtype(raw(a), raw(b))
    return prepare_operands(a, b, want if _dtype.kind(want) == "f" else _dtype.get_default_dtype())


def _in_one_dtype(a, b):
    """Whether the two operands are already in their result dtype, in the common cases: two tensors of
    one dtype, or a float tensor and a Python float or 64-bit int (either side: `2 * x` as `x * 2`)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a._array.dtype == b._array.dtype
    t, n = (a, b) if isinstance(a, Tensor) else (b, a)
    if not isinstance(t, Tensor):
        return False
    return _dtype.kind(t._array.dtype) == "f" and (type(n) is float or type(n) is int and _INT64_MIN <= n <= _INT64_MAX)


_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1
