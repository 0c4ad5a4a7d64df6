r"""`minitensor.nn.functional`: the layer functions of PyTorch's `torch.nn.functional`.

Most are compositions of minitensor ops, so their gradients come from the ops' VJPs. Layer norm
is one op with a hand-derived VJP, because it runs in every transformer block and a composition
would record eight nodes for it.
"""
import numpy as np

from ..autograd import grad_mode
from ..autograd.function import Function
from ..ops.elementwise import gelu as _gelu, relu, sigmoid, tanh  # noqa: F401
from ..ops.indexing import where
from ..ops.softmax import log_softmax, softmax  # noqa: F401
from ..random import _gen
from ..tensor import Tensor


def linear(input, weight, bias=None):
    r"""y = x W^T + b, with W of shape (out_features, in_features) as in PyTorch."""
    if input.shape[-1] != weight.shape[-1]:
        raise RuntimeError(
            f"linear: input of shape {tuple(input.shape)} has {input.shape[-1]} features but the weight of "
            f"shape {tuple(weight.shape)} expects {weight.shape[-1]}"
        )
    out = input @ weight.mT if weight.ndim == 2 else input @ weight
    return out if bias is None else out + bias


def gelu(input, approximate="none"):
    return _gelu(input, approximate)


def silu(input):
    """x * sigmoid(x)"""
    return input * sigmoid(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + e^{beta x}) / beta, linear above `threshold` (as PyTorch)."""
    z = input * beta
    safe = where(z > threshold, 0.0, z)
    return where(z > threshold, input, (safe.exp() + 1).log() / beta)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (inverted dropout), in training only."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = _gen().random(input.shape) >= p
    return input * Tensor._make((keep / (1.0 - p)).astype(input.dtype))


class LayerNorm(Function):
    r"""out = (x - mu) / sqrt(var + eps) * w + b over the last `k` dims (var: population, two-pass)
    VJP, with xhat = (x - mu) * rstd, rstd = (var + eps)^{-1/2}, gxhat = g * w and means over those dims:
        gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))
        gw = sum over the other dims of g * xhat;   gb = sum over the other dims of g"""

    @staticmethod
    def forward(ctx, x, k, weight, bias, eps):
        dims = tuple(range(x.ndim - k, x.ndim))
        mu = np.mean(x.data, axis=dims, keepdims=True)
        d = x.data - mu
        rstd = 1.0 / np.sqrt(np.mean(d * d, axis=dims, keepdims=True) + eps)
        out = d * rstd
        ctx.xhat, ctx.rstd = out, rstd  # for the first-order backward below
        if weight is not None:
            out = out * weight.data
        if bias is not None:
            out = out + bias.data
        return out.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        x, k, weight, bias, eps = ctx.inputs
        dims = tuple(range(x.ndim - k, x.ndim))
        outer = tuple(range(x.ndim - k))
        if not grad_mode._enabled:  # first-order backward: the formulas above on the saved xhat, rstd
            return _layer_norm_vjp_numpy(ctx, g.data, dims, outer)
        d = x - x.mean(dim=dims, keepdim=True)
        rstd = ((d * d).mean(dim=dims, keepdim=True) + eps).rsqrt()
        xhat = d * rstd
        gxhat = g * weight if weight is not None else g
        gx = rstd * (gxhat - gxhat.mean(dim=dims, keepdim=True) - xhat * (gxhat * xhat).mean(dim=dims, keepdim=True))
        gw = (g * xhat).sum(dim=outer) if weight is not None and ctx.needs_input_grad[2] else None
        gb = g.sum(dim=outer) if bias is not None and ctx.needs_input_grad[3] else None
        if outer == ():
            gw = g * xhat if gw is not None else None
            gb = g if gb is not None else None
        return gx, None, gw, gb, None


def _layer_norm_vjp_numpy(ctx, g, dims, outer):
    x, _, weight, bias, _ = ctx.inputs
    xhat, rstd = ctx.xhat, ctx.rstd
    gxhat = g * weight.data if weight is not None else g
    gx = rstd * (gxhat - gxhat.mean(axis=dims, keepdims=True) - xhat * (gxhat * xhat).mean(axis=dims, keepdims=True))
    gw = (g * xhat).sum(axis=outer) if weight is not None and ctx.needs_input_grad[2] else None
    gb = g.sum(axis=outer) if bias is not None and ctx.needs_input_grad[3] else None
    wrap = Tensor._make
    return (wrap(gx.astype(x.dtype, copy=False)), None, None if gw is None else wrap(np.asarray(gw)),
            None if gb is None else wrap(np.asarray(gb)), None)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing `normalized_shape` dims to mean 0, variance 1, then scale and shift."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape or len(shape) > input.ndim:
        raise RuntimeError(
            f"layer_norm: normalized_shape {list(shape)} does not match the last dims of input of shape {tuple(input.shape)}"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(f"layer_norm: {name} of shape {tuple(p.shape)} should have shape {shape}")
    if input.dtype.kind != "f":
        raise RuntimeError(f"layer_norm: expected a floating point input, got {input.dtype}")
    return LayerNorm.apply(input, len(shape), weight, bias, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer `input`; repeated indices accumulate their gradient.

    The row at `padding_idx` is looked up but receives no gradient (as in PyTorch).
    """
    idx = input.data if isinstance(input, Tensor) else np.asarray(input)
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"embedding: indices must be an integer tensor, got {idx.dtype}")
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):  # as PyTorch: a negative index is an error, not a wrap
        bad = idx.max() if idx.max() >= n else idx.min()
        raise IndexError(f"embedding: index {int(bad)} is out of range for a table of {n} rows")
    out = weight[idx]
    if padding_idx is not None:
        pad = Tensor._make((idx == (padding_idx % n))[..., None])
        out = where(pad, out.detach(), out)
    return out


def one_hot(tensor, num_classes=-1):
    """int64 tensor with a trailing dim of size num_classes: 1 at each index, 0 elsewhere."""
    idx = tensor.data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"one_hot: expected an integer tensor, got {idx.dtype}")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1 if idx.size else 0
    if idx.size and (idx.min() < 0 or idx.max() >= num_classes):
        raise RuntimeError(f"one_hot: class values must be in [0, {num_classes}), got min {idx.min()} max {idx.max()}")
    return Tensor._make((idx[..., None] == np.arange(num_classes)).astype(np.int64))


def _reduce(loss, reduction, op, denom=None):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean() if denom is None else loss.sum() / denom
    raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _class_dim_last(input, op):
    """(N, C, d1, ...) -> (N*d1*..., C); a 1-D input is a single sample (C,)."""
    if input.ndim == 1:
        return input.unsqueeze(0), ()
    if input.ndim == 2:
        return input, (input.shape[0],)
    rest = (input.shape[0],) + tuple(input.shape[2:])
    return input.movedim(1, -1).reshape(-1, input.shape[1]), rest


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    r"""loss_i = -w[t_i] * input[i, t_i] for log-probabilities `input` (N, C) or (N, C, d1, ...).

    Targets equal to `ignore_index` contribute nothing; 'mean' divides by the summed weight of the
    targets that count. If every target is ignored, 'mean' returns 0 (PyTorch returns nan).
    """
    logp, rest = _class_dim_last(input, "nll_loss")
    t = (target.data if isinstance(target, Tensor) else np.asarray(target)).reshape(-1)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"nll_loss: expected integer class indices as target, got {t.dtype}")
    n, c = logp.shape
    if t.shape[0] != n:
        raise RuntimeError(f"nll_loss: expected target of shape {rest or (1,)} for input of shape {tuple(input.shape)}, got {tuple(np.shape(target.data if isinstance(target, Tensor) else target))}")
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"nll_loss: target {int(t[bad][0])} is out of bounds for {c} classes (ignore_index={ignore_index})")
    safe_t = np.where(keep, t, 0)
    w = np.ones(c) if weight is None else weight.data
    wt = Tensor._make((w[safe_t] * keep).astype(logp.dtype))
    picked = logp[np.arange(n), safe_t]
    loss = -(picked * wt)
    if reduction == "none":
        return loss.reshape(rest) if rest else loss.reshape(())
    total = float(wt.data.sum())
    return _reduce(loss, reduction, "nll_loss", denom=total if total > 0 else 1.0)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    r"""Cross-entropy from logits: nll_loss(log_softmax(input, dim=1), target), computed stably.

    `target` holds class indices (N,) / (N, d1, ...), or class probabilities of input's shape.
    With label_smoothing eps the target becomes (1 - eps) one_hot + eps / C.
    """
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, dim=class_dim)
    c = input.shape[class_dim]
    if isinstance(target, Tensor) and target.dtype.kind == "f":  # probabilities
        if target.shape != input.shape:
            raise RuntimeError(f"cross_entropy: probability target of shape {tuple(target.shape)} must match input {tuple(input.shape)}")
        q = target * (1 - label_smoothing) + label_smoothing / c
        wshape = [1] * input.ndim
        wshape[class_dim] = c
        terms = logp * q if weight is None else logp * q * weight.reshape(wshape)
        loss = -terms.sum(dim=class_dim)
        return _reduce(loss, reduction, "cross_entropy")
    try:
        nll = nll_loss(logp, target, weight, ignore_index, reduction)
    except (RuntimeError, IndexError) as e:  # the user called cross_entropy: name it, not the helper
        text = str(e)
        if not text.startswith("nll_loss:"):
            raise
        raise type(e)("cross_entropy:" + text[len("nll_loss:"):]) from None
    if label_smoothing == 0.0:
        return nll
    lp, rest = _class_dim_last(logp, "cross_entropy")
    t = (target.data if isinstance(target, Tensor) else np.asarray(target)).reshape(-1)
    keep = Tensor._make((t != ignore_index).astype(lp.dtype))
    w = None if weight is None else weight
    smooth = -((lp * w) if w is not None else lp).sum(dim=1) * keep
    if reduction == "none":
        smooth = smooth.reshape(rest) if rest else smooth.reshape(())
    elif reduction == "sum":
        smooth = smooth.sum()
    else:
        wt = np.ones(c) if weight is None else weight.data
        total = float((wt[np.where(t != ignore_index, t, 0)] * (t != ignore_index)).sum())
        smooth = smooth.sum() / (total if total > 0 else 1.0)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


def mse_loss(input, target, reduction="mean"):
    """Mean (or sum, or none) of the squared differences."""
    if isinstance(target, Tensor) and target.shape != input.shape:
        from ..ops._util import broadcast_shapes

        broadcast_shapes("mse_loss", input.shape, target.shape)
    d = input - target
    return _reduce(d * d, reduction, "mse_loss")


def l1_loss(input, target, reduction="mean"):
    return _reduce((input - target).abs(), reduction, "l1_loss")


def binary_cross_entropy_with_logits(input, target, reduction="mean"):
    """Stable BCE from logits: max(x, 0) - x t + log(1 + e^{-|x|})."""
    loss = input.relu() - input * target + ((-input.abs()).exp() + 1).log()
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


class Pad(Function):
    r"""out = x with `value` added around it: pad = (left_last, right_last, left_2nd_last, ...)
    VJP: gx = the slice of g where x sits"""

    @staticmethod
    def forward(ctx, x, widths, value):
        return np.pad(x.data, widths, mode="constant", constant_values=value)

    @staticmethod
    def backward(ctx, g):
        x, widths, _ = ctx.inputs
        return g[tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, x.shape))], None, None


def pad(input, pad, mode="constant", value=0.0):
    """Constant padding of the last len(pad)//2 dims, PyTorch's order (last dim first)."""
    if mode != "constant":
        raise NotImplementedError(f"pad: only mode='constant' is implemented, got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError(f"pad: padding length {len(pad)} must be even and at most 2 * {input.ndim} dims")
    if any(p < 0 for p in pad):
        raise NotImplementedError(f"pad: negative padding (cropping) is not supported, got {tuple(pad)}")
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        widths[input.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return Pad.apply(input, tuple(widths), value)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    return input / input.norm(p, dim=dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    num = (x1 * x2).sum(dim=dim)
    return num / (x1.norm(dim=dim) * x2.norm(dim=dim)).clamp(min=eps)


__all__ = [
    "linear", "relu", "gelu", "sigmoid", "tanh", "silu", "softplus", "softmax", "log_softmax", "dropout",
    "layer_norm", "embedding", "one_hot", "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "pad",
    "binary_cross_entropy_with_logits", "normalize", "cosine_similarity",
]
