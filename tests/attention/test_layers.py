"""attention.layers: ScaledDotProductAttention, SelfAttention, MultiHeadAttention.

Layer gradients are checked against central differences in float64, for the inputs and every
parameter: element by element for the small layers, and by a random direction
<u, J v> (finite differences) = <J^T u, v> (backward) for every tensor at once.
"""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import attention
import minitensor as mt
import minitensor.nn as nn
from attention import MultiHeadAttention, ScaledDotProductAttention, SelfAttention
from minitensor.testing import assert_close

# ---- finite-difference helpers ------------------------------------------------------------------

def _weighted_output(fn, us):
    outs = fn()
    outs = outs if isinstance(outs, tuple) else (outs,)
    return sum(float((o.numpy(force=True) * u).sum()) for o, u in zip(outs, us))


def _analytic(fn, tensors, rng):
    outs = fn()
    outs = outs if isinstance(outs, tuple) else (outs,)
    us = [rng.standard_normal(o.shape) for o in outs]
    grads = mt.autograd.grad(outs, tensors, grad_outputs=[mt.tensor(u) for u in us], allow_unused=True)
    return us, [np.zeros(t.shape) if g is None else g.numpy(force=True) for t, g in zip(tensors, grads)]


def check_elementwise(fn, tensors, seed=0, eps=1e-6, atol=1e-7, rtol=1e-5):
    """Every element of every tensor: (f(x + eps e) - f(x - eps e)) / 2 eps against backward."""
    rng = np.random.default_rng(seed)
    us, grads = _analytic(fn, tensors, rng)
    with mt.no_grad():
        for t, g in zip(tensors, grads):
            flat = t.numpy(force=True).reshape(-1)
            for j in range(flat.size):
                orig = flat[j]
                flat[j] = orig + eps
                plus = _weighted_output(fn, us)
                flat[j] = orig - eps
                minus = _weighted_output(fn, us)
                flat[j] = orig
                num = (plus - minus) / (2 * eps)
                ana = g.reshape(-1)[j]
                assert abs(ana - num) <= atol + rtol * abs(num), (
                    f"tensor of shape {tuple(t.shape)}, element {j}: analytic {ana} vs numeric {num}")


def check_direction(fn, tensors, seed=0, eps=1e-6, atol=1e-8, rtol=1e-6):
    """<u, J v> by central differences along a random v against <J^T u, v> from one backward."""
    rng = np.random.default_rng(seed)
    us, grads = _analytic(fn, tensors, rng)
    vs = [rng.standard_normal(t.shape) for t in tensors]
    predicted = sum(float((g * v).sum()) for g, v in zip(grads, vs))
    origs = [t.numpy(force=True).copy() for t in tensors]

    def at(sign):
        with mt.no_grad():
            for t, o, v in zip(tensors, origs, vs):
                t.data[...] = o + sign * eps * v
            val = _weighted_output(fn, us)
            for t, o in zip(tensors, origs):
                t.data[...] = o
        return val

    numeric = (at(1) - at(-1)) / (2 * eps)
    assert abs(predicted - numeric) <= atol + rtol * abs(numeric), f"<J^T u, v> = {predicted}, <u, J v> = {numeric}"


def _params(module):
    return [p for _, p in module.named_parameters()]


# ---- ScaledDotProductAttention -------------------------------------------------------------------

def test_sdpa_module_matches_function_and_drops_only_in_training():
    mt.manual_seed(0)
    q, k, v = (mt.randn(2, 2, 5, 3, dtype=mt.float64) for _ in range(3))
    layer = ScaledDotProductAttention(dropout=0.5)
    assert "dropout=0.5" in repr(layer)
    layer.eval()
    out, w = layer(q, k, v, mask=attention.causal_mask(5))
    ref, w_ref = attention.scaled_dot_product_attention(q, k, v, mask=attention.causal_mask(5))
    assert (np.array_equal(out.numpy(force=True), ref.numpy(force=True))
            and np.array_equal(w.numpy(force=True), w_ref.numpy(force=True)))
    layer.train()
    out_train, _ = layer(q, k, v, mask=attention.causal_mask(5))
    assert not np.allclose(out_train.numpy(force=True), ref.numpy(force=True))
    with pytest.raises(ValueError, match="dropout"):
        ScaledDotProductAttention(dropout=-0.1)


# ---- SelfAttention ----------------------------------------------------------------------------------

def test_self_attention_parameters_are_stored_in_by_out():
    sa = SelfAttention(4, 3, d_v=2)
    assert tuple(sa.w_query.shape) == (4, 3) and tuple(sa.w_key.shape) == (4, 3) and tuple(sa.w_value.shape) == (4, 2)
    assert list(sa.state_dict()) == ["w_query", "w_key", "w_value"]
    assert list(SelfAttention(4, 3, bias=True).state_dict()) == ["w_query", "w_key", "w_value",
                                                                 "b_query", "b_key", "b_value"]
    assert all(isinstance(p, nn.Parameter) for p in sa.parameters())
    bound = 1 / math.sqrt(4)
    assert all(np.abs(p.numpy(force=True)).max() <= bound for p in sa.parameters())


@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2), st.booleans(), st.booleans(), st.booleans())
def test_self_attention_forward_and_gradients(T, d_in, d_k, bias, causal, masked):
    mt.manual_seed(T * 31 + d_in * 7 + d_k)
    sa = SelfAttention(d_in, d_k, d_v=2, bias=bias).double()
    x = mt.randn(2, T, d_in, dtype=mt.float64, requires_grad=True)
    mask = (mt.rand(2, T, T) > 0.3) if masked else None
    out, w = sa(x, mask=mask, is_causal=causal)
    xn = x.numpy(force=True)
    q, k, v = xn @ sa.w_query.numpy(force=True), xn @ sa.w_key.numpy(force=True), xn @ sa.w_value.numpy(force=True)
    if bias:
        q, k, v = q + sa.b_query.numpy(force=True), k + sa.b_key.numpy(force=True), v + sa.b_value.numpy(force=True)
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)
    allowed = np.ones((2, T, T), bool)
    if causal:
        allowed &= np.tril(np.ones((T, T), bool))
    if masked:
        allowed &= mask.numpy(force=True)
    s = np.where(allowed, s, -np.inf)
    e = np.exp(s - np.where(allowed.any(-1, keepdims=True), s.max(-1, keepdims=True), 0))
    with np.errstate(invalid="ignore"):
        p = np.nan_to_num(e / e.sum(-1, keepdims=True))   # a row with nothing allowed is 0 by definition
    assert_close(w, p)
    assert_close(out, p @ v)
    check_elementwise(lambda: sa(x, mask=mask, is_causal=causal), [x] + _params(sa))


def test_self_attention_rejects_wrong_width():
    with pytest.raises(RuntimeError, match=r"\(\.\.\., T, 4\).*\(3, 5\)"):
        SelfAttention(4, 3)(mt.randn(3, 5))


# ---- MultiHeadAttention ------------------------------------------------------------------------------

def _np_mha(mha, query, key, value, allowed=None):
    """Reference: each head computed on its own, in numpy, then concatenated and projected."""
    def lin(layer, x):
        return x @ layer.weight.numpy(force=True).T + (0 if layer.bias is None else layer.bias.numpy(force=True))

    q, k, v = lin(mha.w_q, query), lin(mha.w_k, key), lin(mha.w_v, value)
    heads, weights = [], []
    for h in range(mha.num_heads):
        cols = slice(h * mha.head_dim, (h + 1) * mha.head_dim)
        s = q[..., cols] @ np.swapaxes(k[..., cols], -1, -2) / math.sqrt(mha.head_dim)
        if allowed is not None:
            a = np.broadcast_to(allowed, (q.shape[0], mha.num_heads) + s.shape[-2:])[:, h]
            s = np.where(a, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        w = e / e.sum(-1, keepdims=True)
        heads.append(w @ v[..., cols])
        weights.append(w)
    return lin(mha.w_o, np.concatenate(heads, -1)), np.stack(weights, 1)


@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.sampled_from([(1, 2), (2, 1), (2, 2), (3, 1)]),
       st.sampled_from(["none", "causal", "padding", "full"]), st.booleans())
def test_mha_matches_per_head_reference(B, Tq, Tk, heads_dim, mask_kind, bias):
    H, dh = heads_dim
    rng = np.random.default_rng(B * 100 + Tq * 10 + Tk)
    mt.manual_seed(B + Tq + Tk)
    mha = MultiHeadAttention(H * dh, H, bias=bias).double()
    query = mt.tensor(rng.standard_normal((B, Tq, H * dh)))
    kv = mt.tensor(rng.standard_normal((B, Tk, H * dh)))
    lengths = rng.integers(1, Tk + 1, size=B)
    allowed = {
        "none": None,
        "causal": np.tril(np.ones((Tq, Tk), bool)),
        "padding": attention.padding_mask(lengths, Tk).numpy(force=True),
        "full": np.concatenate([np.ones((B, H, Tq, 1), bool), rng.random((B, H, Tq, Tk - 1)) > 0.5], -1),
    }[mask_kind]
    out, w = mha(query, kv, mask=None if allowed is None else mt.from_numpy(allowed))
    ref_out, ref_w = _np_mha(mha, query.numpy(force=True), kv.numpy(force=True), kv.numpy(force=True), allowed)
    assert tuple(out.shape) == (B, Tq, H * dh) and tuple(w.shape) == (B, H, Tq, Tk)
    assert_close(out, ref_out)
    assert_close(w, ref_w)
    assert mha.last_weights is not None and mha.last_weights.grad_fn is None
    assert np.array_equal(mha.last_weights.numpy(force=True), w.numpy(force=True))
    out2, none = mha(query, kv, mask=None if allowed is None else mt.from_numpy(allowed), need_weights=False)
    assert none is None and mha.last_weights is None
    assert_close(out2, ref_out)


@pytest.mark.parametrize("fused", [False, True], ids=["composed", "fused"])
@given(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3), st.sampled_from([(1, 2), (2, 1), (2, 2)]),
       st.sampled_from(["none", "causal", "padding"]))
def test_mha_gradients_for_inputs_and_all_weights(fused, B, Tq, Tk, heads_dim, mask_kind):
    H, dh = heads_dim
    d = H * dh
    rng = np.random.default_rng(B * 100 + Tq * 10 + Tk + H)
    mt.manual_seed(int(rng.integers(1 << 30)))
    mha = MultiHeadAttention(d, H, kdim=3, vdim=2, fused=fused).double()
    query = mt.tensor(rng.standard_normal((B, Tq, d)), requires_grad=True)
    key = mt.tensor(rng.standard_normal((B, Tk, 3)), requires_grad=True)
    value = mt.tensor(rng.standard_normal((B, Tk, 2)), requires_grad=True)
    mask = {"none": None, "causal": attention.causal_mask(Tq, Tk),
            "padding": attention.padding_mask(rng.integers(0, Tk + 1, size=B), Tk)}[mask_kind]
    tensors = [query, key, value] + _params(mha)
    fn = lambda: mha(query, key, value, mask=mask)  # noqa: E731
    check_direction(fn, tensors, seed=int(rng.integers(1 << 30)))
    check_elementwise(fn, [query, key, value, mha.w_q.weight, mha.w_o.bias])


def test_mha_fused_and_composed_agree_in_values_and_parameter_gradients():
    mt.manual_seed(0)
    mha = MultiHeadAttention(6, 3, dropout=0.2).double()
    x = mt.randn(2, 4, 6, dtype=mt.float64)
    mask = attention.padding_mask([4, 2], 4)
    up = mt.randn(2, 4, 6, dtype=mt.float64)
    results = []
    for fused in (False, True):
        mha.fused = fused  # the attribute switches a built layer, weights unchanged
        mha.zero_grad()
        mt.manual_seed(5)  # the same dropout keep-mask for both
        out, w = mha(x, mask=mask, is_causal=True)
        (out * up).sum().backward()
        results.append([out, w] + [p.grad for p in mha.parameters()])
    for a, b in zip(*results):
        assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_mha_with_one_head_equals_self_attention_with_the_same_weights():
    mt.manual_seed(1)
    mha = MultiHeadAttention(4, 1, bias=True).double()
    sa = SelfAttention(4, 4, bias=True).double()
    sa.load_state_dict({
        "w_query": mha.w_q.weight.numpy(force=True).T, "w_key": mha.w_k.weight.numpy(force=True).T,
        "w_value": mha.w_v.weight.numpy(force=True).T,
        "b_query": mha.w_q.bias.numpy(force=True), "b_key": mha.w_k.bias.numpy(force=True),
        "b_value": mha.w_v.bias.numpy(force=True),
    })
    x = mt.randn(2, 5, 4, dtype=mt.float64)
    out, w = mha(x, is_causal=True)
    single, w_single = sa(x, is_causal=True)
    assert_close(w[:, 0], w_single, rtol=1e-12, atol=1e-12)
    assert_close(out, mha.w_o(single), rtol=1e-12, atol=1e-12)


def test_mha_self_attention_defaults_and_cross_attention():
    mt.manual_seed(2)
    mha = MultiHeadAttention(4, 2).double()
    x, y = mt.randn(2, 5, 4, dtype=mt.float64), mt.randn(2, 3, 4, dtype=mt.float64)
    a, _ = mha(x)
    b, _ = mha(x, x, x)
    assert np.array_equal(a.numpy(force=True), b.numpy(force=True))
    cross, w = mha(y, x)                     # MultiHead(Y, X): queries from Y, keys and values from X
    assert tuple(cross.shape) == (2, 3, 4) and tuple(w.shape) == (2, 2, 3, 5)
    assert np.array_equal(cross.numpy(force=True), mha(y, x, x)[0].numpy(force=True))


def test_mha_unbatched_input():
    mt.manual_seed(3)
    mha = MultiHeadAttention(4, 2).double()
    x = mt.randn(5, 4, dtype=mt.float64)
    out, w = mha(x, mask=attention.causal_mask(5))
    assert tuple(out.shape) == (5, 4) and tuple(w.shape) == (2, 5, 5)
    batched, wb = mha(x.unsqueeze(0), mask=attention.causal_mask(5))
    assert_close(out, batched[0], rtol=1e-12, atol=1e-12)


def test_mha_padded_keys_get_exactly_zero_gradient():
    mt.manual_seed(4)
    mha = MultiHeadAttention(4, 2).double()
    y = mt.randn(2, 3, 4, dtype=mt.float64, requires_grad=True)
    x = mt.randn(2, 5, 4, dtype=mt.float64, requires_grad=True)
    out, _ = mha(y, x, mask=attention.padding_mask([5, 2], 5))
    out.backward(mt.randn(2, 3, 4, dtype=mt.float64))
    assert (x.grad.numpy(force=True)[1, 2:] == 0).all() and (np.abs(x.grad.numpy(force=True)[1, :2]) > 0).all()


def test_mha_dropout_only_in_training_and_weights_before_dropout():
    mt.manual_seed(5)
    mha = MultiHeadAttention(4, 2, dropout=0.5).double()
    x = mt.randn(2, 6, 4, dtype=mt.float64)
    mha.eval()
    a, wa = mha(x)
    b, _ = mha(x)
    assert np.array_equal(a.numpy(force=True), b.numpy(force=True))
    mha.train()
    c, wc = mha(x)
    assert not np.allclose(a.numpy(force=True), c.numpy(force=True))
    assert_close(wa, wc, rtol=0, atol=0)
    assert_close(wc.sum(-1), mt.ones(2, 2, 6, dtype=mt.float64))


def test_mha_float32_stays_float32():
    mt.manual_seed(6)
    mha = MultiHeadAttention(4, 2)
    x = mt.randn(2, 3, 4, requires_grad=True)
    out, w = mha(x, mask=attention.causal_mask(3))
    assert out.dtype == w.dtype == mt.float32
    out.backward(mt.ones(2, 3, 4))
    assert x.grad.dtype == mt.float32 and all(p.grad.dtype == mt.float32 for p in mha.parameters())
    mha64 = MultiHeadAttention(4, 2).double()
    mha64.load_state_dict(mha.state_dict())
    out64, _ = mha64(x.double(), mask=attention.causal_mask(3))
    assert_close(out, out64, rtol=1e-5, atol=1e-6, check_dtype=False)


def test_mha_names_and_state_dict():
    mha = MultiHeadAttention(8, 2, kdim=3, vdim=5, bias=False)
    assert (mha.d_model, mha.num_heads, mha.head_dim, mha.kdim, mha.vdim) == (8, 2, 4, 3, 5)
    assert list(mha.state_dict()) == ["w_q.weight", "w_k.weight", "w_v.weight", "w_o.weight"]
    assert tuple(mha.w_k.weight.shape) == (8, 3) and tuple(mha.w_v.weight.shape) == (8, 5)
    assert "kdim=3" in repr(mha)
    other = MultiHeadAttention(8, 2, kdim=3, vdim=5, bias=False)
    other.load_state_dict(mha.state_dict())
    assert np.array_equal(other.w_q.weight.numpy(force=True), mha.w_q.weight.numpy(force=True))


@pytest.mark.parametrize("d_model, heads", [(6, 4), (4, 0), (5, 2)])
def test_mha_rejects_indivisible_d_model(d_model, heads):
    with pytest.raises(ValueError, match=f"d_model={d_model} must be divisible by num_heads={heads}"):
        MultiHeadAttention(d_model, heads)


def test_mha_shape_and_mask_errors_name_the_shapes():
    mha = MultiHeadAttention(4, 2)
    with pytest.raises(RuntimeError, match=r"query \(2, 3, 5\)"):
        mha(mt.randn(2, 3, 5))
    with pytest.raises(RuntimeError, match=r"key \(2, 4, 4\), value \(2, 3, 4\)"):
        mha(mt.randn(2, 3, 4), mt.randn(2, 4, 4), mt.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match=r"3-D mask of shape \(2, 3, 3\)"):
        mha(mt.randn(2, 3, 4), mask=mt.ones(2, 3, 3).bool())
    with pytest.raises(RuntimeError, match=r"mask of shape \(3, 1, 1, 3\).*\(2, 2, 3, 3\)"):
        mha(mt.randn(2, 3, 4), mask=attention.padding_mask([1, 2, 3], 3))


# ---- the default path shows every step; fused=True is asked for --------------------------------

def _layer(kind, fused=None):
    """A float64 layer of `kind` built with `fused` (None: not passed, the default), and a function
    running it on fixed inputs."""
    mt.manual_seed(7)
    rng = np.random.default_rng(7)
    x = mt.tensor(rng.standard_normal((2, 4, 6)), requires_grad=True)
    kw = {} if fused is None else {"fused": fused}
    if kind == "ScaledDotProductAttention":
        layer = ScaledDotProductAttention(dropout=0.3, **kw)
        q, k = (mt.tensor(rng.standard_normal((2, 4, 6)), requires_grad=True) for _ in range(2))
        return layer, [x, q, k], lambda: layer(q, k, x, is_causal=True)
    if kind == "SelfAttention":
        layer = SelfAttention(6, 3, d_v=2, bias=True, **kw).double()
        return layer, [x], lambda: layer(x, mask=attention.padding_mask([4, 3], 4)[:, 0], is_causal=True)
    layer = MultiHeadAttention(6, 3, dropout=0.3, **kw).double()
    return layer, [x], lambda: layer(x, mask=attention.padding_mask([4, 3], 4), is_causal=True)


LAYERS = pytest.mark.parametrize("kind", ["ScaledDotProductAttention", "SelfAttention", "MultiHeadAttention"])


def _explained_ops(outputs, seed=0):
    rng = np.random.default_rng(seed)
    loss = sum((t * mt.tensor(rng.standard_normal(t.shape))).sum() for t in outputs)
    return [r.op for r in mt.autograd.explain(loss).rows]


@LAYERS
def test_explain_on_a_default_layer_lists_softmax_and_matmul_and_no_fused_node(kind):
    layer, _, run = _layer(kind)
    assert layer.fused is False
    ops = _explained_ops(run())
    assert "SoftmaxBackward" in ops and ops.count("MatmulBackward") >= 2 and "WhereBackward" in ops
    assert not [op for op in ops if "Fused" in op]
    # asked for, the fused node replaces them (so the assertions above can fail)
    layer, _, run = _layer(kind, fused=True)
    assert layer.fused is True and "fused=True" in repr(layer)
    ops = _explained_ops(run())
    assert "FusedAttentionWeightsBackward" in ops and "SoftmaxBackward" not in ops


def test_explain_and_to_dot_on_a_default_multi_head_attention_forward():
    from minitensor.viz import to_dot

    mt.manual_seed(8)
    mha = MultiHeadAttention(8, 2).double()
    x = mt.randn(2, 5, 8, dtype=mt.float64, requires_grad=True)
    out, _ = mha(x, is_causal=True)
    ops = _explained_ops([out])
    assert ops.count("MatmulBackward") == 2 and "SoftmaxBackward" in ops and "WhereBackward" in ops
    assert not [op for op in ops if "Fused" in op]
    dot = to_dot(out)
    assert dot.count('"MatmulBackward') == 2 and '"SoftmaxBackward' in dot and "Fused" not in dot
    out_fused, _ = MultiHeadAttention(8, 2, fused=True).double()(x, is_causal=True)
    assert '"FusedAttentionBackward' in to_dot(out_fused) and "SoftmaxBackward" not in to_dot(out_fused)


@LAYERS
def test_a_layer_built_fused_equals_the_composed_one(kind):
    """Values and the gradients of the inputs and every parameter, in float64, from random
    upstream weights into the output and the weights, with dropout (the same keep-mask) and masks."""
    results = []
    for fused in (False, True):
        layer, inputs, run = _layer(kind, fused)
        layer.train()
        mt.manual_seed(3)
        out, w = run()
        assert (w.grad_fn.name() == "FusedAttentionWeightsBackward") == fused   # the path under test
        rng = np.random.default_rng(4)
        params = list(layer.parameters())
        grads = mt.autograd.grad((out, w), inputs + params,
                                 grad_outputs=(mt.tensor(rng.standard_normal(out.shape)),
                                               mt.tensor(rng.standard_normal(w.shape))))
        results.append([out, w, *grads])
    for a, b in zip(*results):
        assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_multi_head_attention_on_a_numpy_array_asks_for_a_tensor():
    mha = MultiHeadAttention(4, 2)
    with pytest.raises(TypeError, match=r"MultiHeadAttention: query must be a Tensor, got ndarray"):
        mha(np.ones((1, 2, 4), np.float32))
    with pytest.raises(TypeError, match=r"MultiHeadAttention: key must be a Tensor, got list"):
        mha(mt.ones(1, 2, 4), [[[1.0] * 4] * 2])
