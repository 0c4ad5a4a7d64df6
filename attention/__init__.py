"""attention: self-attention and multi-head attention built only from minitensor's public API.

    import minitensor as mt, attention
    x = mt.randn(2, 5, 16)
    mha = attention.MultiHeadAttention(d_model=16, num_heads=4)
    out, weights = mha(x, mask=attention.causal_mask(5))     # (2, 5, 16), (2, 4, 5, 5)

Mask convention: bool True (or int 1) = may attend; float masks are added to the scores.

Every function and layer computes attention step by step by default (matmul, scale, mask,
softmax, matmul: each a node that `minitensor.autograd.explain` shows). `fused=True` asks for
the same math as one node with a hand-derived backward, for speed (`attention.fused`); the
trainer's model, `attention.lm.DecoderLM`, asks for it.

Pictures: `show_heatmaps` (matplotlib) draws weights or their gradients for any layers and heads,
`attention_viewer_html` writes a page to explore them in a browser, `unicode_heatmap` prints one.
"""
from minitensor import __version__ as __version__  # one distribution (minitensor-attention), one version

from .functional import basic_self_attention, scaled_dot_product_attention
from .fused import FusedAttention, FusedAttentionWeights
from .heatmaps import show_heatmaps, unicode_heatmap
from .layers import MultiHeadAttention, ScaledDotProductAttention, SelfAttention
from .masks import causal_mask, padding_mask
from .positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding
from .transformer import FeedForward, TransformerBlock
from .viewer import attention_viewer_html

__all__ = [
    "basic_self_attention", "scaled_dot_product_attention",
    "FusedAttention", "FusedAttentionWeights", "ScaledDotProductAttention", "SelfAttention", "MultiHeadAttention",
    "causal_mask", "padding_mask", "SinusoidalPositionalEncoding", "LearnedPositionalEncoding",
    "FeedForward", "TransformerBlock", "show_heatmaps", "unicode_heatmap", "attention_viewer_html",
]


def __getattr__(name):
    # the old global switch: code written for it gets told what replaced it, not a bare AttributeError
    if name in ("set_fused_enabled", "is_fused_enabled"):
        raise AttributeError(f"attention.{name} was removed: attention is composed (one op per step) unless a "
                             "call or layer is given fused=True")
    raise AttributeError(f"module 'attention' has no attribute {name!r}")
