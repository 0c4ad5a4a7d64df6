r"""Weight initialisation with PyTorch's rules for gain and fan.

fan_in = in_features * receptive field, fan_out = out_features * receptive field, for a weight of
shape (out, in, *kernel). Xavier keeps the variance of activations and gradients equal across a
layer: std = gain * sqrt(2 / (fan_in + fan_out)). Kaiming keeps the forward variance for
ReLU-like layers: std = gain / sqrt(fan). A uniform U(-b, b) has std b / sqrt(3).
"""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Callable

import numpy as np

from ..autograd.grad_mode import no_grad
from ..random import Generator, _gen
from ..tensor import Tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
              "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError(
            "fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
            f"(shape {tuple(tensor.shape)})"
        )
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fill(tensor, values):
    tensor._array[...] = values  # in place, outside the graph (an init is not an op to differentiate)
    tensor._bump_version()
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with draws from U(a, b) (in place, outside the graph; returns the tensor). Tensor.uniform_'s
    checks: a float tensor, a <= b."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with draws from N(mean, std^2) (in place, outside the graph; returns the tensor).
    Tensor.normal_'s checks: a float tensor, std >= 0."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Generator | None = None) -> Tensor:
    """Normal(mean, std) redrawn until inside [a, b]."""
    g = _gen(generator)
    out = g.normal(mean, std, tensor.shape)
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = g.normal(mean, std, int(bad.sum()))
        bad = (out < a) | (out > b)
    return _fill(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, 1)


def eye_(tensor: Tensor) -> Tensor:
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, got shape {tuple(tensor.shape)}")
    return _fill(tensor, np.eye(*tensor.shape))


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)), i.e. std gain * sqrt(2 / (fan_in + fan_out))."""
    if tensor.numel() == 0:
        return tensor
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    if tensor.numel() == 0:
        return tensor
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """U(-b, b) with b = sqrt(3) * gain / sqrt(fan), gain = calculate_gain(nonlinearity, a).

    A zero-element tensor (e.g. Linear(0, n)) is left as it is, as in PyTorch.
    """
    if tensor.numel() == 0:
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan), gain = calculate_gain(nonlinearity, a)."""
    if tensor.numel() == 0:
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


# ---- h-nnrest: orthogonal, sparse, dirac, and the deprecated names without the underscore --------------------------
def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None) -> Tensor:
    """A (semi-)orthogonal matrix times `gain`; dims after the first are flattened into columns.

    Q of the QR factorisation of a Gaussian matrix, each column's sign flipped to make diag(R) positive,
    which makes Q uniformly distributed over the orthogonal matrices (Haar measure).
    """
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _gen(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (gain * q).reshape(tensor.shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None) -> Tensor:
    """N(0, std^2) draws with ceil(sparsity * rows) entries of each column set to zero (a 2-D tensor)."""
    if tensor.ndim != 2:
        raise ValueError(f"sparse_: only tensors with 2 dimensions are supported, got shape {tuple(tensor.shape)}")
    rows, cols = tensor.shape
    g = _gen(generator)
    values = g.normal(0.0, std, (rows, cols))
    zeros = math.ceil(sparsity * rows)
    for c in range(cols):
        values[g.permutation(rows)[:zeros], c] = 0
    return _fill(tensor, values)


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A 3-, 4- or 5-D convolution weight that passes its input through: in each of `groups` groups,
    output channel d reads input channel d at the kernel's centre (as many channels as both sides have)."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: only tensors with 3, 4, or 5 dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    shape = tuple(tensor.shape)
    if shape[0] % groups != 0:
        raise ValueError(f"dirac_: dim 0 ({shape[0]}) must be divisible by groups ({groups})")
    per_group = shape[0] // groups
    values = np.zeros(shape)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(min(per_group, shape[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def _deprecated(new: Callable[..., Tensor]) -> Callable[..., Tensor]:
    old = new.__name__[:-1]

    @functools.wraps(new)  # (the new one's signature, for help() and type checkers)
    def init(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    init.__name__ = init.__qualname__ = old
    init.__doc__ = f"Deprecated: warns (FutureWarning), then runs `{new.__name__}`."
    return init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
