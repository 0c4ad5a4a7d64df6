r"""`nn.MultiheadAttention`: PyTorch's multi-head attention layer, built from minitensor's ops.

    MultiHead(Q, K, V) = Concat(head_1, ..., head_H) W^O + b^O
    head_h = softmax(Q W_h^Q (K W_h^K)^T / sqrt(d) + M) V W_h^V          d = embed_dim / H

(each projection also adds its bias). M is the mask: 0 where a query may look at a key, -inf
where it may not (or any float the caller adds to the scores).

Parameters as PyTorch names and shapes them, so state dicts load both ways:
    in_proj_weight (3E, E)   W^Q, W^K, W^V stacked (rows 0:E, E:2E, 2E:3E); when kdim or vdim
                             differ from E it is None, and q_proj_weight (E, E),
                             k_proj_weight (E, kdim), v_proj_weight (E, vdim) hold them instead
    in_proj_bias (3E,)       b^Q, b^K, b^V stacked (None with bias=False)
    out_proj                 a Linear(E, E): W^O, b^O
    bias_k, bias_v (1, 1, E) with add_bias_kv=True: one more learned key and value
W_h^Q is the h-th block of d rows of W^Q: one matrix product projects every head at once, and
a reshape splits the result into heads.

The `attention` package has the readable teaching version (`attention.MultiHeadAttention`, one
Linear per projection, batch first, weights per head); this one follows PyTorch's conventions:
sequence-first input unless batch_first=True, bool masks where True means "may NOT attend",
weights averaged over heads unless average_attn_weights=False.
"""
from __future__ import annotations

import math
import warnings

from .. import _dtype
from ..autograd.steps import step
from ..factories import zeros
from ..ops.shape import cat
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from . import functional as F, init
from .attention import attend
from .layers import Linear, _empty
from .module import Module
from .parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """A plain Linear. PyTorch gives `out_proj` this class name (it tells its quantization tools to
    leave the layer alone); it is kept here so a model prints as it does in PyTorch."""


class MultiheadAttention(Module):
    r"""Multi-head attention with PyTorch's arguments, parameters, masks and return values.

    forward(query, key, value) takes query (L, N, E), key (S, N, kdim), value (S, N, vdim), or
    (N, L, E) ... with batch_first=True, or one unbatched sequence (L, E), (S, kdim), (S, vdim).
    It returns (output of query's shape, weights): weights (N, L, S) averaged over the heads,
    (N, H, L, S) with average_attn_weights=False, None with need_weights=False.

    key_padding_mask (N, S) or (S,): True (or -inf) marks a padded key nobody may attend to.
    attn_mask (L, S) or (N*H, L, S): bool True = may NOT attend; a float mask is added to the scores.
    is_causal: a hint that attn_mask is the causal mask; it needs attn_mask, as in PyTorch.
    A query whose every key is masked gets NaN with need_weights=True and 0 with
    need_weights=False, the numbers PyTorch 2.13 computes (softmax of only -inf is NaN;
    F.scaled_dot_product_attention gives such a query weights 0).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be greater than 0, "
                             f"got embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError(f"MultiheadAttention: embed_dim must be divisible by num_heads, got "
                                 f"embed_dim={embed_dim} and num_heads={num_heads} (each head gets "
                                 "embed_dim / num_heads features)")
        super().__init__()
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first, self.add_zero_attn = dropout, batch_first, add_zero_attn

        where = "MultiheadAttention"
        if self._qkv_same_embed_dim:
            self.in_proj_weight = _empty((3 * embed_dim, embed_dim), dtype, device, where)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = _empty((embed_dim, embed_dim), dtype, device, where)
            self.k_proj_weight = _empty((embed_dim, self.kdim), dtype, device, where)
            self.v_proj_weight = _empty((embed_dim, self.vdim), dtype, device, where)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = _empty((3 * embed_dim,), dtype, device, where)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k: Parameter | None = _empty((1, 1, embed_dim), dtype, device, where)
            self.bias_v: Parameter | None = _empty((1, 1, embed_dim), dtype, device, where)
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        """PyTorch's init: Xavier-uniform projections, zero biases, Xavier-normal bias_k and bias_v
        (out_proj.weight keeps Linear's own init)."""
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _projection(self, i):
        """(W, b) of projection i (0: query, 1: key, 2: value): rows of the stacked parameters, or the separate one."""
        E = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight[i * E:(i + 1) * E]
        else:
            w = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[i]
        b = None if self.in_proj_bias is None else self.in_proj_bias[i * E:(i + 1) * E]
        return w, b

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        batched = _check_inputs(query, key, value, key_padding_mask, attn_mask, self.num_heads)
        where = "MultiheadAttention"
        _check_mask(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask", where)
        _check_mask(attn_mask, "attn_mask", None, "", where)
        if is_causal and attn_mask is None:
            raise RuntimeError("MultiheadAttention: is_causal=True is a hint that attn_mask is the causal mask, and "
                               "needs attn_mask; nn.Transformer.generate_square_subsequent_mask(L) makes it")
        # PyTorch trusts the hint where it hands the work to scaled_dot_product_attention: it drops
        # attn_mask and asks for the causal mask instead. Done the same way, an attn_mask that is not
        # causal gives PyTorch's numbers here too.
        causal_kernel = is_causal and key_padding_mask is None and not need_weights
        if causal_kernel:
            attn_mask = None

        self._check_sizes(query, key, value, batched)

        # 0. one layout for the work: batch first (N, L, E); an unbatched sequence is a batch of one
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        N, L, E = query.shape
        S, H, d = key.shape[1], self.num_heads, self.head_dim
        mask = _merged(_attn_mask_as_4d(attn_mask, N, H, L, S),          # (1 or N, 1 or H, L, S)
                       _padding_mask_as_4d(key_padding_mask, N, S), query.dtype)  # (N, 1, 1, S)

        # 1. project: q = query W^Q^T + b^Q, k = key W^K^T + b^K, v = value W^V^T + b^V
        # (each named as a step: explain() and the pictures show `w_q` ... beside the nodes)
        with step("w_q"):
            w_q, b_q = self._projection(0)
            q = F.linear(query, w_q, b_q)                                # (N, L, E)
        with step("w_k"):
            w_k, b_k = self._projection(1)
            k = F.linear(key, w_k, b_k)                                  # (N, S, E)
        with step("w_v"):
            w_v, b_v = self._projection(2)
            v = F.linear(value, w_v, b_v)                                # (N, S, E)
        if self.bias_k is not None and self.bias_v is not None:  # one more key and value, learned, seen by all
            k = cat([k, self.bias_k.expand(N, 1, E)], dim=1)             # (N, S+1, E)
            v = cat([v, self.bias_v.expand(N, 1, E)], dim=1)
            mask = _one_more_key(mask)

        # 2. split E into H heads of d features: head h is features h*d .. (h+1)*d
        with step("split heads"):
            q = q.reshape(N, L, H, d).transpose(1, 2)                    # (N, H, L, d)
            # S' named, not -1: a batch of N = 0 holds no elements, and -1 could then be any size
            k = k.reshape(N, k.shape[1], H, d).transpose(1, 2)           # (N, H, S', d)
            v = v.reshape(N, v.shape[1], H, d).transpose(1, 2)           # (N, H, S', d)
        if self.add_zero_attn:  # a key and value of zeros, so a query can attend to "nothing"
            k = cat([k, zeros(N, H, 1, d, dtype=k.dtype)], dim=2)        # (N, H, S'+1, d)
            v = cat([v, zeros(N, H, 1, d, dtype=v.dtype)], dim=2)
            mask = _one_more_key(mask)

        # 3. attend, every head on its own: softmax(q k^T / sqrt(d) + mask) v
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            if mask is not None and mask.dtype != q.dtype:  # it would change the scores' dtype: PyTorch refuses too
                raise RuntimeError(f"MultiheadAttention: a float mask must have the query's dtype "
                                   f"{query.dtype}, got {mask.dtype}")
            # the mask is only added, as PyTorch does here: a query whose every key is -inf gets NaN
            out, weights = attend(q, k, v, bias=mask, dropout_p=dropout_p, dropped_weights=True)  # (N, H, L, d)
        else:
            weights = None
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                                 is_causal=causal_kernel)  # (N, H, L, d)

        # 4. merge the heads back side by side (N, L, E), and let W^O mix them
        with step("merge heads"):
            out = out.transpose(1, 2).reshape(N, L, E)                   # (N, L, E)
        with step("w_o"):
            out = self.out_proj(out)                                     # (N, L, E)

        # 5. back to the caller's layout
        if weights is not None and average_attn_weights:
            with step("mean over heads"):
                weights = weights.mean(dim=1)                            # (N, L, S')
        if not batched:
            out = out.squeeze(0)                                         # (L, E)
            weights = None if weights is None else weights.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)                                    # (L, N, E)
        return out, weights

    def _check_sizes(self, query, key, value, batched):
        """Features and lengths of query, key and value as given, checked with PyTorch's error types."""
        q, k, v = tuple(query.shape), tuple(key.shape), tuple(value.shape)
        shapes = f"query {q}, key {k} and value {v}"
        # (batch, sequence) sizes of each: the layout is (L, N, E), (N, L, E) with batch_first, or (L, E)
        lead = (lambda s: s[:2] if self.batch_first else s[1::-1]) if batched else (lambda s: (1, s[0]))
        if q[-1] != self.embed_dim:
            raise AssertionError(f"MultiheadAttention: was expecting embedding dimension of {self.embed_dim}, "
                                 f"but got query of shape {q}")
        if self._qkv_same_embed_dim and k != v:
            raise AssertionError(f"MultiheadAttention: key shape {k} does not match value shape {v}")
        if not self._qkv_same_embed_dim:
            if lead(k) != lead(v):
                raise AssertionError(f"MultiheadAttention: key's batch and sequence sizes {lead(k)} do not match "
                                     f"value's {lead(v)}, got {shapes}")
            if k[-1] != self.kdim or v[-1] != self.vdim:
                raise AssertionError(f"MultiheadAttention: expected key with kdim={self.kdim} and value with "
                                     f"vdim={self.vdim} features, got {shapes}")
        weight = self.in_proj_weight if self._qkv_same_embed_dim else self.q_proj_weight
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dtype != weight.dtype:  # PyTorch's RuntimeError, raised inside the projection
                raise RuntimeError(f"MultiheadAttention: {name} is {t.dtype} but the layer's weights are "
                                   f"{weight.dtype}; convert one with .to(dtype)")
        if lead(k)[0] != lead(q)[0] or k[-1] != self.kdim:
            raise RuntimeError(f"MultiheadAttention: expected one batch size, and {self.kdim} features in key and "
                               f"value, got {shapes} (batch_first={self.batch_first})")


def _check_inputs(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for a batched (3-D) query, False for an unbatched (2-D) one; PyTorch's AssertionErrors otherwise."""
    for name, t in (("query", query), ("key", key), ("value", value), ("key_padding_mask", key_padding_mask),
                    ("attn_mask", attn_mask)):
        if not isinstance(t, Tensor) and not (t is None and "mask" in name):
            raise TypeError(f"MultiheadAttention: {name} must be a Tensor, got {type(t).__name__}")
    shapes = f"query {tuple(query.shape)}, key {tuple(key.shape)} and value {tuple(value.shape)}"
    if query.ndim not in (2, 3):
        raise AssertionError(f"MultiheadAttention: query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor of shape {tuple(query.shape)}")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"MultiheadAttention: for {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D, got {shapes}")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"MultiheadAttention: for {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D, got shape {tuple(key_padding_mask.shape)}")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"MultiheadAttention: for {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D, got shape {tuple(attn_mask.shape)}")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"MultiheadAttention: expected a 3-D `attn_mask` of shape (num_heads, L, S) = "
                                 f"{expected} for the unbatched {shapes}, got {tuple(attn_mask.shape)}")
    return batched


def _check_mask(mask, name, other, other_name, where, stacklevel=3):
    """PyTorch's checks of a mask's dtype: bool or floating, and a warning when the two masks differ in it."""
    if mask is None:
        return
    if mask.dtype != _dtype.bool_ and _dtype.kind(mask.dtype) != "f":
        raise AssertionError(f"{where}: only bool and floating types of {name} are supported, got {mask.dtype}")
    if other is not None and other.dtype != mask.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                      f"instead (got {mask.dtype} and {other.dtype}).", UserWarning, stacklevel=stacklevel)


def _canonical_mask(mask, name, other, other_name, dtype, where):
    """A mask as a float to add to the scores (the Transformer layers hand MultiheadAttention these): a bool
    mask's True (may not attend) becomes -inf, False 0; a float mask stays as it is."""
    _check_mask(mask, name, other, other_name, where, stacklevel=4)
    if mask is not None and mask.dtype == _dtype.bool_:
        return zeros(mask.shape, dtype=dtype).masked_fill(mask, -math.inf)
    return mask


def _merged(attn_mask, key_padding_mask, dtype):
    """The two masks as one float to add to the scores, as PyTorch reads them: a bool mask's True (may NOT
    attend) is -inf, filled in (over the other mask, or 0); two float masks add up."""
    masks = [m for m in (attn_mask, key_padding_mask) if m is not None]
    floats = [m for m in masks if m.dtype != _dtype.bool_]
    hidden = [m for m in masks if m.dtype == _dtype.bool_]
    bias = None if not floats else floats[0] if len(floats) == 1 else floats[0] + floats[1]
    if not hidden:
        return bias
    hide = hidden[0] if len(hidden) == 1 else hidden[0].logical_or(hidden[1])
    return (zeros(hide.shape, dtype=dtype) if bias is None else bias).masked_fill(hide, -math.inf)


def _attn_mask_as_4d(mask, N, H, L, S):
    """attn_mask (L, S) or (N*H, L, S) as (1, 1, L, S) or (N, H, L, S): broadcastable to the scores."""
    if mask is None:
        return None
    shape = tuple(mask.shape)
    if mask.ndim == 2:
        if shape != (L, S):
            raise RuntimeError(f"MultiheadAttention: the shape of the 2D attn_mask is {shape}, but should be "
                               f"(L, S) = {(L, S)}")
        return mask.reshape(1, 1, L, S)
    if shape != (N * H, L, S):
        raise RuntimeError(f"MultiheadAttention: the shape of the 3D attn_mask is {shape}, but should be "
                           f"(N * num_heads, L, S) = {(N * H, L, S)}")
    return mask.reshape(N, H, L, S)


def _padding_mask_as_4d(mask, N, S):
    """key_padding_mask (N, S) as (N, 1, 1, S): the same keys hidden from every head and every query."""
    if mask is None:
        return None
    if tuple(mask.shape) != (N, S):
        raise AssertionError(f"MultiheadAttention: expected key_padding_mask of shape (N, S) = {(N, S)}, "
                             f"got {tuple(mask.shape)}")
    return mask.reshape(N, 1, 1, S)


def _one_more_key(mask):
    """A float mask with a column of zeros at the end: the key appended last is visible to every query."""
    return None if mask is None else F.pad(mask, (0, 1))


# ---- h-nnrest: F.multi_head_attention_forward, PyTorch's functional form of the layer above -------------------
def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
                                 bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
                                 key_padding_mask: Tensor | None = None, need_weights: bool = True,
                                 attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
                                 q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
                                 v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
                                 static_v: Tensor | None = None, average_attn_weights: bool = True,
                                 is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """MultiheadAttention's forward with the weights passed in (sequence-first (L, N, E) or unbatched (L, E)).

    It runs the layer's own forward on a layer made of these tensors (no second copy of the attention math);
    the gradient reaches the tensors passed. static_k and static_v (precomputed keys and values) are not
    supported.

    forward: q, k, v = x W_q^T, x W_k^T, x W_v^T split into heads;  o = softmax(q k^T / sqrt(d) + mask) v;
             out = merge(o) W_o^T + b_o
    VJP:     as MultiheadAttention's, through the same ops (attention's steps: see nn/attention.attend)
    """
    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k and static_v are not supported in "
                                  "minitensor; pass the keys and values as key and value")
    if query.shape[-1] != embed_dim_to_check:
        raise AssertionError(f"multi_head_attention_forward: was expecting embedding dimension of "
                             f"{embed_dim_to_check}, but got {query.shape[-1]}")
    E = embed_dim_to_check
    if E % num_heads:
        raise AssertionError(f"multi_head_attention_forward: embed_dim {E} not divisible by num_heads {num_heads}")
    layer = MultiheadAttention.__new__(MultiheadAttention)
    Module.__init__(layer)
    d = layer.__dict__  # plain attributes: the tensors are the caller's, not the layer's parameters
    d.update(embed_dim=E, num_heads=num_heads, head_dim=E // num_heads, dropout=dropout_p, batch_first=False,
             add_zero_attn=add_zero_attn, training=training, bias_k=bias_k, bias_v=bias_v,
             in_proj_bias=in_proj_bias, out_proj=lambda x: F.linear(x, out_proj_weight, out_proj_bias))
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("multi_head_attention_forward: use_separate_proj_weight is True but q_proj_weight, "
                                 "k_proj_weight or v_proj_weight is None")
        d.update(_qkv_same_embed_dim=False, in_proj_weight=None, q_proj_weight=q_proj_weight,
                 k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight, kdim=k_proj_weight.shape[1],
                 vdim=v_proj_weight.shape[1])
    else:
        if in_proj_weight is None:
            raise AssertionError("multi_head_attention_forward: use_separate_proj_weight is False but "
                                 "in_proj_weight is None")
        d.update(_qkv_same_embed_dim=True, in_proj_weight=in_proj_weight, q_proj_weight=None, k_proj_weight=None,
                 v_proj_weight=None, kdim=E, vdim=E)
    return layer.forward(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights,
                         is_causal)
