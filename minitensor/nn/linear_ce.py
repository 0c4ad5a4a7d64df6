r"""`F.linear_cross_entropy` and `nn.LinearCrossEntropyLoss`: cross entropy of a linear layer's logits,

    loss = cross_entropy(x W^T + b, target)      W (num_classes, *out_features, in_features)

PyTorch can compute it in chunks of the batch so the (batch, classes) logits never exist at once
(`LinearCrossEntropyOptions`); that is a memory optimisation with the same values, so here the options are
accepted and the reference composition (linear, then cross_entropy) always runs.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from .functional import cross_entropy, linear
from .layers import Linear, _tensor
from .loss import _WeightedLoss


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's settings of the chunked computation; accepted and not used (see the module's docstring)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """cross_entropy(linear(input, W, b), target): the logits of shape (..., num_classes, *out_features).

    forward: z = x W^T + b;   loss = -log softmax(z)[target]   (reduced as `reduction` says)
    VJP:     gz = g * (softmax(z) - onehot(target));   gx = gz W,   gW = gz^T x,   gb = sum of gz
    """
    x = _tensor_input(input)
    if linear_weight.ndim < 2 or linear_weight.shape[-1] != x.shape[-1]:
        raise RuntimeError(f"linear_cross_entropy: linear_weight of shape {tuple(linear_weight.shape)} does not "
                           f"match an input with {x.shape[-1]} features (expected (num_classes, *out_features, "
                           f"{x.shape[-1]}))")
    classes_shape = tuple(linear_weight.shape[:-1])
    rows = math.prod(classes_shape)
    w = linear_weight.reshape(rows, linear_weight.shape[-1])
    b = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(x, w, b).reshape(tuple(x.shape[:-1]) + classes_shape)
    return cross_entropy(logits, target, weight, ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)


def _tensor_input(x):
    if not isinstance(x, Tensor):
        raise TypeError(f"linear_cross_entropy: input must be a Tensor, got {type(x).__name__}")
    return x


class LinearCrossEntropyLoss(_WeightedLoss):
    """A Linear(in_features, num_classes * prod(out_features)) (`linear`) whose logits go into cross_entropy."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple[int, ...] = (), bias: bool = False,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None, reduction: str = "mean",
                 weight: Tensor | None = None, ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: LinearCrossEntropyOptions | None = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"LinearCrossEntropyLoss: expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if not 0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"LinearCrossEntropyLoss: expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight, reduction=reduction)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing, self.options = ignore_index, label_smoothing, options
        self.linear = Linear(in_features, math.prod(self.out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        x = _tensor(self, input)
        w = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        b = None if self.linear.bias is None else self.linear.bias.reshape((self.num_classes, *self.out_features))
        return linear_cross_entropy(x, w, target, linear_bias=b, weight=self.weight, reduction=self.reduction,
                                    ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                    options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")


MODULES: list[str] = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]
__all__ = MODULES
