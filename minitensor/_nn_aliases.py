"""The neural-network functions PyTorch also has in its top-level namespace (`torch.conv2d`,
`torch.dropout`, `torch.layer_norm`, `torch.kl_div` ...), as thin wrappers over
`minitensor.nn.functional`: no math of their own.

Why a module of its own, at the package level: these are the nn layer's functions, and the op
layer (`minitensor/ops/`) sits below nn and may not import it. `minitensor/__init__.py` imports
nn first, then this module, and binds its names; it also gives Tensor the two methods PyTorch has
among them (`x.hardshrink()`, `x.prelu(w)`), which `scripts/gen_api.py` declares in the stub
from TENSOR_METHODS.

Each keeps the signature of PyTorch's top-level function, which is its C++ op's and sometimes not
`torch.nn.functional`'s: positional `train` for the dropouts (`torch.dropout(x, p, train)`), every
argument required in `batch_norm` / `instance_norm` / `poisson_nll_loss`, the losses' `reduction`
an integer (0 'none', 1 'mean', 2 'sum'; left out it is 0, as PyTorch 2.13's binding reads it,
though the C++ schema says mean), `embedding(weight, indices)` in that order, and the
`cudnn_enable(d)` flags accepted and ignored. The `x_` forms run the function and write its result
into x, recorded in the graph as any in-place op (`ops/inplace.py`).
"""
from __future__ import annotations

from typing import Any, Sequence, cast

import numpy as np

from .nn import (
    activation as A,
    conv as C,
    functional as F,
    loss as L,
    misc as M,
    normalization as N,
    pooling as P,
)
from .ops.inplace import inplace
from .random import Generator, _gen
from .tensor import Tensor

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
_ALPHA_PRIME = -1.7580993408473766  # -SELU's scale * alpha: where SELU saturates


def _reduction(reduction: int, op: str) -> str:
    """PyTorch's top-level losses take the reduction as its enum: 0 none, 1 mean, 2 sum."""
    if isinstance(reduction, bool) or reduction not in _REDUCTIONS:
        raise TypeError(f"{op}(): argument 'reduction' must be an int (0 'none', 1 'mean' or 2 'sum'), "
                        f"got {reduction!r}")
    return _REDUCTIONS[reduction]


# ---- convolutions and pooling ---------------------------------------------------------------------

def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    return C.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    return C.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
           padding: int | Sequence[int] | str = 0, dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    return C.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
                     padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    return C.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
                     padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    return C.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | Sequence[int] = 1,
                     padding: int | Sequence[int] = 0, output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    return C.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    return C.conv_tbc(input, weight, bias, pad)

def _stride(stride: Any) -> Any:
    return None if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else stride


def max_pool1d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = (),
               padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    """F.max_pool1d without return_indices (an empty stride means the kernel size, as in PyTorch)."""
    return cast(Tensor, P.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode))


def max_pool1d_with_indices(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = (),
                            padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """(values, indices) of F.max_pool1d."""
    return cast("tuple[Tensor, Tensor]", P.max_pool1d(input, kernel_size, _stride(stride), padding, dilation,
                                                      ceil_mode, return_indices=True))


def max_pool2d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = (),
               padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    return cast(Tensor, P.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode))


def max_pool3d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] = (),
               padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    return cast(Tensor, P.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode))

def avg_pool1d(input: Tensor, kernel_size: int | Sequence[int], stride: int | Sequence[int] | None = None,
               padding: int | Sequence[int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    return P.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    return P.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int]) -> tuple[Tensor, Tensor]:
    """(values, indices): PyTorch's top-level function always returns both."""
    return cast("tuple[Tensor, Tensor]", P.adaptive_max_pool1d(input, output_size, return_indices=True))


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    return M.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    return M.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return M.channel_shuffle(input, groups)


# ---- dropout: (input, p, train), every argument required ---------------------------------------------

def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return M.alpha_dropout(input, p, train)


def _channel_keep(input: Tensor, p: float, op: str) -> np.ndarray:
    """One keep/drop draw per (sample, channel) pair, shaped to broadcast over the rest of input."""
    if input.ndim < 2:
        raise RuntimeError(f"{op}: Feature dropout requires at least 2 dimensions in the input")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    keep = _gen().random(tuple(input.shape[:2])) >= p
    return keep.astype(input.dtype).reshape(tuple(input.shape[:2]) + (1,) * (input.ndim - 2))


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole channels (dim 1) of an input of 2 or more dims: out = x m / (1 - p), one m per channel."""
    if not train or p == 0.0:
        return input
    keep = _channel_keep(input, p, "feature_dropout")
    return input * 0.0 if p == 1.0 else input * Tensor._make(keep / (1.0 - p))


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """alpha_dropout with one draw per channel: out = a (x m + alpha' (1 - m)) + b, as F.alpha_dropout."""
    if not train or p == 0.0:
        return input
    keep = _channel_keep(input, p, "feature_alpha_dropout")
    if p == 1.0:
        return input * 0.0
    a = ((1 - p) * (1 + p * _ALPHA_PRIME ** 2)) ** -0.5
    b = -a * _ALPHA_PRIME * p
    return (input * Tensor._make(keep) + Tensor._make(_ALPHA_PRIME * (1 - keep))) * a + b


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return inplace(input, "dropout_", dropout, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return inplace(input, "alpha_dropout_", alpha_dropout, p, train)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return inplace(input, "feature_dropout_", feature_dropout, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return inplace(input, "feature_alpha_dropout_", feature_alpha_dropout, p, train)


# ---- normalization ---------------------------------------------------------------------------------

def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-05, cudnn_enabled: bool = True) -> Tensor:
    return N.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
               running_var: Tensor | None, training: bool, momentum: float, eps: float,
               cudnn_enabled: bool) -> Tensor:
    return N.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, running_mean: Tensor | None,
                  running_var: Tensor | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return N.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def rms_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    return N.rms_norm(input, normalized_shape, weight, eps)


# ---- embeddings, similarities, bilinear --------------------------------------------------------------

def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """F.embedding(indices, weight): the C++ op's order; a negative padding_idx means none (as in PyTorch)."""
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    return M.bilinear(input1, input2, weight, bias)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-08) -> Tensor:
    return F.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> Tensor:
    return L.pairwise_distance(x1, x2, p, eps, keepdim)


# ---- losses: reduction as PyTorch's integer enum --------------------------------------------------------

def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:
    """F.kl_div; reduction 1 is the plain mean over elements (no 'batchmean' at this level, as in PyTorch)."""
    return L.kl_div(input, target, reduction=_reduction(reduction, "kl_div"), log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None, reduction: int = 0) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(
        reduction, "binary_cross_entropy_with_logits"), pos_weight=pos_weight)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    return L.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction, "margin_ranking_loss"))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:
    return L.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction, "hinge_embedding_loss"))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 0) -> Tensor:
    return L.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction, "cosine_embedding_loss"))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-06, swap: bool = False, reduction: int = 0) -> Tensor:
    return L.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction, "triplet_margin_loss"))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return L.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss"))


# ---- activations ----------------------------------------------------------------------------------------

def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return A.celu(input, alpha)


def selu(input: Tensor) -> Tensor:
    return A.selu(input)


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3.0, training: bool = False,
          generator: Generator | None = None) -> Tensor:
    """F.rrelu (its slopes drawn from minitensor's default generator: a `generator` is not supported)."""
    if generator is not None:
        raise NotImplementedError("rrelu: a generator other than the default one is not supported by minitensor")
    return A.rrelu(input, lower, upper, training)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return A.threshold(input, threshold, value)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return A.hardshrink(input, lambd)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    return A.prelu(input, weight)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return inplace(input, "celu_", celu, alpha)


def selu_(input: Tensor) -> Tensor:
    return inplace(input, "selu_", selu)


def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3.0, training: bool = False,
           generator: Generator | None = None) -> Tensor:
    return inplace(input, "rrelu_", rrelu, lower, upper, training, generator)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return inplace(input, "threshold_", A.threshold, threshold, value)


# Tensor's methods among them (`x.hardshrink(0.3)`, `x.prelu(w)`): attached by minitensor/__init__.py,
# declared in the stub by scripts/gen_api.py
TENSOR_METHODS = {"hardshrink": hardshrink, "prelu": prelu}


def attach() -> None:
    for name, fn in TENSOR_METHODS.items():
        setattr(Tensor, name, fn)


