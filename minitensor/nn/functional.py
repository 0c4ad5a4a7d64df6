r"""`minitensor.nn.functional`: the layer functions of PyTorch's `torch.nn.functional`.

Most are compositions of minitensor ops, so their gradients come from the ops' VJPs. Four run
at every step of a transformer and are one op each, with a hand-derived VJP in Tensor ops (so it
can be differentiated again). They are `Gelu` (in ops/unary.py), `LayerNorm` (a composition
would record eight nodes), `Linear` (x W^T + b as one matrix product) and `CrossEntropy`
(log-softmax, pick, weigh and reduce). The speed layer (minitensor/fast) registers numpy twins of
some of them onto the op from above; what is here is the whole math.
tests/minitensor/nn/test_fused_ops.py checks each against its composition of primitive ops.
Each op's docstring states only its math (`autograd.explain` prints it for the learner); how it
is computed is said in comments.
"""
from __future__ import annotations

import math
import warnings
from typing import Sequence

import numpy as np

from .. import _dtype
from .._fperr import quietly
from ..autograd import grad_mode
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..ops._half import computed_in_float32_for_half
from ..ops._util import broadcast_shapes, finite_max, float_arg, float_kernel, int_arg, tensor_input, unbroadcast
from ..ops.indexing import where
from ..ops.inplace import inplace as _write_in_place
from ..ops.softmax import functional_log_softmax as log_softmax, functional_softmax as softmax  # noqa: F401
from ..ops.unary import Gelu, Relu, gelu as _gelu, relu as _relu, sigmoid, tanh  # noqa: F401
from ..random import kept_mask
from ..tensor import Tensor


class Linear(Function):
    r"""out = x W^T + b:  out[..., o] = \sum_i x[..., i] W[o, i] + b[o]   (x (..., in), W (out, in), b (out,) or None)
    VJP: gx = g W;   gW[o, i] = \sum over every leading dim of g[..., o] x[..., i];
         gb = unbroadcast(g, b.shape) = \sum over every leading dim of g"""

    @staticmethod
    @quietly("over", "invalid")  # inf * 0 and overflow in the sums: NaN and inf, silently as in PyTorch
    def forward(ctx, x, weight, bias):
        xd, w = x._array, weight._array
        # x flattened to rows x2 (R, in): one GEMM however many leading dims x has, then b added in place
        rows = math.prod(xd.shape[:-1])  # R written out: a -1 can't be inferred with 0 features
        out = xd.reshape(rows, w.shape[1]) @ w.T  # (R, out)
        if bias is not None:
            out += bias._array
        return out.reshape(xd.shape[:-1] + w.shape[:1])

    @staticmethod
    def backward(ctx, g):
        x, weight, bias = ctx.inputs
        needs = ctx.needs_input_grad
        rows = math.prod(x.shape[:-1])
        g2 = g.reshape(rows, weight.shape[0])
        gx = (g @ weight) if needs[0] else None
        gw = g2.mT @ x.reshape(rows, weight.shape[1]) if needs[1] else None
        gb = unbroadcast(g, bias.shape) if bias is not None and needs[2] else None
        return gx, gw, gb


@with_formulas(Linear)
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""y = x W^T + b, with W of shape (out_features, in_features) as in PyTorch (one `Linear` op)."""
    tensor_input(input, "linear")
    tensor_input(weight, "linear", "weight")
    if bias is not None:
        tensor_input(bias, "linear", "bias")
    x, w = input._array, weight._array  # the arrays' shapes and dtypes: a Tensor's .shape makes a Size
    if x.ndim == 0 or w.ndim == 0:
        raise RuntimeError(f"linear: input and weight must have at least 1 dim, got shapes {x.shape} and {w.shape}")
    if x.shape[-1] != w.shape[-1]:
        raise RuntimeError(
            f"linear: input of shape {x.shape} has {x.shape[-1]} features but the weight of "
            f"shape {w.shape} expects {w.shape[-1]}"
        )
    dtype = x.dtype
    dtypes = [t._array.dtype for t in (input, weight, bias) if t is not None]
    if any(d != dtype for d in dtypes):  # as PyTorch: no promotion inside a layer, a mix is usually a bug
        raise RuntimeError(f"linear: input, weight and bias must have the same dtype, got "
                           f"{', '.join(str(d) for d in dtypes)}; convert with .to(dtype)")
    if w.ndim == 2 and _dtype.kind(dtype) == "f" and (bias is None or bias._array.shape == w.shape[:1]):
        return Linear.apply(input, weight, bias)
    # a 1-D weight, integer dtypes or a broadcasting bias: the general ops
    out = input @ weight.mT if weight.ndim == 2 else input @ weight
    return out if bias is None else out + bias


@with_formulas(Gelu)
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """GELU(x) = x * Phi(x); approximate='tanh' uses the tanh formula (GPT-2's)."""
    return _gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (a Sigmoid node and a Mul); inplace=True writes it into input (recorded in the graph).

    forward: out = x s,  s = sigmoid(x) = 1 / (1 + e^-x)
    VJP:     gx = g * (s + x s (1 - s))
    """
    float_kernel(tensor_input(input, "silu"), "silu")  # (no integer kernel in PyTorch)
    if inplace:
        return _write_in_place(input, "silu", silu)
    return shown_as(input * sigmoid(input), "SiluBackward0", inputs=(input,))


@with_formulas(Relu)
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0), the op `minitensor.relu` (one ReLU node); inplace=True is `relu_(input)`."""
    return _write_in_place(tensor_input(input, "relu"), "relu", _relu) if inplace else _relu(input)


@computed_in_float32_for_half  # e^12 overflows float16
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: F811
    """log(1 + e^{beta x}) / beta, linear above `threshold` (as PyTorch).

    forward: out = log(1 + e^{beta x}) / beta,  and x where beta x > threshold
    VJP:     gx = g * sigmoid(beta x),  and g where beta x > threshold
    """
    float_kernel(tensor_input(input, "softplus"), "softplus")  # (no integer kernel in PyTorch)
    z = input * beta
    safe = where(z > threshold, 0.0, z)
    out = where(z > threshold, input, safe.exp().log1p() / beta)  # log1p: e^-12 + 1 would lose its digits
    return shown_as(out, "SoftplusBackward0", inputs=(input,))


class Dropout(Function):
    r"""out = x * m / (1 - p),  m_i = 1 with probability 1 - p, else 0   (a fresh mask m at every call)
    VJP: gx = g * m / (1 - p)   (the same mask: a dropped element passes no gradient)"""

    @staticmethod
    def forward(ctx, x, p):
        keep = kept_mask(x.shape, p)  # drawn here, in the op, so each call (and a replay) draws anew
        # m / (1 - p) in x's dtype: the scale rounded once, as a float64 division then a cast would round it
        ctx.scaled_mask = np.multiply(keep, x._array.dtype.type(1.0 / (1.0 - p)))
        return x._array * ctx.scaled_mask

    @staticmethod
    def backward(ctx, g):
        return g * Tensor._make(ctx.scaled_mask), None


@with_formulas(Dropout)
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (inverted dropout), in
    training only (outside training, and for p = 0, the input itself)."""
    tensor_input(input, "dropout")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if _dtype.kind(input.dtype) != "f":  # the kept elements are scaled by 1/(1-p): PyTorch can't write that back
        raise RuntimeError(f"dropout: result type Float can't be cast to the input's dtype {input.dtype}")
    if p == 1.0:
        return input * 0.0
    return Dropout.apply(input, float(p))


class LayerNorm(Function):
    r"""out = (x - mu) / sqrt(var + eps) * w + b over the last `k` dims (mu, var: their mean and population variance)
    VJP: with xhat = (x - mu) * rstd, rstd = (var + eps)^{-1/2}, gxhat = g * w and means over those dims,
        gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))
        gw = sum over the other dims of g * xhat;   gb = sum over the other dims of g"""

    @staticmethod
    @quietly("over", "invalid")  # a row holding inf or NaN is NaN, silently as in PyTorch
    def forward(ctx, x, k, weight, bias, eps):
        xd = x._array
        dims = tuple(range(xd.ndim - k, xd.ndim))
        D = math.prod(xd.shape[xd.ndim - k:])
        mu = xd.sum(axis=dims, keepdims=True) / D  # (sum, then divide: a constant row of dyadic c gives c exactly)
        d = xd - mu
        var = (d * d).sum(axis=dims, keepdims=True) / D  # two passes: E[x^2] - mu^2 would cancel
        rstd = 1 / np.sqrt(var + float(eps))  # (a Python float: float32 stays float32)
        # a variance beyond the dtype (float32 deviations over ~1e19) makes its row NaN, as in PyTorch,
        # where 1 / sqrt(inf) = 0 would silently scale the row to zeros
        rstd[rstd == 0] = np.nan
        out = d * rstd  # xhat
        if weight is not None:
            out *= weight._array.astype(out.dtype, copy=False)
        if bias is not None:
            out += bias._array.astype(out.dtype, copy=False)
        return out

    @staticmethod
    def backward(ctx, g):
        x, k, weight, bias, eps = ctx.inputs
        dims = tuple(range(x.ndim - k, x.ndim))
        outer = tuple(range(x.ndim - k))
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


@with_formulas(LayerNorm)
@computed_in_float32_for_half
def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing `normalized_shape` dims to mean 0, variance 1, then scale and shift."""
    eps = float_arg(eps, "layer_norm", "eps")  # (its type first, as PyTorch's parser)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    x = tensor_input(input, "layer_norm")._array  # the array's shape: a Tensor's .shape makes a Size
    if x.shape[x.ndim - len(shape):] != shape or len(shape) > x.ndim:
        raise RuntimeError(
            f"layer_norm: normalized_shape {list(shape)} does not match the last dims of input of shape {x.shape}"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p._array.shape != shape:
            raise RuntimeError(f"layer_norm: {name} of shape {p._array.shape} should have shape {shape}")
    if _dtype.kind(x.dtype) != "f":
        raise NotImplementedError(f"layer_norm: expected a floating point input, got {input.dtype}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None:
            _same_dtype_as_input(p, input, "layer_norm", name)
    return LayerNorm.apply(input, len(shape), weight, bias, eps)


def _same_dtype_as_input(param, input, op, name):
    """PyTorch's layer_norm and cross_entropy kernels read a weight in the input's dtype and refuse any other
    (a bool or integer weight, or float64 with a float32 input) rather than promote."""
    if param._array.dtype != input._array.dtype:  # (numpy's dtypes: cheaper than the public ones, the same answer)
        raise RuntimeError(f"{op}: expected {name} to have the input's dtype {input.dtype}, got {param.dtype}")


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` picked by the integer `input`; repeated indices accumulate their gradient.

    The row at `padding_idx` is looked up but receives no gradient (as in PyTorch). With `max_norm`,
    each looked-up row of `weight` whose `norm_type`-norm exceeds it is first scaled in place, under
    no_grad, to norm max_norm: row *= max_norm / (norm + 1e-7), as PyTorch's embedding_renorm_.

    forward: out[..., :] = W[idx[...], :]   (an Index node: the rows idx names)
    VJP:     gW = zeros(W.shape) with each g[..., :] added to row idx[...]   (repeats add up; none to padding_idx)
    """
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq=True and sparse=True are not supported "
                                  "(minitensor has no sparse gradients); leave both False")
    idx = tensor_input(input, "embedding")._array
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"embedding: indices must be an integer tensor, got {idx.dtype}")
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):  # as PyTorch: a negative index is an error, not a wrap
        bad = idx.max() if idx.max() >= n else idx.min()
        raise IndexError(f"embedding: index {int(bad)} is out of range for a table of {n} rows")
    if max_norm is not None:
        _renorm_rows(weight, idx, float(max_norm), float(norm_type))
    out = weight[idx]
    if padding_idx is not None:
        pad = Tensor._make((idx == (padding_idx % n))[..., None])
        out = where(pad, out.detach(), out)
    return shown_as(out, "EmbeddingBackward0")


def _renorm_rows(weight, idx, max_norm, norm_type):
    """Scale, in place, each row of `weight` that `idx` reads and whose norm exceeds max_norm down to it."""
    rows = np.unique(idx)
    table = weight._array
    norms = np.linalg.norm(table[rows], ord=norm_type, axis=1)
    big = norms > max_norm
    rows = rows[big]
    # the 1e-7 keeps the scale finite for a zero norm, and leaves the new norm just under max_norm
    table[rows] *= (max_norm / (norms[big] + 1e-7)).astype(table.dtype)[:, None]
    weight._bump_version()  # an in-place op, as PyTorch's (changed or not): a graph that saved W must notice


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor with a trailing dim of size num_classes: 1 at each index, 0 elsewhere."""
    num_classes = int_arg(num_classes, "one_hot", "num_classes")
    idx = tensor_input(tensor, "one_hot")._array
    if idx.dtype != np.int64:  # PyTorch takes int64 indices only (a LongTensor)
        raise RuntimeError(f"one_hot: expected an int64 tensor of class indices, got {idx.dtype}")
    if not idx.size and num_classes <= 0:  # (0 too, as in PyTorch)
        raise RuntimeError("one_hot: can't infer the number of classes from an empty tensor; give num_classes > 0")
    if num_classes == -1:
        num_classes = int(idx.max()) + 1
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


def _class_target_shapes(input, target, op):
    """The checks of a class-index target against the input (N, C, d1, ...) or (C,), in PyTorch's order
    and classes: the input's dims and the batch sizes (ValueError), the target's shape and then its
    dtype (RuntimeError: int64 or uint8 indices, as PyTorch's kernels take)."""
    tensor_input(target, op, "target")
    if input.ndim < 1:
        raise ValueError(f"{op}: expected an input of 1 or more dimensions, got a 0-d tensor")
    tshape, ishape = tuple(target.shape), tuple(input.shape)
    if input.ndim == 1:
        if target.ndim > 1 or target.numel() != 1:
            raise ValueError(f"{op}: for a 1-d input (one sample of {ishape[0]} classes) the target must be 0-d or "
                             f"hold one class index, got shape {tshape}")
    elif target.ndim == 0 or tshape[0] != ishape[0]:
        raise ValueError(f"{op}: expected the input's batch size ({ishape[0]}, input of shape {ishape}) to match "
                         f"the target's ({tshape[0] if tshape else 0}, target of shape {tshape})")
    elif tshape != ishape[:1] + ishape[2:]:
        raise RuntimeError(f"{op}: expected a target of shape {ishape[:1] + ishape[2:]} for input of shape "
                           f"{ishape}, got {tshape}" + (" (multi-target is not supported)" if input.ndim == 2 else ""))
    if target._array.dtype not in (np.int64, np.uint8):
        hint = (f"; a float target holds class probabilities only with the input's shape {ishape}"
                if op == "cross_entropy" and _dtype.kind(target.dtype) == "f" else "")
        raise RuntimeError(f"{op}: expected target dtype to be int64 (class indices) or uint8, got {target.dtype}"
                           f"{hint} (target.long() makes indices int64)")


def _class_dim_last(input, op):
    """(N, C, d1, ...) -> (N*d1*..., C); a 1-D input is a single sample (C,)."""
    if input.ndim == 1:
        return input.unsqueeze(0), ()
    if input.ndim == 2:
        return input, (input.shape[0],)
    rest = (input.shape[0],) + tuple(input.shape[2:])
    return input.movedim(1, -1).reshape(-1, input.shape[1]), rest


def _class_targets(input, rows, rest, target, op):
    """The flat class-index target as an array (a view of the target's), checked against the (N, C) rows."""
    t = (target._array if isinstance(target, Tensor) else np.asarray(target)).reshape(-1)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: expected integer class indices as target, got {t.dtype}")
    n, c = rows.shape
    if t.shape[0] != n:
        raise RuntimeError(f"{op}: expected target of shape {rest or (1,)} for input of shape {tuple(input.shape)}, "
                           f"got {tuple(np.shape(target._array if isinstance(target, Tensor) else target))}")
    return t


def _kept_targets(t, c, ignore_index, op):
    """(keep, safe_t) for flat class indices t among c classes: keep = t != ignore_index, and t with
    ignored entries set to class 0 (so they can index); an index out of range is an error."""
    keep = t != ignore_index
    safe_t = np.where(keep, t, 0)
    # one reduction finds both kinds of bad index: a negative integer read as unsigned is above any class count
    if safe_t.size and safe_t.view(f"u{safe_t.itemsize}").max() >= c:
        bad = keep & ((t < 0) | (t >= c))
        raise IndexError(f"{op}: target {int(t[bad][0])} is out of bounds for {c} classes "
                         f"(ignore_index={ignore_index})")
    return keep, safe_t


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    r"""loss_i = -w[t_i] * input[i, t_i] for log-probabilities `input` (N, C) or (N, C, d1, ...).

    Targets equal to `ignore_index` contribute nothing; 'mean' divides by the summed weight of the
    targets that count. If every target is ignored, 'mean' returns 0 (PyTorch returns nan).

    forward: out = loss ('none'),  \sum_i loss_i ('sum'),  \sum_i loss_i / \sum_i w[t_i] ('mean')
    VJP:     ginput[i, t_i] = -w[t_i] r_i, 0 elsewhere;  r = g ('none', 'sum') or g / \sum_i w[t_i] ('mean')
    """
    ignore_index = int_arg(ignore_index, "nll_loss", "ignore_index")  # (its type first, as PyTorch's parser)
    tensor_input(input, "nll_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _class_target_shapes(input, target, "nll_loss")
    float_kernel(input, "nll_loss")
    logp, rest = _class_dim_last(input, "nll_loss")
    n, c = logp.shape
    keep, safe_t = _kept_targets(_class_targets(input, logp, rest, target, "nll_loss"), c, ignore_index, "nll_loss")
    w = np.ones(c) if weight is None else weight._array
    wt = Tensor._make((w[safe_t] * keep).astype(logp.dtype))
    # an ignored target's log-probability may be NaN or -inf; 0 * NaN would spread it into the loss
    picked = where(Tensor._make(keep), logp[np.arange(n), safe_t], 0.0)
    loss = -(picked * wt)
    if reduction == "none":
        return shown_as(loss.reshape(rest) if rest else loss.reshape(()), "NllLossBackward0", inputs=(input,))
    total = float(wt._array.sum())
    return shown_as(_reduce(loss, reduction, "nll_loss", denom=total if total > 0 else 1.0), "NllLossBackward0",
                    inputs=(input,))


class CrossEntropy(Function):
    r"""out = loss ('none'),  \sum_i loss_i ('sum'),  \sum_i loss_i / D ('mean'):  the cross-entropy of logits x (N, C)
        against class indices t (N,), with
        loss_i = keep_i ((1 - eps) w_{t_i} (-logp_{i,t_i}) + eps/C \sum_c w_c (-logp_{i,c})),
        logp_i = x_i - log \sum_c e^{x_{i,c}},
        keep_i = [t_i != ignore_index], w the class weights (1 without), eps the label smoothing,
        D = \sum_i keep_i w_{t_i} (1 if 0),   p = softmax(x) = e^{logp}
    VJP: gx_i = r_i keep_i (a_i p_i - q_i),  a_i = (1 - eps) w_{t_i} + eps/C \sum_c w_c,
         q_i = (1 - eps) w_{t_i} onehot(t_i) + eps/C w,   r = g ('none', 'sum') or g / D ('mean')
         (without weights a_i = 1 and q_i is the smoothed one-hot target: gx_i = r_i keep_i (p_i - q_i))"""

    @staticmethod
    @quietly("over", "invalid", "divide")  # a row of NaN, only -inf or holding +inf: NaN, silently as in PyTorch
    def forward(ctx, x, target, ignore_index, weight, reduction, eps):
        """x: the (N, C) logits; target: the flat class indices (N,) (a Tensor, read here so that a
        replayed step reads the new ones); weight: an array or None; the rest plain numbers."""
        xd = x._array
        n, c = xd.shape
        keep, t = _kept_targets(target._array, c, ignore_index, "cross_entropy")  # t: ignored rows at class 0
        # logp = z - log \sum_c e^{z_c}: with the row max subtracted no e^x overflows (a row holding +inf
        # becomes inf - inf = NaN, as PyTorch's log_softmax makes it)
        z = xd - finite_max(xd, -1, keep_posinf=True)
        e = np.exp(z)
        s = e.sum(axis=1)  # >= 1
        lse = np.log(s)  # a row of only -inf: log 0 = -inf (nan loss), as log_softmax
        flat = np.arange(0, n * c, c) + t  # the flat index of each row's target logit
        loss = lse - np.take(z.reshape(-1), flat)  # -logp at the target
        if weight is not None:
            loss *= weight[t].astype(xd.dtype, copy=False)
        if eps:
            w_sum = c if weight is None else float(weight.sum())
            smooth = lse * w_sum - (z.sum(axis=1) if weight is None else z @ weight.astype(xd.dtype))
            loss *= 1 - eps
            loss += smooth * (eps / c)  # \sum_c w_c (-logp_c) = W lse - \sum_c w_c z_c
        loss = np.where(keep, loss, 0)  # an ignored row counts for nothing, NaN logits included
        if reduction != "mean":
            total = 1.0
        elif weight is None:
            total = float(np.count_nonzero(keep))
        else:
            total = float((weight[t] * keep).astype(xd.dtype).sum())  # (summed as it always was: the same bits)
        ctx.t, ctx.keep, ctx.flat, ctx.denom = t, keep, flat, (total if total > 0 else 1.0)  # for the backward
        if reduction == "none":
            return loss
        return np.asarray(loss.sum() if reduction == "sum" else loss.sum() / ctx.denom)

    @staticmethod
    def backward(ctx, g):
        x, reduction = ctx.inputs[0], ctx.inputs[4]
        a, q, r = CrossEntropy.vjp_terms(ctx)
        p = softmax(x, dim=1)
        ap = p if a is None else p * Tensor._make(a)
        rg = (g.reshape(x.shape[0], 1) if reduction == "none" else g) * Tensor._make(r)
        return rg * (ap - Tensor._make(q)), None, None, None, None, None

    @staticmethod
    def vjp_terms(ctx):
        """CrossEntropy's VJP terms that don't depend on g or p, as arrays in x's dtype: a (N, 1) (None
        without weights), q (N, C) and r (N, 1) without its g (keep_i, / D for 'mean')."""
        x, _, _, weight, reduction, eps = ctx.inputs
        t, keep, dtype = ctx.t, ctx.keep, x._array.dtype
        n, c = x._array.shape
        w_t = 1.0 if weight is None else weight[t].astype(dtype)  # (1 - eps) w_t: q's one-hot part
        r = keep.astype(dtype) if reduction != "mean" else keep * (1 / ctx.denom)
        a = None if weight is None else ((1 - eps) * w_t + (eps / c) * float(weight.sum()))[:, None].astype(dtype)
        q = np.zeros((n, c), dtype)
        q.reshape(-1)[ctx.flat] = (1 - eps) * w_t
        if eps:
            q += (eps / c) * (1.0 if weight is None else weight.astype(dtype))
        return a, q, r.astype(dtype)[:, None]



@with_formulas(CrossEntropy)
@computed_in_float32_for_half  # (h-names29) as PyTorch's log_softmax and nll_loss kernels: float32, rounded once
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    r"""Cross-entropy from logits: nll_loss(log_softmax(input, dim=1), target), computed stably.

    `target` holds class indices (N,) / (N, d1, ...), or class probabilities of input's shape.
    With label_smoothing eps the target becomes (1 - eps) one_hot + eps / C. Class indices go through
    one fused op (`CrossEntropy`); the class weights are constants (PyTorch refuses a weight that
    requires grad). If every target is ignored, 'mean' returns 0 with zero gradient (PyTorch: nan).
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    for name, t in (("input", input), ("target", target), ("weight", weight)):
        if not isinstance(t, Tensor) and not (name == "weight" and t is None):
            raise TypeError(f"cross_entropy: {name} must be a Tensor, got {type(t).__name__}")
    if input.ndim == 0:
        raise RuntimeError("cross_entropy: input must hold logits of shape (C,), (N, C) or (N, C, d1, ...), "
                           "got a 0-d tensor")
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    if target.shape == input.shape:  # probabilities (PyTorch's rule: a target of the input's shape)
        if _dtype.kind(target.dtype) != "f":
            raise RuntimeError(f"cross_entropy: a target of the input's shape {tuple(input.shape)} holds class "
                               f"probabilities and must be floating point, got {target.dtype}")
        if ignore_index >= 0:
            raise RuntimeError(f"cross_entropy: ignore_index is not supported for a floating point target "
                               f"(class probabilities), got ignore_index={ignore_index}")
        logp = log_softmax(input, dim=class_dim)
        q = target * (1 - label_smoothing) + label_smoothing / c
        wshape = [1] * input.ndim
        wshape[class_dim] = c
        terms = logp * q if weight is None else logp * q * weight.reshape(wshape)
        loss = -terms.sum(dim=class_dim)
        last = {"mean": "DivBackward1", "sum": "NegBackward0"}.get(reduction)  # PyTorch's: -sum, then / n
        out = _reduce(loss, reduction, "cross_entropy")
        return out if last is None else shown_as(out, last)
    if _dtype.kind(input.dtype) != "f":
        raise NotImplementedError(f"cross_entropy: expected a floating point tensor, got dtype {input.dtype}")
    _class_target_shapes(input, target, "cross_entropy")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    logits, rest = _class_dim_last(input, "cross_entropy")
    t = Tensor._make(_class_targets(input, logits, rest, target, "cross_entropy"))
    w = None
    if weight is not None:
        _same_dtype_as_input(weight, input, "cross_entropy", "weight")
        if tuple(weight.shape) != (c,):
            raise RuntimeError(f"cross_entropy: weight of shape {tuple(weight.shape)} should have shape ({c},)")
        if isinstance(weight, Tensor) and weight.requires_grad and grad_mode.modes.grad_enabled:
            # the fused op treats the class weights as constants: refuse rather than drop their gradient
            raise RuntimeError("cross_entropy: the class weight requires grad, but it gets no gradient "
                               "(as in PyTorch); pass weight.detach()")
        w = weight._array
    loss = CrossEntropy.apply(logits, t, int(ignore_index), w, reduction, float(label_smoothing))
    if reduction == "none":
        return loss.reshape(rest) if rest else loss.reshape(())
    return loss


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    r"""Mean (or sum, or none) of the squared differences, each times `weight` (of input's shape) if given.

    forward: out = \sum_i (x_i - y_i)^2 / n ('mean', n elements), the sum ('sum'), or (x - y)^2 ('none');
             with w: w (x - y)^2, and 'mean' divides by \sum_i w_i
    VJP:     gx = 2 w (x - y) r;  gy = -gx;  r = g / n ('mean') or g   (w = 1 without weight)
    """
    tensor_input(input, "mse_loss")
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if isinstance(target, Tensor) and target.shape != input.shape:
        broadcast_shapes("mse_loss", input.shape, target.shape)
    input, target = _as_floats(input, target)  # a bool or integer target is promoted, as PyTorch (x - bool refuses)
    d = input - target
    return shown_as(_reduce_weighted(d * d, weight, reduction, "mse_loss"), "MseLossBackward0",
                    inputs=(input, target))


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str, stacklevel: int = 3) -> str:
    """PyTorch's deprecated size_average / reduce flags, turned into the `reduction` they mean, with
    PyTorch's warning when either is given."""
    if size_average is None and reduce is None:
        return reduction
    reduction = "none" if reduce is False else "sum" if size_average is False else "mean"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  UserWarning, stacklevel=stacklevel)
    return reduction


def _reduce_weighted(errors: Tensor, weight: Tensor | None, reduction: str, op: str) -> Tensor:
    """The elementwise `errors` times `weight`, reduced; 'mean' over the weights' sum (PyTorch's rule)."""
    if weight is None:
        return _reduce(errors, reduction, op)
    tensor_input(weight, op, "weight")
    if tuple(weight.shape) != tuple(errors.shape):
        raise ValueError(f"{op}: weight and input must have the same size, got weight {tuple(weight.shape)} and "
                         f"input {tuple(errors.shape)}")
    return _reduce(errors * weight, reduction, op, denom=weight.sum())


def _as_floats(a, b):
    """A bool or integer Tensor next to a float one, in the float's dtype (PyTorch's type promotion)."""
    if isinstance(a, Tensor) and isinstance(b, Tensor) and _dtype.is_floating(a.dtype) != _dtype.is_floating(b.dtype):
        return (a, b.to(a.dtype)) if _dtype.is_floating(a.dtype) else (a.to(b.dtype), b)
    return a, b


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    r"""Mean (or sum, or none) of the absolute differences, each times `weight` (of input's shape) if given.

    forward: out = \sum_i |x_i - y_i| / n ('mean', n elements), the sum ('sum'), or |x - y| ('none');
             with w: w |x - y|, and 'mean' divides by \sum_i w_i
    VJP:     gx = w sign(x - y) r;  gy = -gx;  r = g / n ('mean') or g   (0 where x = y; w = 1 without weight)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce_weighted((input - target).abs(), weight, reduction, "l1_loss")


@computed_in_float32_for_half
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    r"""BCE from logits, -w [p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))], written as PyTorch
    computes it: (1 - t) x + l softplus(-x) with l = 1 + (p - 1) t, since -log sigmoid(x) = softplus(-x)
    and -log(1 - sigmoid(x)) = x + softplus(-x). `weight` (w) rescales each element (broadcast to x),
    `pos_weight` (p) the positive term of each class (broadcast along the last dim).

    forward: loss = w ((1 - t) x + l softplus(-x)),  l = 1 + (p - 1) t,  then reduced ('mean': over its n elements)
    VJP:     gx = w (1 - t - l sigmoid(-x)) r   (= w (sigmoid(x) - t) r without pos_weight);  r = g / n ('mean') or g
    """
    op = "binary_cross_entropy_with_logits"
    input, target = tensor_input(input, op), tensor_input(target, op)
    reduction = _legacy_reduction(size_average, reduce, reduction)  # PyTorch's deprecated flags, if given
    if target.shape != input.shape:
        raise ValueError(f"{op}: target size {tuple(target.shape)} must be the same as input size {tuple(input.shape)}")
    float_kernel(input, op)  # (PyTorch's log_sigmoid kernel has no integer or bool form)
    if _dtype.kind(target.dtype) != "f":
        raise RuntimeError(f"{op}: expected a floating point target, got {target.dtype}")
    for name, w in (("weight", weight), ("pos_weight", pos_weight)):
        if w is not None and broadcast_shapes(op, w.shape, input.shape) != input.shape:
            raise RuntimeError(f"{op}: {name} of shape {tuple(w.shape)} doesn't broadcast to the input's shape "
                               f"{tuple(input.shape)}")
    scale = 1 if pos_weight is None else (pos_weight - 1) * target + 1  # l
    loss = (1 - target) * input + scale * softplus(-input)
    if weight is not None:
        loss = loss * weight
    if loss.dtype != target.dtype:  # PyTorch computes the loss in place in a tensor made from the target
        loss = loss.to(target.dtype)
    return shown_as(_reduce(loss, reduction, op), "BinaryCrossEntropyWithLogitsBackward0", inputs=(input, target))


class Pad(Function):
    r"""out = x with `value` added around it: pad = (left_last, right_last, left_2nd_last, ...)
    VJP: gx = the slice of g where x sits"""

    @staticmethod
    def forward(ctx, x, widths, value):
        if not widths:  # a 0-d tensor, nothing to pad
            return x._array.copy()
        return np.pad(x._array, widths, mode="constant", constant_values=value)

    @staticmethod
    def backward(ctx, g):
        x, widths, _ = ctx.inputs
        return g[tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, x.shape))], None, None


@with_formulas(Pad)
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Padding of the last len(pad)//2 dims, PyTorch's order (last dim first); a negative width crops
    that side instead (a slice, before the padding). mode='constant' fills with `value`; 'reflect',
    'replicate' and 'circular' repeat the input's own entries (see `_pad_by_index`)."""
    tensor_input(input, "pad")
    if mode in ("reflect", "replicate", "circular"):
        return _pad_by_index(input, pad, mode)
    if mode != "constant":
        raise NotImplementedError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', "
                                  f"got {mode!r}")
    if any(type(w) is not int for w in pad):
        raise TypeError(f"pad: argument 'pad' must be a tuple of ints, got {tuple(pad)!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise RuntimeError(f"pad: padding length {len(pad)} must be even and at most 2 * {input.ndim} dims")
    value = 0.0 if value is None else value
    fills = any(w > 0 for w in pad)  # cropping alone, or no width at all, fills nothing: the value is never read
    if type(value) in (bool, int, float) and fills:
        _dtype.scalar_to(value, input.dtype, "pad")  # it must fit the dtype, as PyTorch checks
    widths, crop = [(0, 0)] * input.ndim, [slice(None)] * input.ndim
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if input.shape[d] - max(-lo, 0) - max(-hi, 0) < 0:  # PyTorch crops first, then pads
            raise RuntimeError(f"pad: padding {(lo, hi)} crops more than dim {d} of input shape "
                               f"{tuple(input.shape)} holds")
        widths[d] = (max(lo, 0), max(hi, 0))
        crop[d] = slice(max(-lo, 0), input.shape[d] - max(-hi, 0))
    if any(w < 0 for w in pad):
        input = input[tuple(crop)]
    return Pad.apply(input, tuple(widths), value if fills else 0)


def _pad_by_index(input, pad, mode):
    r"""reflect / replicate / circular padding as a gather: along each padded dim of size n, output
    position i (i from -left to n + right - 1) reads input index
        reflect: |i| mirrored back from n - 1 (the edge itself not repeated);  replicate: clip(i, 0, n - 1);
        circular: i mod n.
    One `index_select` per dim, so the VJP adds each output gradient into the entry it was read from."""
    op = "pad"
    tensor_input(input, op)
    k = len(pad) // 2
    if any(type(w) is not int for w in pad) or len(pad) % 2 or not 1 <= k <= 3 or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"pad: mode={mode!r} pads the last 1, 2 or 3 dims of an input with one or two "
                                  f"more dims (a batch and channels); got padding {tuple(pad)} for an input of shape "
                                  f"{tuple(input.shape)}")
    out = input
    for i in range(k):
        d = input.ndim - 1 - i
        n, lo, hi = input.shape[d], pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"pad: padding size should be less than the corresponding input dimension, but got "
                               f"padding {(lo, hi)} at dimension {d} of input {tuple(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError(f"pad: padding {(lo, hi)} at dimension {d} of input {tuple(input.shape)} wraps "
                               f"around more than once")
        if n + lo + hi < 0 or (n == 0 and lo + hi > 0):
            raise RuntimeError(f"pad: padding {(lo, hi)} does not fit dimension {d} of input {tuple(input.shape)}")
        idx = np.arange(-lo, n + hi)
        if mode == "reflect":
            idx = np.abs(idx)
            idx = np.where(idx > n - 1, 2 * (n - 1) - idx, idx)
        elif mode == "replicate":
            idx = np.clip(idx, 0, n - 1)
        else:
            idx = idx % n
        out = out.index_select(d, Tensor._make(idx.astype(np.int64)))
    return out


@computed_in_float32_for_half
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None) -> Tensor:
    r"""x divided by its p-norm along `dim`, the norm clamped below at eps; written into `out` if given
    (then not differentiable, as PyTorch's).

    forward: out = x / n,  n = max(||x||_p, eps)
    VJP:     gx = (g - out \sum_dim(g * out)) / n where ||x||_2 > eps (p = 2), g / eps elsewhere
    """
    if isinstance(p, str):  # (PyTorch hands p to its norm, which refuses the order)
        raise RuntimeError(f"normalize: order {p!r} is not supported; p is a number")
    if out is not None:
        from ..ops.table import with_out
        return with_out("normalize", _normalize)(input, p, dim, eps, out=out)
    return _normalize(input, p, dim, eps)


def _normalize(input: Tensor, p: float, dim: int, eps: float) -> Tensor:
    return input / input.norm(p, dim=dim, keepdim=True).clamp(min=eps)


@computed_in_float32_for_half
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along `dim` (of the two broadcast together),
    computed as PyTorch does: each vector divided by its norm first (so 1e30-long float32 vectors
    don't overflow), and each norm clamped at eps in value only: the gradient flows through the
    norm as if unclamped (PyTorch clamps it in place without recording).

    forward: out = (x1 / n1) . (x2 / n2),  n_k = max(||x_k||, eps)
    VJP:     gx1 = g (x2 / (n1 n2) - out x1 / (n1 ||x1||))   (0 from the second term where x1 = 0);  gx2 likewise
    """
    tensor_input(x1, "cosine_similarity", "x1"), tensor_input(x2, "cosine_similarity", "x2")
    shape = broadcast_shapes("cosine_similarity", x1.shape, x2.shape)  # dim counts in the broadcast shape
    if _dtype.kind(x1.dtype) != "f" and _dtype.kind(x2.dtype) != "f":
        raise RuntimeError(f"cosine_similarity: expected a floating point common dtype, got {x1.dtype} and "
                           f"{x2.dtype}")
    x1, x2 = _as_floats(x1, x2)
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1, n2 = x1.norm(dim=dim, keepdim=True), x2.norm(dim=dim, keepdim=True)
    # the clamped value, the unclamped gradient: a constant lifts a norm below eps up to eps
    n1 = n1 + (eps - n1.detach()).clamp(min=0)
    n2 = n2 + (eps - n2.detach()).clamp(min=0)
    return ((x1 / n1) * (x2 / n2)).sum(dim=dim)


# the one composed attention (its own module, which reads this one's dropout: imported once dropout exists)
from . import sdpa_backends  # noqa: E402
from .attention import attend  # noqa: E402


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    r"""softmax(Q K^T * scale + mask) V for query (..., L, E), key (..., S, E), value (..., S, Ev): (..., L, Ev).

    scale: 1 / sqrt(E) unless given.
    attn_mask: bool (True = may attend) or float (added to the scores; -inf hides), broadcastable
        to the scores (..., L, S).  is_causal: query i sees keys j <= i (not with attn_mask).
    A query that may see no key gets weights 0, so output 0 (and gradient 0), as in PyTorch.
    dropout_p: drop weights with this probability (always: there is no `training` flag here).
    enable_gqa: key and value may have fewer heads (dim -3) than query; each is repeated to match.
    Returns the output only (the `attention` package's version also returns the weights).
    The math is `nn.attention.attend`'s; here PyTorch's masks become its `mask` and `bias`.

    forward: S = c Q K^T + mask,  P = softmax_rows(S),  out = P V   (c = scale; a node per step)
    VJP:     gV = P^T g;  gP = g V^T;  gS = P * (gP - rowsum(gP * P));  gQ = c gS K;  gK = c gS^T Q
    """
    op = "scaled_dot_product_attention"
    given = query, key, value
    query, key, value = _attention_inputs(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa, op)
    sdpa_backends.check_a_kernel_may_run()  # (`nn.attention.sdpa_kernel` may have switched them off)
    mask = bias = None
    if is_causal:
        mask = Tensor._make(np.tril(np.ones((query.shape[-2], key.shape[-2]), dtype=bool)))   # key j <= query i
    elif attn_mask is not None and attn_mask.dtype == np.bool_:
        mask = attn_mask
    elif attn_mask is not None:  # a float mask is added; its -inf entries hide their key, as a bool False does
        bias, hidden = attn_mask, np.isneginf(attn_mask.numpy(force=True))
        mask = Tensor._make(~hidden) if hidden.any() else None
    scale = None if scale is None else float(scale)
    out = attend(query, key, value, mask, bias, scale, dropout_p)[0]                   # (..., L, Ev)
    if not _flash_kernel_runs(*given, attn_mask, dropout_p):
        return out  # (PyTorch's math path: a fresh product, contiguous)
    return shown_as(_laid_out_like(out, query), "ScaledDotProductFlashAttentionForCpuBackward0")


def _flash_kernel_runs(query, key, value, attn_mask, dropout_p):
    """Whether PyTorch's CPU build computes this call with its flash kernel rather than its math path:
    4-d inputs of one batch size and one head count, no dropout, one head size, a mask of 2 or 4 dims,
    rows of stride 1, no empty sequence, and the kernel not switched off by `sdpa_kernel`. Only the
    output's memory layout and its node's name tell the two apart (the numbers are minitensor's one path)."""
    arrays = query._array, key._array, value._array
    return (sdpa_backends.is_enabled(sdpa_backends.SDPBackend.FLASH_ATTENTION) and dropout_p == 0
            and all(a.ndim == 4 for a in arrays) and query.shape[:2] == key.shape[:2] == value.shape[:2]
            and query.shape[-1] == key.shape[-1] == value.shape[-1] and min(query.shape[-2], key.shape[-2]) > 0
            and (attn_mask is None or attn_mask.ndim in (2, 4))
            and all(a.strides[-1] == a.itemsize for a in arrays))


def _laid_out_like(out, query):
    """`out` in query's order of strides, as PyTorch's flash kernel allocates its output (`empty_like`):
    after `q = x.view(B, T, H, D).transpose(1, 2)` the output is laid out (B, T, H, D) in memory, so
    `out.transpose(1, 2).view(B, T, H * D)` works as in PyTorch. A dim of size 1 or stride 0 orders as
    it would in a contiguous tensor."""
    shape, item = query._array.shape, query._array.itemsize
    contiguous = np.cumprod((1,) + shape[:0:-1])[::-1]
    strides = [s // item if n > 1 and s else c for n, s, c in zip(shape, query._array.strides, contiguous)]
    order = sorted(range(4), key=lambda d: -strides[d])  # outermost first (stable: ties keep their order)
    if order == [0, 1, 2, 3]:
        return out
    return out.permute(order).contiguous().permute(np.argsort(order).tolist())


def _attention_inputs(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa, op):
    """Check scaled_dot_product_attention's arguments as PyTorch does; key and value with query's heads."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    shapes = f"query {tuple(query.shape)}, key {tuple(key.shape)} and value {tuple(value.shape)}"
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(f"{op}: query, key and value must be at least 2-d (..., T, E), got {shapes}")
    if not query.dtype == key.dtype == value.dtype or _dtype.kind(query.dtype) != "f":
        raise RuntimeError(f"{op}: query, key and value must have the same floating dtype, got "
                           f"{query.dtype}, {key.dtype} and {value.dtype}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"{op}: query and key need the same last dim E, key and value the same length S "
                           f"(dim -2); got {shapes}")
    if enable_gqa and min(query.ndim, key.ndim, value.ndim) >= 3:
        heads = query.shape[-3]
        for name, t in (("key", key), ("value", value)):
            if heads % t.shape[-3]:
                raise RuntimeError(f"{op}: the number of heads in {name} ({t.shape[-3]}) must divide the number "
                                   f"of heads in query ({heads}) with enable_gqa=True")
        key, value = _repeat_heads(key, heads), _repeat_heads(value, heads)
    try:
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of {shapes} cannot be broadcast together") from None
    if dropout_p > 1.0:
        raise RuntimeError(f"{op}: dropout probability has to be between 0 and 1, but got {dropout_p}")
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError(f"{op}: an explicit attn_mask should not be given with is_causal=True")
        if not isinstance(attn_mask, Tensor):
            raise TypeError(f"{op}: attn_mask must be a Tensor, got {type(attn_mask).__name__}")
        if attn_mask.dtype != np.bool_ and attn_mask.dtype != query.dtype:
            raise RuntimeError(f"{op}: attn_mask must be bool or of query's dtype {query.dtype}, got {attn_mask.dtype}")
        scores_shape = tuple(batch) + (query.shape[-2], key.shape[-2])
        try:
            fits = np.broadcast_shapes(tuple(attn_mask.shape), scores_shape) == scores_shape
        except ValueError:
            fits = False
        if not fits:
            raise RuntimeError(f"{op}: attn_mask of shape {tuple(attn_mask.shape)} does not broadcast to the "
                               f"scores' shape {scores_shape} (..., L, S)")
    return query, key, value


def _repeat_heads(t, heads):
    """(..., H, S, E) -> (..., heads, S, E), each head repeated heads // H times in a row (grouped-query attention)."""
    *lead, h, s, e = t.shape
    if h == heads:
        return t
    return t.unsqueeze(-3).expand(*lead, h, heads // h, s, e).reshape(*lead, heads, s, e)


# ---- the families that live in their own modules (each defines its functions and Modules; they import
# this module's helpers, so they are imported last) -------------------------------------------------
from . import (  # noqa: E402
    activation as _activation,
    conv as _conv,
    ctc as _ctc,
    extras as _extras,
    loss as _loss,
    misc as _misc,
    normalization as _normalization,
    pooling as _pooling,
)
from .activation import (  # noqa: E402, F401
    celu,
    celu_,
    elu,
    elu_,
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    logsigmoid,
    mish,
    prelu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from .conv import conv1d, conv2d, fold, unfold  # noqa: E402, F401
from .ctc import ctc_loss  # noqa: E402, F401  (h-nnrest)
from .extras import (  # noqa: E402, F401  (h-nnrest)
    dropout3d,
    embedding_bag,
    feature_alpha_dropout,
    gumbel_softmax,
    multilabel_margin_loss,
    pdist,
    triplet_margin_with_distance_loss,
)
from .linear_ce import linear_cross_entropy  # noqa: E402, F401  (h-nnrest)
from .loss import (  # noqa: E402, F401
    binary_cross_entropy,
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_soft_margin_loss,
    pairwise_distance,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
)
from .misc import (  # noqa: E402, F401
    alpha_dropout,
    bilinear,
    channel_shuffle,
    dropout1d,
    dropout2d,
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
)
from .multihead import multi_head_attention_forward  # noqa: E402, F401  (h-nnrest)
from .normalization import (  # noqa: E402, F401
    batch_norm,
    group_norm,
    instance_norm,
    local_response_norm,
    rms_norm,
)
from .pooling import (  # noqa: E402, F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)

# ---- issue 30, point 2 (nnconv helper): 3-D and transposed convolutions, more pooling, grid sampling ----
# isort: split
from . import sampling as _sampling  # noqa: E402
from .conv import (  # noqa: E402, F401
    conv3d,
    conv_tbc,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from .pooling import (  # noqa: E402, F401
    adaptive_avg_pool3d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .sampling import affine_grid, grid_sample, upsample_bilinear, upsample_nearest  # noqa: E402, F401

# ---- end of the nnconv helper's block ----

__all__ = [
    "linear", "relu", "gelu", "sigmoid", "tanh", "silu", "softplus", "softmax", "log_softmax", "dropout",
    "layer_norm", "embedding", "one_hot", "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "pad",
    "binary_cross_entropy_with_logits", "normalize", "cosine_similarity",
    "scaled_dot_product_attention",
    *_activation.FUNCTIONS, *_loss.FUNCTIONS, *_normalization.FUNCTIONS, *_misc.FUNCTIONS,
    *_conv.FUNCTIONS, *_pooling.FUNCTIONS,
    *_extras.FUNCTIONS, *_ctc.FUNCTIONS, "multi_head_attention_forward",  # h-nnrest
    "linear_cross_entropy",  # h-nnrest
]
__all__ += _sampling.FUNCTIONS  # (issue 30, point 2: the nnconv helper's grid sampling)


def __dir__() -> list[str]:
    # tab completion shows the functions, not the module's imports (np, math) or its op classes
    return sorted(__all__)

# ---- issue 30 point 2 (h-errs30): grouped_mm, one matrix product per group, from primitives ----
from . import grouped as _grouped  # noqa: E402
from .grouped import grouped_mm  # noqa: E402, F401

__all__ += _grouped.FUNCTIONS
