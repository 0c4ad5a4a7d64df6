r"""A pre-LayerNorm transformer block, the unit a decoder-only language model stacks:

    x = x + Dropout(MultiHeadAttention(LayerNorm_1(x)))
    x = x + FeedForward(LayerNorm_2(x))            FeedForward = fc2(GELU(fc1(.))), then Dropout

Normalising *before* each sublayer leaves the residual path an identity from input to output,
so gradients reach early blocks undiminished and no learning-rate warm-up is needed to start.
"""
from __future__ import annotations

from typing import Literal, overload

import minitensor.nn as nn
from minitensor import Tensor

from .functional import check_tensor
from .layers import MultiHeadAttention

_ACTIVATIONS: dict[str, type[nn.Module]] = {"gelu": nn.GELU, "relu": nn.ReLU}


class FeedForward(nn.Module):
    """Position-wise MLP: fc1 (d_model -> d_ff), activation, fc2 (d_ff -> d_model), dropout."""

    def __init__(self, d_model: int, d_ff: int | None = None, dropout: float = 0.0, bias: bool = True,
                 activation: str | nn.Module = "gelu") -> None:
        super().__init__()
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.d_model, self.d_ff = d_model, d_ff
        self.fc1 = nn.Linear(d_model, d_ff, bias=bias)
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(
                    f"FeedForward: activation must be one of {sorted(_ACTIVATIONS)} or a Module, got {activation!r}")
            activation = _ACTIVATIONS[activation]()
        self.act = activation
        self.fc2 = nn.Linear(d_ff, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        check_tensor(x, "FeedForward")
        return self.dropout(self.fc2(self.act(self.fc1(x))))   # (..., d_model) -> (..., d_ff) -> (..., d_model)


class TransformerBlock(nn.Module):
    """Pre-LN block: `ln1`, `attn` (MultiHeadAttention), `resid_dropout`, `ln2`, `mlp` (FeedForward).

    forward(x (B, T, d_model), mask=None) -> (B, T, d_model). With `causal=True` every forward
    hides future positions (combined with `mask`). The attention weights of the last forward,
    (B, num_heads, T, T), stay in `block.attn.last_weights`; `return_weights=True` also returns
    them (with their graph). `fused=True` gives `attn` the fused attention (one node; see
    `attention.scaled_dot_product_attention`); by default it records each step.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int | None = None, dropout: float = 0.0,
                 causal: bool = False, bias: bool = True, activation: str | nn.Module = "gelu",
                 layer_norm_eps: float = 1e-5, fused: bool = False) -> None:
        super().__init__()
        self.d_model, self.num_heads, self.causal = d_model, num_heads, causal
        self.ln1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, bias=bias, fused=fused)
        self.resid_dropout = nn.Dropout(dropout)
        self.ln2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.mlp = FeedForward(d_model, d_ff, dropout=dropout, bias=bias, activation=activation)

    @overload
    def forward(self, x: Tensor, mask: Tensor | None = None, is_causal: bool | None = None,
                return_weights: Literal[False] = False) -> Tensor: ...
    @overload
    def forward(self, x: Tensor, mask: Tensor | None = None, is_causal: bool | None = None, *,
                return_weights: Literal[True]) -> tuple[Tensor, Tensor | None]: ...
    def forward(self, x: Tensor, mask: Tensor | None = None, is_causal: bool | None = None,
                return_weights: bool = False) -> Tensor | tuple[Tensor, Tensor | None]:
        check_tensor(x, "TransformerBlock")
        causal = self.causal if is_causal is None else is_causal
        a, weights = self.attn(self.ln1(x), mask=mask, is_causal=causal)   # (B, T, d), (B, H, T, T)
        x = x + self.resid_dropout(a)                                      # (B, T, d)
        x = x + self.mlp(self.ln2(x))                                      # (B, T, d)
        return (x, weights) if return_weights else x

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, causal={self.causal}"
