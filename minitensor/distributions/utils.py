"""Helpers the distributions share: broadcasting parameters, probs <-> logits, and small composites.

Everything here is written with minitensor's public ops, so gradients flow through it.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import minitensor

from ..tensor import Size, Tensor

euler_constant = 0.57721566490153286060  # Euler–Mascheroni


def finfo(dtype: Any) -> Any:
    """numpy's float info of a float dtype (eps, tiny, min, max), which minitensor's dtypes are."""
    return np.finfo(dtype)


def broadcast_all(*values: Tensor | float) -> tuple[Tensor, ...]:
    """Every value as a tensor of one broadcast shape: Python numbers take the dtype of the tensors
    among them (the default float dtype if there are none), as PyTorch's `broadcast_all`."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else minitensor.get_default_dtype()
    as_tensors = [v if isinstance(v, Tensor) else minitensor.tensor(float(v), dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in as_tensors))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in as_tensors)


def broadcast_shape(*shapes: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))


def as_float_tensor(value: Tensor | float) -> Tensor:
    return value if isinstance(value, Tensor) else minitensor.tensor(float(value))


def clamp_probs(probs: Tensor) -> Tensor:
    """probs kept within [eps, 1 - eps] of their dtype, so their log and log1p(-p) are finite."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    p = clamp_probs(probs)
    return p.log() - (-p).log1p() if is_binary else p.log()


def _positive_part(x: Tensor) -> Tensor:
    # max(x, 0) written (x + |x|) / 2: its gradient at 0 is 1/2, so the sums below have the exact
    # gradient sigmoid(0) = 1/2 there (with clamp's gradient, 1 at the kink, it would come out wrong)
    return (x + x.abs()) / 2


def softplus(x: Tensor) -> Tensor:
    """ln(1 + e^x), computed as max(x, 0) + ln(1 + e^-|x|) so it neither overflows nor loses digits."""
    return _positive_part(x) + (-x.abs()).exp().log1p()


def bce_with_logits(logits: Tensor, target: Tensor) -> Tensor:
    """-(t ln σ(l) + (1 - t) ln(1 - σ(l))), elementwise, in its stable form max(l, 0) - l t + ln(1 + e^-|l|)."""
    return softplus(logits) - logits * target


def xlogy(x: Tensor, y: Tensor) -> Tensor:
    """x ln y, taken as 0 where x and y are both 0, as PyTorch's xlogy (its gradient in x stays ln y at x = 0)."""
    both_zero = (x == 0) & (y == 0)
    safe_y = minitensor.where(both_zero, minitensor.ones_like(y), y)
    return x * safe_y.log()


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum over the `dim` rightmost dims (none for 0)."""
    return value.reshape(tuple(value.shape[:value.ndim - dim]) + (-1,)).sum(-1) if dim > 0 else value


def floor(x: Tensor) -> Tensor:
    """floor, detached (minitensor has no floor op yet; used for modes and discrete samples, which have no gradient)."""
    x = x.detach()
    return x - x.remainder(1)  # remainder(x, 1) = x - floor(x), in [0, 1)


class lazy_property:
    """A parameter computed from another on first use and then kept (Categorical's probs from its logits,
    or the other way): only the one given is checked on construction, as in PyTorch."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        with minitensor.enable_grad():  # a parameter derived under no_grad would lose its gradient for good
            value = self.fn(instance)
        instance.__dict__[self.__name__] = value
        return value


def diagonal(matrix: Tensor) -> Tensor:
    """The diagonal of the last two dims, (..., n, n) -> (..., n), differentiable."""
    return (matrix * minitensor.eye(matrix.shape[-1], dtype=matrix.dtype)).sum(-1)


def size(*shape: Any) -> Size:
    return Size(tuple(int(d) for d in shape))


def as_size(shape: Any) -> Size:
    if isinstance(shape, numbers.Integral):
        return Size((int(shape),))
    return Size(tuple(int(d) for d in shape))
