r"""The rest of `torch.nn`'s small layers and losses, each a composition of minitensor ops (so its gradient
comes from the ops' VJPs): Softmax2d, NLLLoss2d, Dropout3d, FeatureAlphaDropout, CrossMapLRN2d, BatchNorm3d,
InstanceNorm3d, MultiLabelMarginLoss, TripletMarginWithDistanceLoss, EmbeddingBag, the `Buffer` marker and the
deprecated `Container`; and the functions gumbel_softmax, pdist, dropout3d, feature_alpha_dropout,
multilabel_margin_loss, triplet_margin_with_distance_loss and embedding_bag.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ..ops._util import float_arg, float_kernel, tensor_input
from ..ops.indexing import where
from ..ops.shape import stack
from ..ops.softmax import softmax
from ..random import _gen
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from . import init
from .functional import _legacy_reduction, _renorm_rows
from .layers import NLLLoss, _empty, _tensor
from .loss import PairwiseDistance, _Loss, pairwise_distance
from .misc import _ALPHA_PRIME, _batched_or_not, _check_p, _DropoutNd, _float_result
from .module import Module
from .normalization import _BatchNorm, _InstanceNorm
from .parameter import Buffer  # noqa: F401  (nn.Buffer: defined beside Parameter, which Module knows)


def _reduce(loss, reduction, op):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction (use 'none', 'mean' or 'sum')")


# ---- functions -----------------------------------------------------------------------------------------------
def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    r"""A differentiable sample from the categorical distribution softmax(logits) (Jang et al., 2016).

    forward: y = softmax((logits + G) / tau),  G_i = -log(E_i), E_i ~ Exp(1) (Gumbel noise, minitensor's generator)
             hard=True: the one-hot vector of argmax y, with y's gradient (straight-through: y_hard - y.detach() + y)
    VJP:     that of softmax((logits + G) / tau) with G fixed
    """
    x = tensor_input(logits, "gumbel_softmax")
    gumbels = Tensor._make(-np.log(_gen().exponential(1.0, tuple(x.shape))).astype(x._array.dtype))
    y = softmax((x + gumbels) / tau, dim)
    if not hard:
        return y
    idx = np.argmax(y._array, axis=dim)
    one_hot = np.zeros(y.shape, dtype=y._array.dtype)
    np.put_along_axis(one_hot, np.expand_dims(idx, dim), 1.0, axis=dim)
    return Tensor._make(one_hot) - y.detach() + y


def pdist(input: Tensor, p: float = 2) -> Tensor:
    r"""The p-norm distance between every pair of rows i < j of an (N, M) input, in row-major order (N(N-1)/2,).

    forward: out_k = ||x_i - x_j||_p  for the k-th pair (i, j), i < j
    VJP:     that of the norm of the difference (0 for two equal rows)
    """
    x = tensor_input(input, "pdist")
    if x.ndim != 2:
        raise RuntimeError(f"pdist: only supports 2D tensors, got: {x.ndim}D")
    if p < 0:
        raise RuntimeError(f"pdist: only supports non-negative p values, got {p}")
    i, j = np.triu_indices(x.shape[0], k=1)
    return (x[i] - x[j]).norm(p, dim=1)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    r"""Zero whole channels of (N, C, D, H, W) or unbatched (C, D, H, W) inputs with probability p in training.

    forward: out[n, c] = x[n, c] m_nc / (1 - p),  m_nc = 1 with probability 1 - p, else 0
    VJP:     gx[n, c] = g[n, c] m_nc / (1 - p)
    """
    p = float_arg(p, "dropout3d", "p")  # (its type first: PyTorch compares it before the shape)
    return _batched_or_not(input, p, training, "dropout3d", 5)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    r"""alpha_dropout with one mask entry per channel (every position of a (sample, channel) pair together).

    forward: out = a (x m + alpha' (1 - m)) + b,  a = ((1 - p)(1 + p alpha'^2))^{-1/2},  b = -a alpha' p
    VJP:     gx = a m g
    """
    x = tensor_input(input, "feature_alpha_dropout")
    _check_p(p, "feature_alpha_dropout")
    if not training or p == 0.0:
        return x
    if x.ndim < 2:
        raise RuntimeError(f"feature_alpha_dropout: feature dropout requires at least 2 dimensions in the input, "
                           f"got shape {tuple(x.shape)}")
    _float_result(x, "feature_alpha_dropout")
    if p == 1.0:
        return x * 0.0
    shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2)
    keep = (_gen().random(shape) >= p).astype(x._array.dtype)
    a = ((1 - p) * (1 + p * _ALPHA_PRIME ** 2)) ** -0.5
    b = -a * _ALPHA_PRIME * p
    return (x * Tensor._make(keep) + Tensor._make(_ALPHA_PRIME * (1 - keep))) * a + b


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    r"""Multi-class multi-label hinge loss. Row n's targets are target[n, :k], k the position of its first -1.

    forward: loss_n = \sum_{j in targets} \sum_{i not in targets} max(0, 1 - (x[n, j] - x[n, i])) / C
    VJP:     -g/C for x[n, j] and +g/C for x[n, i] in each pair whose hinge is active
    """
    op = "multilabel_margin_loss"
    x, t = tensor_input(input, op), tensor_input(target, op, "target")
    if x.numel():  # (PyTorch's kernel is picked by the input's dtype, before the target is looked at)
        float_kernel(x, op)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: target must be an integer tensor, got {t.dtype}")
    if x.ndim not in (0, 1, 2) or tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"{op}: inconsistent input shape {tuple(x.shape)} and target shape {tuple(t.shape)} "
                           "(both (C,) or (N, C))")
    unbatched = x.ndim < 2
    x2 = x.reshape(1, -1) if unbatched else x
    t2 = t._array.reshape(x2.shape)
    n, c = x2.shape
    pairs = np.zeros((n, c, c), dtype=x2._array.dtype)  # pairs[n, j, i]: how often the hinge (j, i) counts
    for row in range(n):
        labels = []
        for label in t2[row]:
            if label < 0:
                break
            if label >= c:
                raise RuntimeError(f"{op}: target label {label} is out of range for {c} classes")
            labels.append(int(label))
        is_target = np.zeros(c, dtype=bool)
        is_target[labels] = True
        for j in labels:
            pairs[row, j, ~is_target] += 1
    hinge = (1 - x2.unsqueeze(2) + x2.unsqueeze(1)).clamp(min=0)  # [n, j, i] = max(0, 1 - (x_j - x_i))
    loss = (hinge * Tensor._make(pairs)).sum(dim=(1, 2)) / c
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), op)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    r"""triplet_margin_loss with any distance d (pairwise_distance by default).

    forward: loss = max(0, margin + d(a, p) - d(a, n)),  with swap d(a, n) -> min(d(a, n), d(p, n)),  then reduced
    VJP:     that of the composition, through the distance function
    """
    op = "triplet_margin_with_distance_loss"
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        tensor_input(t, op, name)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_swap = dist(positive, negative)
        d_neg = where(d_swap < d_neg, d_swap, d_neg)
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction, op)


def _bags(op, idx, offsets, include_last_offset):
    """The (start, end) of every bag in the flat index list, and the flat indices."""
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{op}: if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                             "of fixed length sequences")
        b, n = idx.shape
        return [(k * n, (k + 1) * n) for k in range(b)], idx.reshape(-1)
    if idx.ndim != 1:
        raise ValueError(f"{op}: input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    if offsets is None:
        raise ValueError(f"{op}: offsets has to be a 1D Tensor but got None")
    off = np.asarray(offsets._array if isinstance(offsets, Tensor) else offsets, dtype=np.int64).reshape(-1)
    if off.size and off[0] != 0:
        raise RuntimeError(f"{op}: offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                           f"from position 0. However, got {int(off[0])}")
    ends = list(off[1:]) + ([] if include_last_offset else [idx.size])
    starts = list(off[:-1]) if include_last_offset else list(off)
    return [(int(s), int(e)) for s, e in zip(starts, ends)], idx


def _bag_indices(op, input, weight, offsets, mode, scale_grad_by_freq, sparse, per_sample_weights):
    """embedding_bag's argument checks in PyTorch's order and classes (the shapes' ValueErrors, then the
    mode's, then the indices' dtype and range, RuntimeErrors); the indices' array."""
    idx = tensor_input(input, op)._array
    tensor_input(weight, op, "weight")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != idx.shape:
        raise ValueError(f"{op}: per_sample_weights of shape {tuple(per_sample_weights.shape)} must have the "
                         f"shape of input {idx.shape}")
    if weight.ndim != 2:
        raise ValueError(f"{op}: weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if idx.ndim == 2 and offsets is not None:
        raise ValueError(f"{op}: if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                         "of fixed length sequences")
    if idx.ndim == 2 and idx.dtype == np.bool_:  # (PyTorch's offsets of a 2-D input: an arange in its dtype)
        raise NotImplementedError(f"{op}: bool indices of shape {idx.shape} are not supported (integer indices "
                                  "only)")
    if idx.ndim == 1 and (offsets is None or np.ndim(getattr(offsets, "_array", offsets)) != 1):
        raise ValueError(f"{op}: offsets has to be a 1D Tensor but got "
                         f"{'None' if offsets is None else f'shape {tuple(np.shape(offsets._array))}'}")
    if idx.ndim not in (1, 2):
        raise ValueError(f"{op}: input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim} "
                         f"(shape {idx.shape})")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"{op}: mode has to be one of sum, mean or max, got {mode!r}")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError(f"{op}: scale_grad_by_freq=True and sparse=True are not supported "
                                  "(minitensor has no sparse gradients); leave both False")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"{op}: per_sample_weights was not None. per_sample_weights is only supported "
                                  f"for mode='sum' (got mode='{mode}'). Please open a feature request on GitHub.")
    # PyTorch promotes the indices and the offsets (a 2-D input's: in its dtype) to one dtype, int64 or int32
    off = idx if offsets is None else np.asarray(getattr(offsets, "_array", offsets))
    common = np.result_type(idx, off)
    if common not in (np.int32, np.int64):
        raise RuntimeError(f"{op}: indices and offsets must be int64 or int32 tensors, got {idx.dtype} and "
                           f"{off.dtype} (as one dtype: {common})")
    idx = idx.astype(common, copy=False)
    rows_n = weight.shape[0]
    bad = np.flatnonzero((idx.reshape(-1) < 0) | (idx.reshape(-1) >= rows_n))
    if bad.size:
        k = int(bad[0])
        raise RuntimeError(f"{op}: index {k} of input takes value {int(idx.reshape(-1)[k])}, which is not in the "
                           f"valid range [0, {rows_n}) of the table's rows")
    return idx


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    r"""Sums, means or maxima of bags of embedding rows, without the (bags, length, dim) intermediate.

    A 2-D input (B, N) is B bags of N indices; a 1-D input with `offsets` is bags starting at those positions.
    Indices equal to padding_idx are left out of their bag (a mean divides by the count of the others); an
    empty bag gives zeros.
    forward: sum:  out_b = \sum_{k in bag b} w_k W[idx_k]   (w = per_sample_weights, or 1)
             mean: out_b = sum / |bag b|;   max: out_b[d] = max_{k in bag b} W[idx_k, d]
    VJP:     gW[idx_k] += w_k g_b (sum), g_b / |bag b| (mean), g_b[d] to the row that held the max (max)
    """
    op = "embedding_bag"
    idx = _bag_indices(op, input, weight, offsets, mode, scale_grad_by_freq, sparse, per_sample_weights)
    bags, flat = _bags(op, idx, offsets, include_last_offset)
    if max_norm is not None:
        _renorm_rows(weight, flat, float(max_norm), float(norm_type))
    keep = np.ones(flat.shape, dtype=bool) if padding_idx is None else flat != (padding_idx % weight.shape[0])
    picked = weight[flat]  # (K, dim)
    if per_sample_weights is not None:
        picked = picked * per_sample_weights.reshape(-1, 1)
    dim = weight.shape[1]
    if mode == "max":
        outs = []
        for s, e in bags:
            members = np.nonzero(keep[s:e])[0] + s
            outs.append(picked[members].max(dim=0).values if members.size else weight.new_zeros((dim,)))
        return stack(outs) if outs else weight.new_zeros((0, dim))
    # sum and mean: a (bags, K) matrix of 0/1 (or 1/|bag|) times the picked rows
    member = np.zeros((len(bags), flat.size), dtype=weight._array.dtype)
    for b, (s, e) in enumerate(bags):
        member[b, s:e] = keep[s:e]
        if mode == "mean" and member[b].sum() > 0:
            member[b] /= member[b].sum()
    return Tensor._make(member) @ picked


# ---- Modules ---------------------------------------------------------------------------------------------------
class Container(Module):
    """Deprecated: everything it did is Module's. Registers its keyword arguments as children."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input: Tensor) -> Tensor:
        x = _tensor(self, input)
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {x.ndim}D instead")
        return softmax(x, -3)


class NLLLoss2d(NLLLoss):
    """NLLLoss under its old name for (N, C, H, W) inputs."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Dropout3d(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(_tensor(self, input), self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    def forward(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(_tensor(self, input), self.p, self.training)


def _cross_map_window(channels: int, size: int) -> np.ndarray:
    """w[c, j] = 1 when channel j's square enters channel c's scale. PyTorch builds the scales by a running
    sum (channel c's = channel c-1's, plus the channel pre_pad - 1 ahead, minus the one pre_pad behind only
    when c > pre_pad), whose window is not centred like LocalResponseNorm's; the same recurrence on indicator
    rows gives the same windows."""
    pre_pad = int((size - 1) / 2 + 1)
    w = np.zeros((channels, channels))
    w[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        w[c] = w[c - 1]
        if c < channels - pre_pad + 1:
            w[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            w[c, c - pre_pad] -= 1
    return w


class CrossMapLRN2d(Module):
    r"""Local response normalisation across the channels of a 4-D input, with PyTorch's (legacy) windows:

    forward: out[:, c] = x[:, c] (k + alpha / size \sum_j w[c, j] x[:, j]^2)^{-beta}   (w: _cross_map_window)
    VJP:     that of the composition
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        x = _tensor(self, input)
        if x.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: expected a 4D input (N, C, H, W), got {x.ndim}D")
        w = Tensor._make(_cross_map_window(x.shape[1], self.size).T.astype(x._array.dtype))
        sums = ((x * x).movedim(1, -1) @ w).movedim(-1, 1)
        return x * (sums * (self.alpha / self.size) + self.k) ** -self.beta

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs (see BatchNorm1d)."""

    _dims = (5,)


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or unbatched (C, D, H, W) inputs (see InstanceNorm1d)."""

    _dims = (4, 5)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_margin_loss(_tensor(self, input), _tensor(self, target, "target"), reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function: Callable[[Tensor, Tensor], Tensor] | None = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, got {margin}")
        # the default is a PairwiseDistance child, as PyTorch's (it shows in the repr)
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                 margin=self.margin, swap=self.swap, reduction=self.reduction)


class EmbeddingBag(Module):
    """A table of `num_embeddings` rows (N(0, 1) at first) whose forward is embedding_bag; the row at
    padding_idx starts at zero."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Tensor | None = None, include_last_offset: bool = False, padding_idx: int | None = None,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("EmbeddingBag: padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = _empty((num_embeddings, embedding_dim), dtype, device, "EmbeddingBag")
            self.reset_parameters()
        else:
            from .parameter import Parameter

            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._array[self.padding_idx] = 0

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                             self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


FUNCTIONS: list[str] = ["gumbel_softmax", "pdist", "dropout3d", "feature_alpha_dropout", "multilabel_margin_loss",
                        "triplet_margin_with_distance_loss", "embedding_bag"]
MODULES: list[str] = ["Buffer", "Container", "Softmax2d", "NLLLoss2d", "Dropout3d", "FeatureAlphaDropout",
                      "CrossMapLRN2d", "BatchNorm3d", "InstanceNorm3d", "MultiLabelMarginLoss",
                      "TripletMarginWithDistanceLoss", "EmbeddingBag"]
__all__ = MODULES
