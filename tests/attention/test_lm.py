"""attention.lm: DecoderLM runs the fused attention unless asked not to, with the same parameters;
generate samples text the way nanoGPT does (checked against the math and PyTorch's sampler)."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from attention.lm import DecoderLM, next_token_probs
from minitensor.testing import assert_close


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


# ---- generate ------------------------------------------------------------------------------------

def _lm(vocab=7, block=5, dropout=0.0, seed=0):
    mt.manual_seed(seed)
    return DecoderLM(vocab_size=vocab, block_size=block, n_layer=2, n_head=2, d_model=8, dropout=dropout)


PROMPT = mt.tensor([[1, 2, 3], [4, 0, 6]])


def _greedy_by_hand(model, idx, n):
    """The greedy loop written out: crop to block_size, take the last position's argmax, append."""
    seq = idx.numpy(force=True)
    with mt.no_grad():
        for _ in range(n):
            logits = model(mt.from_numpy(seq[:, -model.block_size:])).numpy(force=True)[:, -1, :]
            seq = np.concatenate([seq, logits.argmax(-1)[:, None]], axis=1)
    return seq


def test_generate_extends_every_row_and_keeps_the_prompt():
    model = _lm()
    out = model.generate(PROMPT, 9, generator=mt.Generator().manual_seed(0))
    assert out.shape == (2, 12) and out.dtype == mt.int64
    assert out[:, :3].tolist() == PROMPT.tolist()
    assert ((out.numpy() >= 0) & (out.numpy() < 7)).all()
    assert not out.requires_grad and out.grad_fn is None
    assert model.generate(PROMPT, 0).tolist() == PROMPT.tolist()
    assert model.generate(mt.zeros(0, 2, dtype=mt.int64), 4).shape == (0, 6)
    assert PROMPT.tolist() == [[1, 2, 3], [4, 0, 6]]  # the caller's ids are untouched


def test_generate_is_reproducible_from_a_seed_and_changes_with_it():
    model = _lm()
    a = model.generate(PROMPT, 20, generator=mt.Generator().manual_seed(1))
    b = model.generate(PROMPT, 20, generator=mt.Generator().manual_seed(1))
    c = model.generate(PROMPT, 20, generator=mt.Generator().manual_seed(2))
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()
    mt.manual_seed(5)
    d = model.generate(PROMPT, 20)  # the global generator when none is given
    mt.manual_seed(5)
    assert model.generate(PROMPT, 20).tolist() == d.tolist()


def test_a_private_generator_leaves_the_global_one_alone():
    model = _lm()
    mt.manual_seed(3)
    before = mt.get_rng_state()
    model.generate(PROMPT, 5, generator=mt.Generator().manual_seed(0))
    assert mt.get_rng_state() == before


def test_temperature_zero_is_greedy_and_so_is_top_k_one():
    model = _lm()
    greedy = model.generate(PROMPT, 12, temperature=0)
    assert greedy.tolist() == _greedy_by_hand(model, PROMPT, 12).tolist()
    for seed in range(3):
        top1 = model.generate(PROMPT, 12, top_k=1, generator=mt.Generator().manual_seed(seed))
        assert top1.tolist() == greedy.tolist()


def test_generate_crops_the_context_to_block_size():
    """A prompt longer than block_size: only its last block_size tokens matter."""
    model = _lm(block=5)
    long = mt.tensor(np.random.default_rng(0).integers(0, 7, size=(2, 11)))
    out = model.generate(long, 8, temperature=0)
    assert out[:, :11].tolist() == long.tolist()
    assert out[:, 11:].tolist() == model.generate(long[:, -5:], 8, temperature=0)[:, 5:].tolist()
    assert out.tolist() == _greedy_by_hand(model, long, 8).tolist()


def test_generate_runs_in_eval_mode_and_restores_the_mode():
    model = _lm(dropout=0.5)
    model.train()
    first = model.generate(PROMPT, 10, temperature=0)
    assert model.training and all(m.training for m in model.modules())
    assert model.generate(PROMPT, 10, temperature=0).tolist() == first.tolist()  # no dropout noise
    assert first.tolist() == _greedy_by_hand(model.eval(), PROMPT, 10).tolist()
    model.train()
    with pytest.raises(IndexError):
        model.generate(mt.tensor([[9]]), 3)  # id 9 is past the vocabulary of 7
    assert model.training  # restored on the way out of an error too
    model.eval()
    model.generate(PROMPT, 2)
    assert not model.training


def test_generate_records_no_graph_and_touches_no_gradient():
    model = _lm()
    model.generate(PROMPT, 3)
    assert all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(temperature=-0.5), ValueError, "temperature must be a finite number >= 0.*-0.5"),
    (dict(temperature=float("nan")), ValueError, "temperature must be a finite number"),
    (dict(temperature=float("inf")), ValueError, "temperature must be a finite number"),
    (dict(top_k=0), ValueError, "top_k must be None or an integer >= 1, got 0"),
    (dict(top_k=2.5), ValueError, "top_k must be None or an integer >= 1, got 2.5"),
    (dict(max_new_tokens=-1), ValueError, "max_new_tokens must be an integer >= 0, got -1"),
    (dict(max_new_tokens=2.0), ValueError, "max_new_tokens must be an integer >= 0, got 2.0"),
    (dict(idx=mt.tensor([1, 2, 3])), ValueError, r"idx must have shape \(B, T\).*got shape \(3,\)"),
    (dict(idx=mt.zeros(2, 0, dtype=mt.int64)), ValueError,
     r"idx must have shape.*at least one token.*got shape \(2, 0\)"),
    (dict(idx=mt.tensor([[1.0, 2.0]])), RuntimeError, "idx must hold integer token ids.*float32"),
    (dict(idx=[[1, 2]]), TypeError, "idx must be a Tensor.*got list"),
])
def test_generate_refuses_bad_arguments(kwargs, error, message):
    model = _lm()
    args = {"idx": PROMPT, "max_new_tokens": 3, **kwargs}
    with pytest.raises(error, match="DecoderLM.generate: " + message):
        model.generate(**args)


def test_int32_ids_are_accepted_and_the_result_is_int64():
    model = _lm()
    out = model.generate(PROMPT.int(), 3, temperature=0)
    assert out.dtype == mt.int64 and out.tolist() == model.generate(PROMPT, 3, temperature=0).tolist()


# ---- the distribution generate draws from -----------------------------------------------------------

def test_next_token_probs_is_softmax_of_logits_over_temperature_within_the_top_k():
    z = np.array([[2.0, 1.0, 0.5, 0.5, -1.0], [0.0, 3.0, 3.0, 1.0, 2.0]])
    for temperature in (0.5, 1.0, 2.0):
        p = next_token_probs(mt.tensor(z), temperature).numpy()
        want = np.exp(z / temperature) / np.exp(z / temperature).sum(-1, keepdims=True)
        np.testing.assert_allclose(p, want, rtol=1e-12)
    p = next_token_probs(mt.tensor(z), 1.0, top_k=2).numpy()
    np.testing.assert_allclose(p[0], np.exp([2.0, 1.0, -np.inf, -np.inf, -np.inf]) / np.exp([2.0, 1.0]).sum())
    np.testing.assert_allclose(p[1], [0, 0.5, 0.5, 0, 0])
    p = next_token_probs(mt.tensor(z), 1.0, top_k=3).numpy()  # a tie at the 3rd value keeps both
    assert (p[0] > 0).tolist() == [True, True, True, True, False]
    np.testing.assert_allclose(next_token_probs(mt.tensor(z), 1.0, top_k=50).numpy(),
                               next_token_probs(mt.tensor(z)).numpy())  # k beyond the vocabulary: all kept


def test_next_token_probs_equals_nanogpts_torch_code():
    """nanoGPT's sampling step written with torch (topk, the k-th value as threshold, -inf, softmax)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    z = rng.normal(size=(6, 11)) * 3
    z[0, 3] = z[0, 7] = z[0].max()  # a tie at the top
    z[1, :4] = 0.25                 # a tie around the k-th value
    for temperature, top_k in [(1.0, None), (0.7, None), (1.6, 4), (1.0, 1), (0.3, 11), (1.0, 20)]:
        logits = torch.tensor(z) / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
        want = torch.nn.functional.softmax(logits, dim=-1).numpy()
        got = next_token_probs(mt.tensor(z), temperature, top_k).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


def _frequencies(draws, vocab):
    return np.bincount(np.asarray(draws).reshape(-1), minlength=vocab) / np.asarray(draws).size


def test_sampled_tokens_follow_the_temperature_scaled_distribution():
    """20,000 rows, one new token each: their frequencies match softmax(z / T) of the model's own logits."""
    model = _lm(vocab=7, seed=4)
    prompt = mt.tensor([[1, 5, 2]] * 20000)
    with mt.no_grad():
        z = model.eval()(prompt[:1])[:, -1, :]
    for temperature, top_k in [(1.0, None), (0.5, None), (3.0, None), (1.0, 3)]:
        p = next_token_probs(z, temperature, top_k).numpy()[0]
        draws = model.generate(prompt, 1, temperature=temperature, top_k=top_k,
                               generator=mt.Generator().manual_seed(7))[:, -1].numpy()
        freq = _frequencies(draws, 7)
        se = np.sqrt(p * (1 - p) / len(draws))
        assert (np.abs(freq - p) <= 5 * se + 1e-12).all(), (temperature, top_k, freq, p)
        if top_k is not None:
            assert (freq[p == 0] == 0).all()  # nothing outside the top k is ever drawn
    cold, hot = (next_token_probs(z, t).numpy()[0] for t in (0.5, 3.0))
    assert cold.max() > next_token_probs(z).numpy()[0].max() > hot.max()  # sharper when cold, flatter when hot
