"""attention: self-attention and multi-head attention built only from minitensor's public API.

    import minitensor as mt, attention
    x = mt.randn(2, 5, 16)
    mha = attention.MultiHeadAttention(d_model=16, num_heads=4)
    out, weights = mha(x, mask=attention.causal_mask(5))     # (2, 5, 16), (2, 4, 5, 5)

Mask convention: bool True (or int 1) = may attend; float masks are added to the scores.
"""
from .functional import basic_self_attention, is_fused_enabled, scaled_dot_product_attention, set_fused_enabled
from .fused import FusedAttention, FusedAttentionWeights
from .layers import MultiHeadAttention, ScaledDotProductAttention, SelfAttention
from .masks import causal_mask, padding_mask
from .positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding
from .transformer import FeedForward, TransformerBlock

__all__ = [
    "basic_self_attention", "scaled_dot_product_attention", "set_fused_enabled", "is_fused_enabled",
    "FusedAttention", "FusedAttentionWeights", "ScaledDotProductAttention", "SelfAttention", "MultiHeadAttention",
    "causal_mask", "padding_mask", "SinusoidalPositionalEncoding", "LearnedPositionalEncoding",
    "FeedForward", "TransformerBlock",
]
