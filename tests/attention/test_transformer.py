"""attention.transformer: FeedForward and the pre-LayerNorm TransformerBlock."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import attention
import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from attention import FeedForward, TransformerBlock
from minitensor.testing import assert_close


def check_direction(fn, tensors, seed=0, eps=1e-6, atol=1e-8, rtol=1e-6):
    """<u, J v> by central differences along a random v against <J^T u, v> from one backward."""
    rng = np.random.default_rng(seed)
    out = fn()
    u = rng.standard_normal(out.shape)
    grads = mt.autograd.grad(out, tensors, grad_outputs=mt.tensor(u), allow_unused=True)
    vs = [rng.standard_normal(t.shape) for t in tensors]
    predicted = sum(float((g.numpy(force=True) * v).sum()) for g, v in zip(grads, vs) if g is not None)
    origs = [t.numpy(force=True).copy() for t in tensors]

    def at(sign):
        with mt.no_grad():
            for t, o, v in zip(tensors, origs, vs):
                t.data[...] = o + sign * eps * v
            val = float((fn().numpy(force=True) * u).sum())
            for t, o in zip(tensors, origs):
                t.data[...] = o
        return val

    numeric = (at(1) - at(-1)) / (2 * eps)
    assert abs(predicted - numeric) <= atol + rtol * abs(numeric), f"<J^T u, v> = {predicted}, <u, J v> = {numeric}"


def test_block_structure_and_names():
    block = TransformerBlock(8, 2)
    assert block.mlp.d_ff == 32 and isinstance(block.mlp.act, nn.GELU)
    assert isinstance(block.attn, attention.MultiHeadAttention) and block.attn.num_heads == 2
    names = list(block.state_dict())
    assert names[:2] == ["ln1.weight", "ln1.bias"] and "attn.w_q.weight" in names and "mlp.fc2.bias" in names
    assert TransformerBlock(8, 2, d_ff=5, bias=False).mlp.fc1.bias is None
    assert isinstance(FeedForward(4, activation="relu").act, nn.ReLU)
    with pytest.raises(ValueError, match="activation"):
        FeedForward(4, activation="swish")
    with pytest.raises(ValueError, match="divisible"):
        TransformerBlock(6, 4)


def test_block_is_pre_layernorm_with_residuals():
    mt.manual_seed(0)
    block = TransformerBlock(6, 3, causal=True).double()
    x = mt.randn(2, 4, 6, dtype=mt.float64)
    out, w = block(x, return_weights=True)
    a, w_ref = block.attn(block.ln1(x), is_causal=True)
    h = x + a
    ref = h + block.mlp.fc2(F.gelu(block.mlp.fc1(block.ln2(h))))
    assert_close(out, ref, rtol=1e-12, atol=1e-12)
    assert_close(w, w_ref, rtol=0, atol=0)
    assert tuple(block.attn.last_weights.shape) == (2, 3, 4, 4)


@given(st.integers(1, 2), st.integers(1, 4), st.sampled_from([(1, 4), (2, 2), (2, 3)]), st.booleans(), st.booleans())
def test_block_gradients_for_input_and_all_weights(B, T, heads_dim, causal, padded):
    H, dh = heads_dim
    rng = np.random.default_rng(B * 10 + T + H * 100)
    mt.manual_seed(int(rng.integers(1 << 30)))
    block = TransformerBlock(H * dh, H, d_ff=5, causal=causal).double()
    x = mt.tensor(rng.standard_normal((B, T, H * dh)), requires_grad=True)
    mask = attention.padding_mask(rng.integers(1, T + 1, size=B), T) if padded else None
    check_direction(lambda: block(x, mask=mask), [x] + list(block.parameters()), seed=int(rng.integers(1 << 30)))


@given(st.integers(2, 5), st.data())
def test_stacked_causal_blocks_ignore_the_future_exactly(T, data):
    t = data.draw(st.integers(0, T - 2), label="t")
    mt.manual_seed(T)
    blocks = nn.Sequential(TransformerBlock(4, 2, causal=True), TransformerBlock(4, 2, causal=True)).double()
    rng = np.random.default_rng(T + 10 * t)
    x = mt.tensor(rng.standard_normal((2, T, 4)), requires_grad=True)
    out = blocks(x)
    x2 = x.numpy(force=True).copy()
    x2[:, t + 1:] = rng.standard_normal(x2[:, t + 1:].shape) * 3
    assert np.array_equal(out.numpy(force=True)[:, : t + 1], blocks(mt.tensor(x2)).numpy(force=True)[:, : t + 1])
    up = rng.standard_normal(out.shape)
    up[:, t + 1:] = 0
    out.backward(mt.tensor(up))
    assert (x.grad.numpy(force=True)[:, t + 1:] == 0).all() and np.abs(x.grad.numpy(force=True)[:, : t + 1]).sum() > 0


def test_block_dropout_only_in_training():
    mt.manual_seed(1)
    block = TransformerBlock(4, 2, dropout=0.3).double()
    x = mt.randn(2, 5, 4, dtype=mt.float64)
    block.eval()
    a, b = block(x), block(x)
    assert np.array_equal(a.numpy(force=True), b.numpy(force=True))
    block.train()
    assert not np.allclose(block(x).numpy(force=True), a.numpy(force=True))


def test_block_float32_stays_float32_and_round_trips_its_state_dict():
    mt.manual_seed(2)
    block = TransformerBlock(4, 2, causal=True)
    x = mt.randn(2, 3, 4, requires_grad=True)
    out = block(x)
    assert out.dtype == mt.float32
    out.backward(mt.ones(2, 3, 4))
    assert x.grad.dtype == mt.float32 and all(p.grad.dtype == mt.float32 for p in block.parameters())
    other = TransformerBlock(4, 2, causal=True)
    other.load_state_dict(block.state_dict())
    assert np.array_equal(other(x).numpy(force=True), out.numpy(force=True))


# ---- the default path shows every step; fused=True is asked for --------------------------------

def test_a_default_block_explains_softmax_and_matmul_and_a_fused_one_a_fused_node():
    rng = np.random.default_rng(5)
    x = mt.tensor(rng.standard_normal((2, 4, 6)), requires_grad=True)
    u = mt.tensor(rng.standard_normal((2, 4, 6)))
    ops = {}
    for fused in (False, True):
        mt.manual_seed(5)
        block = TransformerBlock(6, 3, causal=True, **({"fused": True} if fused else {})).double()  # False: the default
        assert block.attn.fused is fused
        ops[fused] = [r.op for r in mt.autograd.explain((block(x) * u).sum()).rows]
    assert "SoftmaxBackward" in ops[False] and ops[False].count("MatmulBackward") == 2
    assert not [op for op in ops[False] if "Fused" in op]
    assert "FusedAttentionBackward" in ops[True] and "SoftmaxBackward" not in ops[True]


def test_a_block_built_fused_equals_the_composed_one():
    """Output and the gradients of the input and every parameter, float64, random upstream
    weights, with dropout (the same keep-masks) and a padding mask."""
    rng = np.random.default_rng(6)
    x = mt.tensor(rng.standard_normal((2, 5, 6)), requires_grad=True)
    u = mt.tensor(rng.standard_normal((2, 5, 6)))
    mask = attention.padding_mask([5, 3], 5)
    results = []
    for fused in (False, True):
        mt.manual_seed(6)
        block = TransformerBlock(6, 3, dropout=0.2, causal=True, fused=fused).double()
        mt.manual_seed(7)
        out = block(x, mask=mask)
        params = list(block.parameters())
        results.append([out, *mt.autograd.grad(out, [x] + params, grad_outputs=u)])
    for a, b in zip(*results):
        assert_close(a, b, rtol=1e-10, atol=1e-12)
