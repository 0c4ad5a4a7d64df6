"""The attention layers called with something that is not a Tensor raise a TypeError naming the
layer and what it got, not an AttributeError from inside."""
import numpy as np
import pytest

import attention
from attention.lm import DecoderLM

NOT_TENSORS = [[[[1.0] * 4]], np.ones((1, 2, 4), np.float32), None]
CALLS = {
    "MultiHeadAttention": lambda x: attention.MultiHeadAttention(4, 2)(x),
    "SelfAttention": lambda x: attention.SelfAttention(4, 4)(x),
    "scaled_dot_product_attention": lambda x: attention.ScaledDotProductAttention()(x, x, x),
    "SinusoidalPositionalEncoding": lambda x: attention.SinusoidalPositionalEncoding(4, 8)(x),
    "LearnedPositionalEncoding": lambda x: attention.LearnedPositionalEncoding(8, 4)(x),
    "FeedForward": lambda x: attention.FeedForward(4)(x),
    "TransformerBlock": lambda x: attention.TransformerBlock(4, 2)(x),
    "DecoderLM": lambda x: DecoderLM(5, 4, 1, 1, 4)(x),
    "basic_self_attention": lambda x: attention.basic_self_attention(x),
}


@pytest.mark.parametrize("bad", NOT_TENSORS, ids=["list", "ndarray", "None"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_layers_name_themselves_and_what_they_got(name, bad):
    with pytest.raises(TypeError, match=rf"^{name}: \w+ must be a Tensor, got {type(bad).__name__}"):
        CALLS[name](bad)
