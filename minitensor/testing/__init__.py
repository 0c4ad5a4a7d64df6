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

import numbers
from typing import Any

import numpy as np

from ..tensor import Tensor

__all__ = ["assert_close", "default_tolerances"]

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


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None, atol: float | None = None,
                 equal_nan: bool = False, check_dtype: bool = True, msg: str | None = None) -> None:
    """Raise AssertionError unless `actual` and `expected` are close elementwise.

    actual, expected: minitensor Tensors, numpy arrays, numbers or nested lists. A number or list
        takes the dtype of the other side when that side is a Tensor or array (like PyTorch's weak
        Python scalars), so `assert_close(t, [1.0, 2.0])` works for a float32 `t`.
    rtol, atol: give both or neither. Default: PyTorch's per-dtype values (see the module doc),
        the loosest of the two sides' dtypes; integers and bool must match exactly.
    equal_nan: NaN equals NaN (at the same position) when True.
    check_dtype: the dtypes must be equal (only checked when both sides carry a dtype).
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
