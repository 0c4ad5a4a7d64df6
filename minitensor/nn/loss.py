r"""The losses of PyTorch's `torch.nn` beyond cross-entropy and MSE: each a function (re-exported by
`minitensor.nn.functional`) and a Module with PyTorch's arguments and defaults.

All but binary cross-entropy are compositions of minitensor ops, so their gradients come from the
ops' VJPs; each docstring states the forward formula and the VJP that composition yields.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._fperr import quietly
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..ops._util import broadcast_shapes, float_arg, float_kernel, tensor_input
from ..ops.arithmetic import minimum
from ..ops.indexing import where
from ..tensor import Tensor
from .functional import (  # (_legacy_reduction: PyTorch's deprecated size_average / reduce, as a reduction)
    _legacy_reduction,
    _reduce,
    binary_cross_entropy_with_logits,
    cosine_similarity,
    l1_loss,
    softplus,
)
from .layers import _Loss as _Loss, _tensor, _WeightedLoss as _WeightedLoss  # (the bases, kept importable here)
from .module import Module


def _same_shape_or_broadcast(op, input, target):
    """PyTorch broadcasts a target of another shape (with a warning): the shapes must broadcast."""
    if target.shape != input.shape:
        broadcast_shapes(op, input.shape, target.shape)


def _log_sigmoid(x):
    return -softplus(-x)


# ---- binary cross-entropy on probabilities --------------------------------------------------------
class BinaryCrossEntropy(Function):
    r"""out = -(t log x + (1 - t) log(1 - x)),  each log clamped below at -100 (so x = 0 or 1 is finite)
    VJP: gx = g (x - t) / max(x (1 - x), 1e-12);   gt = g (log(1 - x) - log(x))"""

    @staticmethod
    @quietly("divide", "invalid")  # log 0 = -inf before the clamp
    def forward(ctx, x, t):
        xd, td = x._array, t._array
        return -(td * np.maximum(np.log(xd), -100) + (1 - td) * np.maximum(np.log1p(-xd), -100))

    @staticmethod
    def backward(ctx, g):
        x, t = ctx.inputs
        needs = ctx.needs_input_grad
        gx = g * (x - t) / (x * (1 - x)).clamp(min=1e-12) if needs[0] else None
        gt = g * ((1 - x).log() - x.log()) if needs[1] else None
        return gx, gt


@with_formulas(BinaryCrossEntropy)
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Binary cross-entropy between probabilities `input` (in [0, 1]) and targets of its shape, each
    element scaled by `weight` (broadcast to the input), then reduced. From logits,
    `binary_cross_entropy_with_logits` is the stable way."""
    op = "binary_cross_entropy"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"{op}: using a target size ({tuple(target.shape)}) that is different to the input size "
                         f"({tuple(input.shape)}) is not supported; make them the same size")
    for name, t in (("input", input), ("target", target)):
        a = t._array
        if _dtype.kind(a.dtype) != "f":
            raise RuntimeError(f"{op}: expected a floating point {name}, got {a.dtype}")
        if a.size and not ((a >= 0) & (a <= 1)).all():
            raise RuntimeError(f"{op}: all elements of {name} should be between 0 and 1")
    if target.dtype != input.dtype:  # (PyTorch's kernel reads both in one dtype)
        raise RuntimeError(f"Found dtype {_dtype.scalar_name(target.dtype)} but expected "
                           f"{_dtype.scalar_name(input.dtype)}")
    if weight is not None and broadcast_shapes(op, weight.shape, input.shape) != input.shape:
        raise RuntimeError(f"{op}: weight of shape {tuple(weight.shape)} doesn't broadcast to the input's shape "
                           f"{tuple(input.shape)}")
    loss = BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * (weight if weight.dtype == loss.dtype else weight.to(loss.dtype))  # (the loss keeps its dtype)
    return shown_as(_reduce(loss, reduction, op), "BinaryCrossEntropyBackward0", inputs=(input, target))


# ---- divergences and regression losses ------------------------------------------------------------
def _xlogx(t):
    """t log t, 0 at t = 0 (PyTorch's xlogy(t, t))."""
    zero = t == 0
    return where(zero, 0.0, t * where(zero, 1.0, t).log())


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    r"""KL(target || q) pointwise, with `input` = log q (log-probabilities) and `target` = p (or log p
    with log_target=True). reduction='batchmean' divides the sum by the batch size input.shape[0] (the
    true KL divergence per sample); 'mean' divides by the number of elements, as PyTorch.

    forward: loss = p (log p - x)  (0 where p = 0),  or e^{t} (t - x) with log_target;  then reduced
    VJP:     gx = -p r  (-e^{t} r);  gp = (log p + 1 - x) r  (gt = e^{t} (t - x + 1) r);
             r = g, g / n ('mean', n elements) or g / N ('batchmean')
    """
    op = "kl_div"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"{op}: reduction must be 'mean', 'batchmean', 'sum' or 'none', got {reduction!r}")
    _same_shape_or_broadcast(op, input, target)
    if _dtype.kind(input.dtype) != "f":  # (PyTorch's kl_div checks this itself: RuntimeError)
        raise RuntimeError(f"{op}: integral inputs are not supported, got {input.dtype}")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogx(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction, op)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    r"""Squared below |x - y| = beta, absolute above; beta = 0 is the L1 loss.

    forward: loss = 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta;  d = x - y;  then reduced
    VJP:     gx = (d / beta where |d| < beta, else sign(d)) r;  gy = -gx;  r = g / n ('mean') or g
    """
    op = "smooth_l1_loss"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError(f"{op}: beta must be non-negative, got {beta}")
    _same_shape_or_broadcast(op, input, target)
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    input, target = _smooth_l1_operands(op, input, target)
    d = input - target
    a = d.abs()
    loss = where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)
    return shown_as(_reduce(loss, reduction, op), "SmoothL1LossBackward0", inputs=(input, target))


def _smooth_l1_operands(op, input, target):
    """input and target in their promoted dtype, as PyTorch's kernel computes (a bool one beside floats
    is 0s and 1s); that kernel has floats only: two integer or bool operands are its NotImplementedError."""
    want = _dtype.result_dtype(input._array, target._array)
    if want.kind in "biu":
        raise NotImplementedError(f"{op}: not implemented for dtype {_dtype.public(want)} (input {input.dtype}, "
                                  f"target {target.dtype}); it needs a floating point input or target")
    return input.to(_dtype.public(want)), target.to(_dtype.public(want))


def _into_input_dtype(op, input, target):
    """PyTorch computes these losses into a tensor of the input's dtype: an integer or bool input is refused,
    with its kernel's NotImplementedError when the target is one too, else the float result not castable."""
    if input._array.dtype.kind in "biu":
        if target._array.dtype.kind in "biu" and op == "huber_loss":
            raise NotImplementedError(f"{op}: not implemented for dtype {input.dtype}")
        raise RuntimeError(f"{op}: result type {target.dtype} can't be cast to the input's dtype {input.dtype}")


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    r"""Squared below |x - y| = delta, linear (slope delta) above: smooth_l1_loss * delta with beta = delta.

    forward: loss = w (0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta));  d = x - y;  then reduced
    VJP:     gx = w (d where |d| < delta, else delta sign(d)) r;  gy = -gx;  r = g / n ('mean') or g
    """
    op = "huber_loss"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    if delta <= 0:
        raise RuntimeError(f"{op}: delta must be positive, got {delta}")
    _same_shape_or_broadcast(op, input, target)
    _into_input_dtype(op, input, target)
    d = input - target
    a = d.abs()
    loss = where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))
    if loss.dtype != input.dtype:  # (a float64 target: computed in float64, kept in the input's float32, as PyTorch)
        loss = loss.to(input.dtype)
    if weight is not None:
        if weight.shape != input.shape:
            raise ValueError(f"{op}: weight of shape {tuple(weight.shape)} and input of shape "
                             f"{tuple(input.shape)} must have the same size")
        loss = loss * weight
    return shown_as(_reduce(loss, reduction, op), "HuberLossBackward0")


def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    r"""Logistic loss for targets y in {-1, 1}: log(1 + e^{-y x}).

    forward: loss = log(1 + e^{-y x}) (softplus(-y x)),  then reduced
    VJP:     gx = -y sigmoid(-y x) r;  gy = -x sigmoid(-y x) r;  r = g / n ('mean') or g
    """
    op = "soft_margin_loss"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    _same_shape_or_broadcast(op, input, target)
    if broadcast_shapes(op, input.shape, target.shape) != tuple(input.shape):  # (PyTorch writes into input's shape)
        raise RuntimeError(f"{op}: output with shape {list(input.shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(op, input.shape, target.shape))}")
    _into_input_dtype(op, input, target)
    # (PyTorch writes y x into a tensor of the input's dtype before the softplus: a float64 target's product
    # is rounded to a float32 input's dtype there)
    return _reduce(softplus((-target * input).to(input.dtype)), _legacy_reduction(size_average, reduce, reduction), op)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:
    r"""Negative log-likelihood of `target` counts under Poisson(rate), rate = e^x (log_input) or x.
    full=True adds Stirling's approximation of log(y!) where y > 1 (a constant in x).

    forward: loss = e^x - y x (log_input),  or x - y log(x + eps);  (+ y log y - y + 0.5 log(2 pi y) where y > 1)
    VJP:     gx = (e^x - y) r,  or (1 - y / (x + eps)) r;  r = g / n ('mean') or g
    """
    eps = float_arg(eps, "poisson_nll_loss", "eps")  # (its type first, as PyTorch's parser)
    op = "poisson_nll_loss"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction")
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        big = target > 1
        safe = where(big, target, 2.0)  # Stirling's term only where y > 1; the safe value keeps log finite
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(big, stirling, 0.0)
    return _reduce(loss, reduction, op)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    r"""Negative log-likelihood of `target` under N(input, var). `var` has input's shape, or one dim
    fewer (one variance per row), or a last dim of 1; it is clamped below at eps in value only (the
    gradient passes as if unclamped, as PyTorch clamps it in place without recording).

    forward: loss = 0.5 (log v + (x - y)^2 / v)  (+ 0.5 log(2 pi) with full),  v = max(var, eps);  then reduced
    VJP:     gx = (x - y) / v r;  gy = -gx;  gvar = 0.5 (1 / v - (x - y)^2 / v^2) r;  r = g / n ('mean') or g
    """
    op = "gaussian_nll_loss"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    if not isinstance(var, Tensor):
        if var < 0:
            raise ValueError(f"{op}: var has negative entry/entries")
        var = input.new_full(tuple(input.shape), float(var))
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError(f"{op}: var of shape {tuple(var.shape)} is of incorrect size for input of shape "
                             f"{tuple(input.shape)}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction")
    if (var._array < 0).any():
        raise ValueError(f"{op}: var has negative entry/entries")
    v = var + (var.detach().clamp(min=eps) - var.detach())  # the clamped value, the unclamped gradient
    d = input - target
    loss = 0.5 * (v.log() + d * d / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, op)


# ---- margin and embedding losses ---------------------------------------------------------------
def _same_ndim(op, *tensors):
    if len({t.ndim for t in tensors}) != 1:
        raise RuntimeError(f"{op}: all input tensors should have the same number of dims, got shapes "
                           f"{', '.join(str(tuple(t.shape)) for t in tensors)}")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    r"""Ranking loss: y = 1 asks x1 to rank above x2 by `margin`, y = -1 below.

    forward: loss = max(0, -y (x1 - x2) + margin),  then reduced
    VJP:     gx1 = -y [loss > 0] r  (also at loss = 0 exactly, as clamp_min);  gx2 = -gx1;  r = g / n ('mean') or g
    """
    op = "margin_ranking_loss"
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        tensor_input(t, op, name)
    _same_ndim(op, input1, input2, target)
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), op)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    r"""For distances x and labels y in {1, -1}: x where y = 1, max(0, margin - x) where y = -1.

    forward: loss = [y != -1] x + [y != 1] max(0, margin - x),  then reduced
    VJP:     gx = ([y != -1] - [y != 1] [margin - x >= 0]) r;  r = g / n ('mean') or g
    """
    op = "hinge_embedding_loss"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    if input.dtype.kind in "iu":  # PyTorch computes in the input's integers, the margin truncated to one
        margin = int(margin)
    far = where(target != 1, (margin - input).clamp(min=0), 0)  # (an int 0 keeps the input's dtype)
    near = where(target != -1, input, 0)
    return _reduce(far + near, _legacy_reduction(size_average, reduce, reduction), op)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    r"""y = 1 pulls the rows of x1 and x2 to cosine 1; y = -1 pushes their cosine below `margin`.
    The cosine is computed as PyTorch does: x1 . x2 / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12)).

    forward: loss = 1 - cos where y = 1,  max(0, cos - margin) where y = -1 (0 elsewhere),  then reduced
    VJP:     gcos = (-[y = 1] + [y = -1][cos - margin >= 0]) r,  then through cos = s / sqrt(m1 m2):
             gx1 = gcos (x2 - s x1 / m1) / sqrt(m1 m2);  gx2 likewise;  r = g / N ('mean') or g
    """
    op = "cosine_embedding_loss"
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        tensor_input(t, op, name)
    if input1.ndim != input2.ndim or input1.ndim not in (1, 2):
        raise RuntimeError(f"{op}: input1 and input2 must have the same number of dims, 1 or 2, got shapes "
                           f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    if target.ndim != input1.ndim - 1:
        raise RuntimeError(f"{op}: target of shape {tuple(target.shape)} should have {input1.ndim - 1} dim(s) for "
                           f"inputs of shape {tuple(input1.shape)}")
    dim = input1.ndim - 1
    s = (input1 * input2).sum(dim=dim)
    m1 = (input1 * input1).sum(dim=dim) + 1e-12
    m2 = (input2 * input2).sum(dim=dim) + 1e-12
    cos = s / (m1 * m2).sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp(min=0), 0.0)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), op)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    r"""The p-norm of x1 - x2 + eps along the last dim (of the two broadcast together).

    forward: out = ||x1 - x2 + eps||_p  over the last dim
    VJP:     gx1 = g |d|^{p-1} sign(d) / out^{p-1},  d = x1 - x2 + eps;  gx2 = -gx1
    """
    op = "pairwise_distance"
    tensor_input(x1, op, "x1"), tensor_input(x2, op, "x2")
    broadcast_shapes(op, x1.shape, x2.shape)
    dim = max(x1.ndim, x2.ndim) - 1
    d = x1 - x2 + eps
    if dim < 0:  # two 0-d tensors: the distance of two numbers
        return shown_as(d.abs(), "NormBackward1")
    return shown_as(d.norm(p, dim=dim, keepdim=keepdim), "NormBackward1")  # (PyTorch's torch.norm over a dim)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    r"""Pull `anchor` towards `positive` and push it from `negative` until they differ by `margin`;
    swap=True measures the negative's distance from the nearer of anchor and positive.

    forward: loss = max(0, margin + d(a, p) - d(a, n)),  d = pairwise_distance,  then reduced
    VJP:     through the max (gradient where its argument >= 0) and each distance's VJP;  r = g / N ('mean') or g
    """
    op = "triplet_margin_loss"
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        tensor_input(t, op, name)
    _same_ndim(op, anchor, positive, negative)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = (margin + d_pos - d_neg).clamp(min=0)
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), op)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    r"""Per-class logistic loss for multi-label targets y in {0, 1}, averaged over the C classes.

    forward: loss_i = -(1/C) \sum_c w_c (y_ic log sigmoid(x_ic) + (1 - y_ic) log sigmoid(-x_ic)),  then reduced
    VJP:     gx_ic = w_c (sigmoid(x_ic) - y_ic) r_i / C;  r = g / N ('mean') or g
    """
    op = "multilabel_soft_margin_loss"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    _same_shape_or_broadcast(op, input, target)
    float_kernel(input, op)  # (PyTorch's log_sigmoid kernel: floating dtypes only)
    loss = -(target * _log_sigmoid(input) + (1 - target) * _log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    c = input.shape[-1] if input.ndim else 1
    loss = loss.sum(dim=input.ndim - 1) / c if input.ndim else loss
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), op)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    r"""Multi-class hinge loss: every wrong class j should score `margin` below the target class y.

    forward: loss_i = (1/C) \sum_{j != y_i} w_{y_i} max(0, margin - x_{i y_i} + x_ij)^p   (p = 1 or 2),  then reduced
    VJP:     with h_ij = margin - x_{i y_i} + x_ij > 0:  gx_ij = w_{y_i} p h_ij^{p-1} r_i / C  (j != y_i),
             gx_{i y_i} = -\sum_{j != y_i} gx_ij;  r = g / N ('mean') or g
    """
    op = "multi_margin_loss"
    input, target = tensor_input(input, op), tensor_input(target, op, "target")
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported, got p={p}")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise RuntimeError(f"{op}: expected a non-empty 1-D or 2-D input, got shape {tuple(input.shape)}")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    n, c = x.shape
    t = target._array.reshape(-1)
    if t.dtype.kind not in "iu" or t.shape != (n,):
        raise RuntimeError(f"{op}: target must hold {n} integer class indices, got {target.dtype} of shape "
                           f"{tuple(target.shape)}")
    if t.size and (t.min() < 0 or t.max() >= c):
        raise IndexError(f"{op}: target index out of range for {c} classes")
    if weight is not None and weight.ndim != 1:
        raise ValueError(f"{op}: weight must be one-dimensional, got shape {tuple(weight.shape)}")
    x_y = x[np.arange(n), t].unsqueeze(1)
    h = (margin - x_y + x).clamp(min=0)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[t].unsqueeze(1)
    own = Tensor._make(t[:, None] == np.arange(c))
    loss = where(own, 0.0, h).sum(dim=1) / c
    if input.ndim == 1:
        loss = loss.reshape(())
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction), op)


# ---- the Modules -------------------------------------------------------------------------------
class L1Loss(_Loss):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(_tensor(self, input), _tensor(self, target, "target"), reduction=self.reduction)


class BCELoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(_tensor(self, input), _tensor(self, target, "target"), self.weight,
                                    reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    weight: Tensor | None
    pos_weight: Tensor | None

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(_tensor(self, input), _tensor(self, target, "target"), self.weight,
                                                reduction=self.reduction, pos_weight=self.pos_weight)


class KLDivLoss(_Loss):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(_tensor(self, input), _tensor(self, target, "target"), reduction=self.reduction,
                      log_target=self.log_target)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(_tensor(self, input), _tensor(self, target, "target"), reduction=self.reduction,
                              beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(_tensor(self, input), _tensor(self, target, "target"), self.reduction, self.delta)


class SoftMarginLoss(_Loss):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return soft_margin_loss(_tensor(self, input), _tensor(self, target, "target"), reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input: bool = True, full: bool = False, size_average: bool | None = None,
                 eps: float = 1e-8, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return poisson_nll_loss(_tensor(self, log_input), _tensor(self, target, "target"), self.log_input,
                                self.full, eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return gaussian_nll_loss(_tensor(self, input), _tensor(self, target, "target"), var, self.full, self.eps,
                                 self.reduction)


class MarginRankingLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    def __init__(self, margin: float = 1.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return hinge_embedding_loss(_tensor(self, input), _tensor(self, target, "target"), self.margin,
                                    reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: margin must be greater than 0, got {margin}")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                   reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_soft_margin_loss(_tensor(self, input), _tensor(self, target, "target"), self.weight,
                                           reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got p={p}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be one-dimensional, got shape {tuple(weight.shape)}")
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multi_margin_loss(_tensor(self, input), _tensor(self, target, "target"), self.p, self.margin,
                                 self.weight, reduction=self.reduction)


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(_tensor(self, x1, "x1"), _tensor(self, x2, "x2"), self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(_tensor(self, x1, "x1"), _tensor(self, x2, "x2"), self.norm, self.eps, self.keepdim)


FUNCTIONS: list[str] = [
    "binary_cross_entropy", "kl_div", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss", "pairwise_distance",
    "triplet_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
]
MODULES: list[str] = [
    "L1Loss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
    "PoissonNLLLoss", "GaussianNLLLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss",
    "TripletMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "CosineSimilarity", "PairwiseDistance",
]
__all__ = MODULES  # what `from .loss import *` gives minitensor.nn; the functions are re-exported by functional
