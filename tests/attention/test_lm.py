"""attention.lm: DecoderLM runs the fused attention unless asked not to, with the same parameters."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import assert_close

from attention.lm import DecoderLM


def _model(**kw):
    mt.manual_seed(0)
    return DecoderLM(vocab_size=5, block_size=6, n_layer=2, n_head=2, d_model=8, **kw).double()


IDX = mt.tensor(np.random.default_rng(1).integers(0, 5, size=(3, 6)))


def test_decoder_lm_uses_the_fused_attention_by_default(node_names):
    names = node_names(_model()(IDX))
    assert names.count("FusedAttentionBackward") == 2                # one per layer
    assert "SoftmaxBackward" not in names and "MatmulBackward" not in names
    assert all(block.attn.fused for block in _model().blocks)


def test_decoder_lm_with_fused_false_records_every_step_and_computes_the_same(node_names):
    composed, fused = _model(fused=False), _model()
    names = node_names(composed(IDX))
    assert names.count("SoftmaxBackward") == 2 and not [n for n in names if "Fused" in n]
    # the same parameters (a checkpoint of either loads into the other), values and gradients
    assert list(composed.state_dict()) == list(fused.state_dict())
    target = mt.tensor(np.random.default_rng(2).integers(0, 5, size=18))
    results = []
    for model in (composed, fused):
        logits = model(IDX)
        F.cross_entropy(logits.reshape(-1, 5), target).backward()
        results.append([logits] + [p.grad for p in model.parameters()])
    for a, b in zip(*results):
        assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_decoder_lm_on_a_1d_index_tensor_says_it_wants_b_t():
    model = DecoderLM(vocab_size=7, block_size=8, n_layer=1, n_head=1, d_model=4)
    with pytest.raises(ValueError, match=r"DecoderLM: expected token ids of shape \(B, T\), got shape \(5,\)"):
        model(mt.zeros(5, dtype=mt.int64))


def test_decoder_lm_on_an_empty_batch_gives_empty_logits_and_zero_gradients():
    model = DecoderLM(vocab_size=7, block_size=8, n_layer=1, n_head=1, d_model=4)
    logits = model(mt.zeros(0, 5, dtype=mt.int64))
    assert logits.shape == (0, 5, 7)
    logits.sum().backward()
    assert not model.tok_emb.weight.grad.numpy().any()
