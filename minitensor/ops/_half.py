"""float16 and bfloat16 computed as PyTorch computes them: in float32, rounded once at the end.

PyTorch accumulates a half-precision reduction (sum, mean, norm, cumsum, logsumexp, ...) and evaluates
the composite functions built from them (softplus, layer_norm, normalize, cosine_similarity, ...) in
float32. Done step by step in float16 their intermediates overflow (e^12 > 65504, 100^2 * 7 > 65504)
or stop growing (a float16 running sum of 0.1s sticks at 256, where 0.1 is under half its spacing).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar, cast

import numpy as np

from .. import _dtype
from ..tensor import Tensor

_F = TypeVar("_F", bound=Callable[..., Any])


def computed_in_float32_for_half(fn: _F) -> _F:
    """Decorator for an op's public function: when a tensor argument is float16 or bfloat16 (and no
    `dtype` is asked for), every such tensor argument goes in as float32 and every float32 tensor result
    comes out rounded to that 16-bit dtype. The two casts are differentiable ops (their VJPs cast g
    back), so gradients are the float32 computation's, rounded, too. Other dtypes go straight to `fn`."""
    @functools.wraps(fn)
    def op(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is not None or not (_any_half(args) or (kwargs and _any_half(kwargs.values()))):
            return fn(*args, **kwargs)
        out = fn(*[_widened(a) for a in args], **{k: _widened(v) for k, v in kwargs.items()})
        return _rounded(out, _half_dtype(args, kwargs))

    return cast(_F, op)


_HALVES = frozenset(d for d in (_dtype.float16, _dtype.bfloat16) if _dtype.computes_in_float32(d))


def _is_half(x: Any) -> bool:
    return isinstance(x, Tensor) and x._array.dtype in _HALVES


def _any_half(values: Any) -> bool:
    for v in values:  # (a loop and a set: every sum, mean and softmax asks this, `any` over a generator costs 3x)
        if _is_half(v):
            return True
    return False


def _widened(x: Any) -> Any:
    return x.float() if _is_half(x) else x


def _half_dtype(args: Any, kwargs: Any) -> Any:
    """The 16-bit dtype results return to: the first 16-bit tensor argument's."""
    return next(a._array.dtype for a in (*args, *kwargs.values()) if _is_half(a))


def _rounded(out: Any, dtype: Any) -> Any:
    if isinstance(out, Tensor):
        return out.to(dtype) if out._array.dtype == np.float32 else out
    if isinstance(out, tuple):
        parts = [_rounded(o, dtype) for o in out]
        return type(out)(*parts) if hasattr(out, "_fields") else tuple(parts)
    return out
