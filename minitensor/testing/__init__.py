r"""Testing helpers for minitensor and for ops you write on top of it.

- `assert_close(actual, expected)`: elementwise closeness with PyTorch's default tolerance for each
  dtype, and a failure message that says how many elements differ, by how much and where.
- `minitensor.testing.strategies` (needs Hypothesis): strategies that draw arrays, tensors,
  broadcastable shapes, matmul shapes and attention inputs, to property-test your own ops.

`assert_close` checks |actual - expected| <= atol + rtol * |expected| elementwise. Its defaults
are PyTorch's (`torch.testing.assert_close`):

    dtype      rtol     atol
    float16    1e-3     1e-5
    float32    1.3e-6   1e-5
    float64    1e-7     1e-7
    integers, bool: exact

float32 keeps about 7 significant digits, so rtol 1.3e-6 is a few units in the last place. A
float32 result compared with a float64 reference usually needs a looser, stated tolerance: pass
both `rtol` and `atol`, and `check_dtype=False`.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ..tensor import Tensor

__all__ = ["assert_close", "assert_allclose", "default_tolerances", "make_tensor"]

_TOLERANCES = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
}


def default_tolerances(*dtypes: Any) -> tuple[float, float]:
    """(rtol, atol) PyTorch uses for these dtypes: the loosest among them; (0, 0) for integers and bool."""
    rtol = atol = 0.0
    for d in dtypes:
        r, a = _TOLERANCES.get(np.dtype(d), (0.0, 0.0))
        rtol, atol = max(rtol, r), max(atol, a)
    return rtol, atol


def _is_tensor(x):
    """A minitensor Tensor."""
    return isinstance(x, Tensor)


def _is_array_like(x):
    """Tensors and ndarrays carry a dtype of their own; numbers and lists take the other side's."""
    return isinstance(x, np.ndarray) or _is_tensor(x)


def _to_array(x, like, side):
    if _is_tensor(x):
        return x._array
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (numbers.Number, np.generic, list, tuple)):
        try:
            arr = np.asarray(_untensor(x))
        except ValueError as e:
            raise TypeError(f"assert_close: {side} is ragged or mixed and can't be compared ({e})") from None
        if like is not None and arr.dtype.kind in "biuf" and np.dtype(like).kind in "biuf":
            if np.can_cast(arr, like, casting="same_kind") or np.dtype(like).kind == "f":
                return arr.astype(like)
        return arr
    raise TypeError(
        f"assert_close: can't compare {side} of type {type(x).__name__}; expected a Tensor, an ndarray, "
        "a number or a nested list"
    )


def _untensor(x):
    if isinstance(x, (list, tuple)):
        return [_untensor(v) for v in x]
    if _is_tensor(x):
        return x._array
    return x


def _fmt_index(idx, ndim):
    return f" at index {idx}" if ndim else ""


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | None = None) -> None:
    """Raise AssertionError unless `actual` and `expected` are close elementwise.

    actual, expected: minitensor Tensors, numpy arrays, numbers or nested lists. A number or list
        takes the dtype of the other side when that side is a Tensor or array (like PyTorch's weak
        Python scalars), so `assert_close(t, [1.0, 2.0])` works for a float32 `t`.
    rtol, atol: give both or neither. Default: PyTorch's per-dtype values (see the module doc),
        the loosest of the two sides' dtypes; integers and bool must match exactly.
    equal_nan: NaN equals NaN (at the same position) when True.
    check_dtype: the dtypes must be equal (only checked when both sides carry a dtype).
    check_stride: two Tensors must have the same strides too.
    allow_subclasses, check_device, check_layout: PyTorch's, accepted: every minitensor Tensor is a dense CPU
        tensor of one class, so they always agree.
    msg: a string put in front of the generated message, or a callable that receives the
        generated message and returns the one to raise.

    Shapes must be equal (no broadcasting). On failure the message gives the differing shapes or
    dtypes, or else the number of mismatched elements out of the total, the greatest absolute
    difference and its index, and the greatest relative difference and its index.
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"assert_close: give both rtol and atol or neither, got rtol={rtol}, atol={atol}")
    a_dtype = actual.dtype if _is_array_like(actual) else None
    e_dtype = expected.dtype if _is_array_like(expected) else None
    a = _to_array(actual, e_dtype, "actual")
    e = _to_array(expected, a_dtype, "expected")

    def fail(text):
        if callable(msg):
            raise AssertionError(msg(text))
        raise AssertionError(f"{msg}\n{text}" if msg else text)

    if a.shape != e.shape:
        fail(f"assert_close: the shapes differ: actual {tuple(a.shape)} vs expected {tuple(e.shape)} "
             f"(dtypes {a.dtype} and {e.dtype})")
    if check_dtype and a_dtype is not None and e_dtype is not None and a.dtype != e.dtype:
        fail(f"assert_close: the dtypes differ: actual {a.dtype} vs expected {e.dtype} (shape {tuple(a.shape)}); "
             "pass check_dtype=False to compare the values anyway")
    if check_stride and _is_tensor(actual) and _is_tensor(expected) and actual.stride() != expected.stride():
        fail(f"assert_close: the strides differ: actual {actual.stride()} vs expected {expected.stride()} "
             f"(shape {tuple(a.shape)}); pass check_stride=False to compare the values only")
    if rtol is None:
        rtol, atol = default_tolerances(a.dtype, e.dtype)

    af = a.astype(np.float64)
    ef = e.astype(np.float64)
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        close = a == e  # exact: no float64 round trip that could merge two large integers
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(af - ef) <= atol + rtol * np.abs(ef)
        inf = np.isinf(af) | np.isinf(ef)
        close = np.where(inf, af == ef, close)  # an infinity is only close to the same infinity
        if equal_nan:
            close |= np.isnan(af) & np.isnan(ef)
    close = np.asarray(close)
    if close.all():
        return
    total = close.size
    bad = int((~close).sum())
    lines = [
        "assert_close: the values are not close!",
        f"Mismatched elements: {bad} / {total} ({100.0 * bad / total:.1f}%)",
    ]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        absdiff = np.abs(af - ef)
        reldiff = absdiff / np.abs(ef)
    nans = (np.isnan(af) != np.isnan(ef)) if equal_nan else (np.isnan(af) | np.isnan(ef))
    if nans.any():
        first = tuple(int(i) for i in np.argwhere(nans)[0])
        rule = "on one side only" if equal_nan else "(NaN never equals anything unless equal_nan=True)"
        lines.append(f"NaN {rule}: {int(nans.sum())} element(s), the first{_fmt_index(first, a.ndim)}: "
                     f"actual {float(af[first])}, expected {float(ef[first])}")
    for name, diff, allowed in (("absolute", absdiff, atol), ("relative", reldiff, rtol)):
        ranked = np.where(np.isnan(diff), -np.inf, diff).reshape(-1)  # NaN was reported above
        k = int(np.argmax(ranked))
        if ranked[k] <= 0:  # nothing to report beyond the NaN line
            continue
        idx = tuple(int(i) for i in np.unravel_index(k, a.shape)) if a.ndim else ()
        lines.append(f"Greatest {name} difference: {ranked[k]:.6g}{_fmt_index(idx, a.ndim)} (up to {allowed:g} "
                     f"allowed); actual {af.reshape(-1)[k]:.10g}, expected {ef.reshape(-1)[k]:.10g}")
    lines.append(f"(shape {tuple(a.shape)}, dtypes {a.dtype} and {e.dtype}, rtol={rtol:g}, atol={atol:g})")
    fail("\n".join(lines))


# ---- h-mods: the rest of `torch.testing` -----------------------------------------------------------------------------

_ALLCLOSE_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-3), np.dtype(np.float32): (1e-4, 1e-5),
                        np.dtype(np.float64): (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """The deprecated forerunner of assert_close (PyTorch's FutureWarning): looser default tolerances, NaN
    equal to NaN, and the dtypes not compared (`expected` is read in `actual`'s dtype when not a Tensor)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from ..factories import tensor
    if not _is_tensor(actual):
        actual = tensor(actual)
    if not _is_tensor(expected):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol = atol = 0.0
        for d in (actual._array.dtype, expected._array.dtype):
            r, a = _ALLCLOSE_TOLERANCES.get(np.dtype(d), (0.0, 0.0))
            rtol, atol = max(rtol, r), max(atol, a)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None)


def make_tensor(*shape: Any, dtype: Any, device: Any, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of `shape` with values drawn uniformly from [low, high) (PyTorch's defaults per dtype: bool
    [0, 2), unsigned [0, 10), signed integers [-9, 10), floats [-9, 9)). `exclude_zero` replaces zeros by 1
    (bool, integers) or the dtype's smallest normal number; `noncontiguous` gives a strided view (more than one
    element). The draws come from minitensor's generator, so the values are not PyTorch's."""
    from .. import _dtype
    from ..factories import empty, randint
    from ..tensor import check_device
    check_device(device, "make_tensor")
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    shape = tuple(int(n) for n in shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    d = np.dtype(_dtype.as_dtype(dtype, "make_tensor"))
    if requires_grad and d.kind in "biu":
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got "
                         f"dtype={dtype}")
    noncontiguous = noncontiguous and int(np.prod(shape)) > 1
    drawn_shape = (*shape[:-1], 2 * shape[-1]) if noncontiguous else shape
    if d.kind == "b":
        lo, hi = _low_high(low, high, 0, 2, 0, 2, integral=True, dtype=dtype)
    elif d.kind in "iu":
        info = np.iinfo(d)
        lo, hi = _low_high(low, high, info.min, info.max + (d != np.int64), 0 if d.kind == "u" else -9, 10,
                           integral=True, dtype=dtype)
    elif d.kind == "f":
        fi = np.finfo(d)
        lo, hi = _low_high(low, high, float(fi.min), float(fi.max), -9, 9, integral=False, dtype=dtype)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor(). "
                        "To request support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if d.kind == "f":
        result = empty(drawn_shape, dtype=dtype).uniform_(lo, hi)
    else:
        result = randint(int(lo), int(hi), drawn_shape, dtype=dtype)
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        tiny = 1 if d.kind in "biu" else np.finfo(d).tiny
        result._array[result._array == 0] = tiny
    if requires_grad:
        result.requires_grad_(True)
    return result


def _low_high(low, high, lowest, highest, default_low, default_high, *, integral, dtype):
    """make_tensor's [low, high): the defaults for the dtype, checked, clamped into what the dtype holds."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and not integral:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dtype} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.ceil(low), math.ceil(high)) if integral else (low, high)
