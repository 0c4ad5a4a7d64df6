r"""Attention as pure functions of tensors, composed from minitensor ops.

Every function returns `(output, weights)`: the context vectors and the attention weights that
made them (rows of non-negative numbers summing to 1, or to 0 for a query with every key masked).

    basic_self_attention(x)                       z_i = sum_j softmax_j(x_i . x_j) x_j
    scaled_dot_product_attention(q, k, v, ...)    softmax(Q K^T / sqrt(d_k)) V, with masks and dropout

`scaled_dot_product_attention` has two implementations of the same math. The *composed* one is
the default: matmul, scale, mask, softmax and matmul, each an op with its own VJP, so
`minitensor.autograd.explain` and `minitensor.viz.to_dot` show every step. It is minitensor's
`nn.attention.attend`, the function PyTorch's API in minitensor calls too; this package's mask
conventions become its arguments in `attention.masks`. The *fused* one in
`attention.fused` is one autograd node with a hand-derived backward, faster (docs/attention.md
has the measurements) but a single step to look at: ask for it with `fused=True`, as the
trainer's model (`attention.lm.DecoderLM`) and the benchmarks do.
"""
from __future__ import annotations

import math

import numpy as np

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import Tensor
from minitensor.autograd.formulas import with_formulas
from minitensor.nn.attention import attend

from .fused import FusedAttention, FusedAttentionWeights, SharedWeights
from .masks import hide_unseen, prepare_mask, zero_blind_rows


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
    """The scores' shape (..., Tq, Tk), whether value's batch dims fit in theirs, and 1 / sqrt(d_k);
    or the error that says what is wrong with query, key or value."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor(t, op, name)
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.ndim < 2:
            raise RuntimeError(f"{op}: {name} must have shape (..., T, d), got shape {tuple(t.shape)}")
        if t.dtype.kind != "f":
            raise RuntimeError(f"{op}: {name} must be a floating point tensor, got dtype {t.dtype}")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"{op}: query, key and value must have the same dtype, got "
                           f"{query.dtype}, {key.dtype} and {value.dtype}")
    q, k, v = tuple(query.shape), tuple(key.shape), tuple(value.shape)
    if q[-1] != k[-1]:
        raise RuntimeError(f"{op}: query and key must have the same last dim d_k; got shapes {_shapes(q, k, v)}")
    if k[-2] != v[-2]:
        raise RuntimeError(f"{op}: key and value must have the same length Tk (dim -2); got shapes {_shapes(q, k, v)}")
    try:
        batch = np.broadcast_shapes(q[:-2], k[:-2])
        out_batch = np.broadcast_shapes(batch, v[:-2])
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of {_shapes(q, k, v)} cannot be broadcast together") from None
    default_scale = 1.0 / math.sqrt(q[-1]) if q[-1] else 1.0  # d_k = 0: every score is an empty sum, 0 at any scale
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
    fused: False (the default) for the composed ops, each step a node of its own
        (`minitensor.nn.attention.attend`); True for the fused nodes (`attention.fused`: one from
        Q, K, V to the output, one to the weights), the same math, faster. A float mask that
        requires grad always uses the composed ops.
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
    scale = default_scale if scale is None else float(scale)
    m = prepare_mask(mask, is_causal, scores_shape, query.dtype, op)   # the package's masks as attend's two forms
    dropout_p = dropout_p if training else 0.0
    query, key, value = hide_unseen(query, key, value, m)               # never NaN from what the mask leaves out
    if fused and v_fits and not (m.bias is not None and m.bias.requires_grad):
        output, weights = _fused(query, key, value, m, scale, dropout_p, need_weights)
    else:
        output, weights = attend(query, key, value, m.allowed, m.bias, scale, dropout_p)  # a node per step
    return zero_blind_rows(output, m), (weights if need_weights else None)


def _fused(query, key, value, m, scale, dropout_p, need_weights):
    """`attend`'s math in the nodes of `attention.fused`: (output, weights or None)."""
    if not dropout_p and not need_weights:
        # one node for everything, and the weights never become a tensor
        return FusedAttention.apply(query, key, value, m, scale, None), None       # (..., Tq, dv)
    weights = FusedAttentionWeights.apply(query, key, m, scale)                    # (..., Tq, Tk)
    if dropout_p:
        return F.dropout(weights, dropout_p) @ value, weights                      # (..., Tq, dv)
    # P V as one node whose backward goes all the way back to Q, K and V (reusing P)
    return FusedAttention.apply(query, key, value, m, scale, SharedWeights(weights, query, key)), weights
