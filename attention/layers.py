r"""Attention layers: the function of `attention.functional` plus learnable projections.

    ScaledDotProductAttention(dropout)      the function as a Module (no parameters)
    SelfAttention(d_in, d_k, d_v)           one head, weights stored as the tutorials draw them
    MultiHeadAttention(d_model, num_heads)  H heads side by side, PyTorch's batch-first layout

Every forward returns `(output, weights)`.
"""
from __future__ import annotations

import math

import minitensor as mt
import minitensor.nn as nn
from minitensor import Tensor
from minitensor.autograd import step

from .functional import check_tensor, scaled_dot_product_attention


class ScaledDotProductAttention(nn.Module):
    """`scaled_dot_product_attention` as a Module: attention-weight dropout only while training.
    `fused=True` computes it as one node (see `scaled_dot_product_attention`)."""

    def __init__(self, dropout: float = 0.0, fused: bool = False) -> None:
        super().__init__()
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"ScaledDotProductAttention: dropout must be in [0, 1], got {dropout}")
        self.dropout, self.fused = dropout, bool(fused)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, is_causal: bool = False,
                scale: float | None = None) -> tuple[Tensor, Tensor | None]:
        return scaled_dot_product_attention(query, key, value, mask=mask, dropout_p=self.dropout,
                                            is_causal=is_causal, scale=scale, training=self.training,
                                            fused=self.fused)

    def extra_repr(self) -> str:
        return f"dropout={self.dropout}" + (", fused=True" if self.fused else "")


def _uniform_parameter(shape: tuple[int, ...], fan_in: int) -> nn.Parameter:
    # nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), so outputs start at a sane scale
    p = nn.Parameter(mt.zeros(shape))
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    nn.init.uniform_(p, -bound, bound)
    return p


class SelfAttention(nn.Module):
    r"""Single-head self-attention with the weight matrices of the "Illustrated: Self-Attention"
    tutorial: queries = x @ w_query, keys = x @ w_key, values = x @ w_value.

    Layout: `w_query`, `w_key` are Parameters of shape (d_in, d_k) and `w_value` of (d_in, d_v),
    i.e. (in, out) as the tutorials write them, so `x @ w_key` is the tutorial's line and its 4x3
    matrices load directly (`load_state_dict({'w_key': ...})`). This is the transpose of
    `nn.Linear.weight` (out, in); `MultiHeadAttention` uses `nn.Linear` instead.
    With `bias=True` there are also `b_query`, `b_key` (d_k,) and `b_value` (d_v,).

    scale: multiplies the scores before the softmax; None means 1/sqrt(d_k). The tutorial uses
    no scaling: pass `scale=1.0` to reproduce its numbers.
    fused: True computes the attention as one node (see `scaled_dot_product_attention`).
    """

    def __init__(self, d_in: int, d_k: int, d_v: int | None = None, bias: bool = False, scale: float | None = None,
                 fused: bool = False) -> None:
        super().__init__()
        d_v = d_k if d_v is None else d_v
        self.d_in, self.d_k, self.d_v, self.scale = d_in, d_k, d_v, scale
        self.fused = bool(fused)
        self.w_query = _uniform_parameter((d_in, d_k), d_in)
        self.w_key = _uniform_parameter((d_in, d_k), d_in)
        self.w_value = _uniform_parameter((d_in, d_v), d_in)
        if bias:
            self.b_query = _uniform_parameter((d_k,), d_in)
            self.b_key = _uniform_parameter((d_k,), d_in)
            self.b_value = _uniform_parameter((d_v,), d_in)
        else:
            for name in ("b_query", "b_key", "b_value"):
                self.register_parameter(name, None)

    def project(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """(queries, keys, values) for x of shape (..., T, d_in): steps 1-3 of the tutorial."""
        if check_tensor(x, "SelfAttention").shape[-1] != self.d_in:
            raise RuntimeError(f"SelfAttention: expected input of shape (..., T, {self.d_in}), got {tuple(x.shape)}")
        with step("w_query"):
            queries = x @ self.w_query                      # (..., T, d_k)
            queries = queries if self.b_query is None else queries + self.b_query
        with step("w_key"):
            keys = x @ self.w_key                           # (..., T, d_k)
            keys = keys if self.b_key is None else keys + self.b_key
        with step("w_value"):
            values = x @ self.w_value                       # (..., T, d_v)
            values = values if self.b_value is None else values + self.b_value
        return queries, keys, values

    def forward(self, x: Tensor, mask: Tensor | None = None, is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """x: (..., T, d_in) -> (output (..., T, d_v), weights (..., T, T))."""
        queries, keys, values = self.project(x)             # (..., T, d_k), (..., T, d_k), (..., T, d_v)
        return scaled_dot_product_attention(queries, keys, values, mask=mask, is_causal=is_causal,
                                            scale=self.scale, fused=self.fused)

    def extra_repr(self) -> str:
        fused = ", fused=True" if self.fused else ""
        return f"d_in={self.d_in}, d_k={self.d_k}, d_v={self.d_v}, bias={self.b_query is not None}{fused}"


class MultiHeadAttention(nn.Module):
    r"""MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W_O,  head_h = Attention(Q W_Q^h, K W_K^h, V W_V^h).

    Inputs are batch-first: query (B, Tq, d_model), key (B, Tk, kdim), value (B, Tk, vdim); a
    single unbatched sequence (T, d) works too. With key/value omitted it is self-attention;
    `MultiHead(Y, X)` (query Y, key = value = X) is cross-attention.

    Parameters: `w_q`, `w_k`, `w_v`, `w_o`, each an `nn.Linear` (weight (out, in) as in PyTorch).
    W_Q^h is the h-th block of head_dim output rows of `w_q.weight`, so one Linear computes all
    heads' projections at once and a reshape splits them.

    forward returns (output (B, Tq, d_model), weights (B, H, Tq, Tk)); the weights are the
    softmax probabilities before dropout, per head (PyTorch averages over heads by default).
    `last_weights` keeps a detached copy of the latest weights for drawing attention maps.
    `need_weights=False` returns (output, None) as in PyTorch, and `last_weights` is None then.
    `fused=True` computes the attention of all heads as one node (see `scaled_dot_product_attention`);
    the default, False, records each step. The attribute `fused` can be changed later.
    """

    last_weights: Tensor | None

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True, kdim: int | None = None,
                 vdim: int | None = None, fused: bool = False) -> None:
        super().__init__()
        if num_heads <= 0 or d_model % num_heads != 0:
            raise ValueError(
                f"MultiHeadAttention: d_model={d_model} must be divisible by num_heads={num_heads} "
                f"(each head gets d_model / num_heads features)"
            )
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1], got {dropout}")
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.kdim = d_model if kdim is None else kdim
        self.vdim = d_model if vdim is None else vdim
        self.dropout = dropout
        self.fused = bool(fused)
        self.last_weights = None
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(self.kdim, d_model, bias=bias)
        self.w_v = nn.Linear(self.vdim, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def _check(self, query, key, value, mask):
        for name, t in (("query", query), ("key", key), ("value", value)):
            check_tensor(t, "MultiHeadAttention", name)
        q, k, v = tuple(query.shape), tuple(key.shape), tuple(value.shape)
        ok = (
            len(q) in (2, 3) and len(k) == len(q) and len(v) == len(q)
            and q[-1] == self.d_model and k[-1] == self.kdim and v[-1] == self.vdim
            and k[:-1] == v[:-1] and q[:-2] == k[:-2]
        )
        if not ok:
            raise RuntimeError(
                f"MultiHeadAttention: expected query (B, Tq, {self.d_model}), key (B, Tk, {self.kdim}) and "
                f"value (B, Tk, {self.vdim}) (or the same without B), got query {q}, key {k}, value {v}"
            )
        if mask is not None and getattr(mask, "ndim", 0) == 3:
            raise RuntimeError(
                f"MultiHeadAttention: a 3-D mask of shape {tuple(mask.shape)} is ambiguous against the "
                "scores (B, H, Tq, Tk); use (Tq, Tk), (B, 1, 1, Tk), (B, 1, Tq, Tk) or (B, H, Tq, Tk)"
            )

    def forward(self, query: Tensor, key: Tensor | None = None, value: Tensor | None = None, mask: Tensor | None = None,
                is_causal: bool = False, need_weights: bool = True) -> tuple[Tensor, Tensor | None]:
        if key is None:
            key = query
        if value is None:
            value = key
        self._check(query, key, value, mask)
        unbatched = query.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        (B, Tq), Tk = query.shape[:2], key.shape[1]
        H, dh = self.num_heads, self.head_dim

        # 1. project, and split the d_model features into H heads of head_dim each (every step named:
        #    explain() and the graph pictures show `w_q`, `split heads` ... beside the nodes)
        with step("w_q"):
            q = self.w_q(query)                                     # (B, Tq, d_model)
        with step("w_k"):
            k = self.w_k(key)                                       # (B, Tk, d_model)
        with step("w_v"):
            v = self.w_v(value)                                     # (B, Tk, d_model)
        with step("split heads"):
            q = q.reshape(B, Tq, H, dh).transpose(1, 2)             # (B, H, Tq, dh)
            k = k.reshape(B, Tk, H, dh).transpose(1, 2)             # (B, H, Tk, dh)
            v = v.reshape(B, Tk, H, dh).transpose(1, 2)             # (B, H, Tk, dh)

        # 2. attend: every head on its own, scaled by 1/sqrt(head_dim) (the d_k of each head)
        out, weights = scaled_dot_product_attention(
            q, k, v, mask=mask, dropout_p=self.dropout, is_causal=is_causal, training=self.training,
            fused=self.fused, need_weights=need_weights,
        )                                                           # (B, H, Tq, dh), (B, H, Tq, Tk) or None

        # 3. merge the heads back side by side, and let w_o mix them
        with step("merge heads"):
            out = out.transpose(1, 2).reshape(B, Tq, self.d_model)  # (B, Tq, d_model)
        with step("w_o"):
            out = self.w_o(out)                                     # (B, Tq, d_model)

        self.last_weights = weights.detach() if weights is not None else None  # (None unless need_weights)
        if unbatched:
            out, weights = out.squeeze(0), (weights.squeeze(0) if weights is not None else None)
        return out, weights

    def extra_repr(self) -> str:
        extra = ""
        if self.kdim != self.d_model or self.vdim != self.d_model:
            extra = f", kdim={self.kdim}, vdim={self.vdim}"
        if self.fused:
            extra += ", fused=True"
        return f"d_model={self.d_model}, num_heads={self.num_heads}, dropout={self.dropout}{extra}"
