r"""Attention as pure functions of tensors, composed from minitensor ops.

Every function returns `(output, weights)`: the context vectors and the attention weights that
made them (rows of non-negative numbers summing to 1, or to 0 for a query with every key masked).

    basic_self_attention(x)                       z_i = sum_j softmax_j(x_i . x_j) x_j
    scaled_dot_product_attention(q, k, v, ...)    softmax(Q K^T / sqrt(d_k)) V, with masks and dropout

`scaled_dot_product_attention` has two implementations of the same math. The *composed* one below
is the default: matmul, scale, mask, softmax and matmul, each an op with its own VJP, so
`minitensor.autograd.explain` and `minitensor.viz.to_dot` show every step. The *fused* one in
`attention.fused` is one autograd node with a hand-derived backward, faster (docs/attention.md
has the measurements) but a single step to look at: ask for it with `fused=True`, as the
trainer's model (`attention.lm.DecoderLM`) and the benchmarks do.
"""
from __future__ import annotations

import math

import numpy as np

import minitensor as mt
from minitensor import Tensor
import minitensor.nn.functional as F
from minitensor.autograd.function import with_formulas

from .fused import FusedAttention, FusedAttentionWeights, SharedWeights
from .masks import prepare_mask


def check_tensor(x: object, op: str, name: str = "x") -> Tensor:
    """`x` if it is a minitensor Tensor, else a TypeError naming the layer or function and what it got."""
    if not isinstance(x, mt.Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__} (minitensor.tensor(data) makes one)")
    return x


def basic_self_attention(x: Tensor) -> tuple[Tensor, Tensor]:
    r"""Self-attention with no parameters: every vector is its own query, key and value.

        alpha_ij = softmax_j(x_i . x_j)        z_i = sum_j alpha_ij x_j

    x: (..., T, d). Returns (z, alpha) of shapes (..., T, d) and (..., T, T).

    forward: S = x x^T,  alpha = softmax_rows(S),  z = alpha x   (a node per step)
    VJP:     galpha = g_alpha + gz x^T;  gS = alpha * (galpha - rowsum(galpha * alpha));
             gx = alpha^T gz + (gS + gS^T) x   (x is query, key and value at once: its three gradients add up)
    """
    if check_tensor(x, "basic_self_attention").ndim < 2:
        raise RuntimeError(f"basic_self_attention: expected x of shape (..., T, d), got shape {tuple(x.shape)}")
    scores = x @ x.mT                                 # (..., T, T)   x_i . x_j
    weights = F.softmax(scores, dim=-1)               # (..., T, T)   each row sums to 1
    return weights @ x, weights                       # (..., T, d)   a weighted average of the x_j


def _check_qkv(query, key, value, op):
    if not (isinstance(query, mt.Tensor) and isinstance(key, mt.Tensor) and isinstance(value, mt.Tensor)):
        for name, t in (("query", query), ("key", key), ("value", value)):
            check_tensor(t, op, name)
    q, k, v = query.numpy(force=True), key.numpy(force=True), value.numpy(force=True)
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2 or q.dtype.kind != "f" or not q.dtype == k.dtype == v.dtype:
        for name, t in (("query", q), ("key", k), ("value", v)):
            if t.ndim < 2:
                raise RuntimeError(f"{op}: {name} must have shape (..., T, d), got shape {t.shape}")
            if t.dtype.kind != "f":
                raise RuntimeError(f"{op}: {name} must be a floating point tensor, got dtype {t.dtype}")
        raise RuntimeError(f"{op}: query, key and value must have the same dtype, got "
                           f"{q.dtype}, {k.dtype} and {v.dtype}")
    q, k, v = q.shape, k.shape, v.shape
    if q[-1] != k[-1]:
        raise RuntimeError(f"{op}: query and key must have the same last dim d_k; got shapes {_shapes(q, k, v)}")
    if k[-2] != v[-2]:
        raise RuntimeError(f"{op}: key and value must have the same length Tk (dim -2); got shapes {_shapes(q, k, v)}")
    default_scale = 1.0 / math.sqrt(q[-1]) if q[-1] else 1.0  # d_k = 0: every score is an empty sum, 0 at any scale
    batch = q[:-2]
    if batch == k[:-2] == v[:-2]:  # the usual case, without numpy's slow check
        return batch + (q[-2], k[-2]), True, default_scale
    try:
        batch = np.broadcast_shapes(q[:-2], k[:-2])
        out_batch = np.broadcast_shapes(batch, v[:-2])
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of {_shapes(q, k, v)} cannot be broadcast together") from None
    return batch + (q[-2], k[-2]), out_batch == batch, default_scale


def _shapes(q, k, v):
    return f"query {q}, key {k}, value {v}"


@with_formulas(FusedAttention)
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 training: bool = True, fused: bool = False,
                                 need_weights: bool = True) -> tuple[Tensor, Tensor | None]:
    r"""softmax(Q K^T / sqrt(d_k) + masks) V for query (..., Tq, d_k), key (..., Tk, d_k), value (..., Tk, d_v).

    mask: bool (True = may attend), int 0/1 (the same), or float (added to the scores; -inf hides);
        it must broadcast to the scores (..., Tq, Tk). A query with every key masked gets zero
        weights, a zero output and zero gradient (never NaN).
    is_causal: also hide keys j > i (combined with `mask` if both are given).
    dropout_p: drop attention weights with this probability when `training` (the returned
        weights are the ones *before* dropout, the model's actual attention pattern).
    scale: defaults to 1 / sqrt(d_k).
    fused: False (the default) for the composed ops, each step a node of its own; True for the
        fused nodes (`attention.fused`: one from Q, K, V to the output, one to the weights), the
        same math, faster. A float mask that requires grad always uses the composed ops.
    need_weights: False to get (output, None), as PyTorch's `need_weights=False`: on the fused
        path the output is then one node and the weights are never a tensor of the graph.

    Returns (output (..., Tq, d_v), weights (..., Tq, Tk)).

    forward: S = c Q K^T + mask,  P = softmax_rows(S),  out = P V   (c = scale; masked scores -inf)
    VJP:     gV = P^T g_out;  gP = g_out V^T + g_weights;  gS = P * (gP - rowsum(gP * P));
             gQ = c gS K;  gK = c gS^T Q
    With fused=True both are the nodes of `attention.fused`:
    """
    op = "scaled_dot_product_attention"
    scores_shape, v_fits, default_scale = _check_qkv(query, key, value, op)
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{op}: dropout_p must be in [0, 1], got {dropout_p}")
    # Dot products of d_k independent unit-variance components have variance d_k; dividing by
    # sqrt(d_k) brings the logits back to unit scale, so the softmax doesn't saturate into a
    # near one-hot whose gradient vanishes. A Python float keeps float32 tensors float32.
    scale = default_scale if scale is None else float(scale)
    m = prepare_mask(mask, is_causal, scores_shape, query.dtype, op)
    drop = training and dropout_p > 0.0

    # A key no query may see (padding), or a query that may see no key, can hold anything, even
    # NaN: replace it by 0 before it enters a matmul, where a weight of 0 times NaN is still NaN.
    # `where` also passes exactly 0 gradient back to what it replaced.
    if m.empty_rows:
        query = mt.where(m.row_any, query, 0.0)
    if m.empty_cols:
        key = mt.where(m.col_any, key, 0.0)
        value = mt.where(m.col_any, value, 0.0)
    use_fused = bool(fused) and v_fits and not (m.bias is not None and m.bias.requires_grad)
    if use_fused and not drop and not need_weights:
        # fused=True, output only: steps 1-4 below as one node, and the weights never become a tensor
        output, weights = FusedAttention.apply(query, key, value, m, scale, None), None  # (..., Tq, dv)
    else:
        # 1-3. scores, mask, softmax: one op per step (the default), or one fused node
        if not use_fused:
            weights = _composed_weights(query, key, m, scale)             # (..., Tq, Tk)
        else:
            weights = FusedAttentionWeights.apply(query, key, m, scale)   # (..., Tq, Tk)

        # 4. average the values with those weights (dropped out, inverted, while training)
        if use_fused and not drop:
            # P @ V as one node whose backward goes all the way back to Q, K and V (reusing P)
            output = FusedAttention.apply(query, key, value, m, scale, SharedWeights(weights, query, key))  # (..., Tq, dv)
        else:
            used = F.dropout(weights, dropout_p) if drop else weights   # (..., Tq, Tk)
            output = used @ value                           # (..., Tq, dv)
    if m.empty_rows:
        output = mt.where(m.row_any, output, 0.0)           # (..., Tq, dv)  0 even if V holds NaN
    return output, (weights if need_weights else None)


def _composed_weights(query, key, m, scale):
    """Steps 1-3 of scaled_dot_product_attention, one minitensor op per step, each with its own
    VJP: the default path (`FusedAttentionWeights` computes the same weights in one node)."""
    # 1. score every query against every key
    scores = (query @ key.mT) * scale                       # (..., Tq, Tk)
    if m.bias is not None:
        scores = scores + m.bias                            # (..., Tq, Tk)  a float mask is added

    # 2. mask: `where`, never a multiply (0 * inf = NaN) nor a second additive sentinel. A masked
    #    score becomes -inf, so its weight is exactly 0 and it passes back exactly 0 gradient. A
    #    fully masked row gets 0 logits instead (a finite softmax, zeroed in step 3): no 0/0.
    if m.allowed is not None:
        fill = mt.from_numpy(np.where(m.row_any, -np.inf, 0.0).astype(scores.dtype)) if m.empty_rows else -math.inf
        scores = mt.where(m.allowed, scores, fill)          # (..., Tq, Tk)

    # 3. normalise each row into weights
    weights = F.softmax(scores, dim=-1)                     # (..., Tq, Tk)  rows sum to 1
    if m.empty_rows:
        weights = mt.where(m.row_any, weights, 0.0)         # (..., Tq, Tk)  nothing to attend to: 0
    return weights
