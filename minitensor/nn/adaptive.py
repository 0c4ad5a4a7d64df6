r"""`AdaptiveLogSoftmaxWithLoss` (Grave et al., 2016, "Efficient softmax approximation for GPUs").

The classes, sorted by frequency, are cut at `cutoffs` into a shortlist [0, c_0) and clusters [c_i, c_{i+1}).
A head scores the shortlist and one entry per cluster; cluster i has its own smaller tail network
(in_features -> in_features // div_value^(i+1) -> cluster size), so rare classes cost less:

    log p(y | x) = head_logsoftmax(x)[y]                                   y in the shortlist
    log p(y | x) = head_logsoftmax(x)[shortlist + i] + tail_i_logsoftmax(x)[y - c_i]   y in cluster i

Composed of Linear, log_softmax, cat and gather, so gradients are autograd's. Parameter names and shapes are
PyTorch's (head.weight, tail.0.0.weight, tail.0.1.weight, ...).
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence, cast

import numpy as np

from ..ops.shape import cat
from ..ops.softmax import log_softmax
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from .layers import Linear, ModuleList, Sequential, _tensor
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """forward(input (N, in_features) or (in_features,), target (N,) or ()) -> (output, loss): output the
    log-probability of each target, loss the mean of -output. log_prob(input) gives every class's, predict(input)
    the most likely class."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("AdaptiveLogSoftmaxWithLoss: cutoffs should be a sequence of unique, positive integers "
                             "sorted in an increasing order, where each value is between 1 and n_classes-1, got "
                             f"{cutoffs} for n_classes={n_classes}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for seq in cast(Any, self.tail):
            for lin in seq:
                lin.reset_parameters()

    def _full_log_prob(self, x: Tensor) -> Tensor:
        head = log_softmax(self.head(x), dim=-1)
        parts = [head[..., :self.shortlist_size]]
        for i in range(self.n_clusters):
            parts.append(log_softmax(self.tail[i](x), dim=-1) + head[..., self.shortlist_size + i:][..., :1])
        return cat(parts, -1)

    def log_prob(self, input: Tensor) -> Tensor:
        x = _tensor(self, input)
        if x.ndim not in (1, 2) or x.shape[-1] != self.in_features:
            raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: input should be (N, {self.in_features}) or "
                               f"({self.in_features},), got shape {tuple(x.shape)}")
        return self._full_log_prob(x)

    def predict(self, input: Tensor) -> Tensor:
        return self.log_prob(input).argmax(dim=-1)

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:
        x, t = _tensor(self, input), _tensor(self, target, "target")
        if x.ndim == 2 and (t.ndim != 1 or t.shape[0] != x.shape[0]):
            raise RuntimeError("AdaptiveLogSoftmaxWithLoss: Input and target should have the same size in the batch "
                               f"dimension, got input {tuple(x.shape)} and target {tuple(t.shape)}")
        if x.ndim == 1 and t.ndim != 0:
            raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 1D input requires a 0D target, got target of shape "
                               f"{tuple(t.shape)}")
        tv = np.asarray(t._array)
        if tv.size and (tv.min() < 0 or tv.max() > self.n_classes - 1):
            raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: Target values should be in [0, {self.n_classes - 1}], "
                               f"but values in range [{tv.min()}, {tv.max()}] were found.")
        full = self.log_prob(x)
        output = full.gather(-1, t.unsqueeze(-1)).squeeze(-1)
        return _ASMoutput(output, (-output).mean())

    def extra_repr(self) -> str:
        return ""


MODULES: list[str] = ["AdaptiveLogSoftmaxWithLoss"]
__all__ = MODULES
