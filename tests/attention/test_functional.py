"""attention.functional: basic_self_attention and scaled_dot_product_attention (both paths).

Gradients are checked by finite differences in float64 (gradcheck reduces every output with random
weights); properties are checked on Hypothesis-drawn shapes and masks.
"""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import attention
import minitensor as mt
from attention import basic_self_attention, scaled_dot_product_attention as sdpa
from minitensor.autograd import gradcheck
from minitensor.testing import assert_close
from minitensor.testing.strategies import attention_inputs

PATHS = pytest.mark.parametrize("fused", [False, True], ids=["composed", "fused"])


def _np_softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _np_attention(q, k, v, allowed=None, scale=None):
    """Reference in plain numpy, row by row, so it shares no code with the library."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    allowed = np.ones(s.shape, bool) if allowed is None else np.broadcast_to(allowed, s.shape)
    w = np.zeros(s.shape)
    for idx in np.ndindex(*s.shape[:-1]):
        ok = allowed[idx]
        if ok.any():
            w[idx][ok] = _np_softmax(s[idx][ok])
    return w @ v, w


def _leaf(t):
    return mt.tensor(t.numpy(force=True), dtype=mt.float64, requires_grad=True)


def _grads(out, inputs, upstream):
    return mt.autograd.grad(out, inputs, grad_outputs=upstream, allow_unused=True)


# ---- basic self-attention ---------------------------------------------------------------------

@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 2), st.integers(1, 4), st.integers(1, 3)),
                  elements=st.floats(-2, 2)))
def test_basic_self_attention_matches_definition_and_gradcheck(x):
    xt = mt.tensor(x, requires_grad=True)
    z, alpha = basic_self_attention(xt)
    want_alpha = _np_softmax(x @ np.swapaxes(x, -1, -2))
    assert_close(alpha, want_alpha)
    assert_close(z, want_alpha @ x)
    assert gradcheck(lambda t: basic_self_attention(t), (xt,))


def test_basic_self_attention_rejects_1d():
    with pytest.raises(RuntimeError, match=r"\(3,\)"):
        basic_self_attention(mt.randn(3))


# ---- values and gradients -----------------------------------------------------------------------

@PATHS
@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 3), k_len=(1, 4), head_dim=(1, 3)))
def test_sdpa_matches_numpy_reference(fused, inp):
    out, w = sdpa(inp.query, inp.key, inp.value, mask=inp.mask, fused=fused)
    allowed = None if inp.mask is None else inp.mask.numpy(force=True)
    want_out, want_w = _np_attention(inp.query.numpy(force=True), inp.key.numpy(force=True),
                                     inp.value.numpy(force=True), allowed)
    assert_close(out, want_out)
    assert_close(w, want_w)


@PATHS
@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 3), k_len=(1, 3), head_dim=(1, 3)),
       st.booleans())
def test_sdpa_gradcheck_q_k_v(fused, inp, causal):
    q, k, v = (_leaf(t) for t in (inp.query, inp.key, inp.value))
    is_causal = causal and q.shape[-2] == k.shape[-2]
    # both outputs are reduced with random weights, so the gradient through the weights is checked too
    assert gradcheck(lambda q, k, v: sdpa(q, k, v, mask=inp.mask, is_causal=is_causal, fused=fused), (q, k, v))


@PATHS
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.floats(0.1, 3.0))
def test_sdpa_gradcheck_with_explicit_scale_and_broadcast_batch(fused, tq, tk, d, scale):
    mt.manual_seed(tq * 100 + tk * 10 + d)
    q = mt.randn(2, 3, tq, d, dtype=mt.float64, requires_grad=True)   # per head
    k = mt.randn(1, 1, tk, d, dtype=mt.float64, requires_grad=True)   # shared keys: gradient summed back
    v = mt.randn(2, 1, tk, 2, dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda q, k, v: sdpa(q, k, v, scale=scale, fused=fused), (q, k, v))


@PATHS
def test_float_mask_is_added_to_scores(fused):
    mt.manual_seed(0)
    q, k, v = (mt.randn(2, 3, 4, dtype=mt.float64) for _ in range(3))
    bias = mt.randn(3, 3, dtype=mt.float64)
    out, w = sdpa(q, k, v, mask=bias, fused=fused)
    s = q.numpy(force=True) @ np.swapaxes(k.numpy(force=True), -1, -2) / 2.0 + bias.numpy(force=True)
    assert_close(w, _np_softmax(s))
    assert_close(out, _np_softmax(s) @ v.numpy(force=True))


@PATHS
def test_float_mask_minus_inf_masks_and_an_all_minus_inf_row_is_zero(fused):
    mt.manual_seed(1)
    q, k, v = (mt.randn(3, 2, dtype=mt.float64, requires_grad=True) for _ in range(3))
    bias = mt.tensor([[0.0, -math.inf, 0.5], [-math.inf] * 3, [1.0, 2.0, -math.inf]], dtype=mt.float64)
    out, w = sdpa(q, k, v, mask=bias, fused=fused)
    assert np.isfinite(out.numpy(force=True)).all() and np.isfinite(w.numpy(force=True)).all()
    assert_close(w[1], [0.0, 0.0, 0.0])
    assert w.numpy(force=True)[0, 1] == 0 and w.numpy(force=True)[2, 2] == 0
    assert gradcheck(lambda q, k, v: sdpa(q, k, v, mask=bias, fused=fused), (q, k, v))


def test_learnable_float_mask_gets_its_gradient():
    mt.manual_seed(2)
    q, k, v = (mt.randn(2, 3, 2, dtype=mt.float64) for _ in range(3))
    bias = mt.randn(3, 3, dtype=mt.float64, requires_grad=True)
    # fused=True still works: a bias that needs a gradient takes the composed path
    assert gradcheck(lambda b: sdpa(q, k, v, mask=b, fused=True), (bias,))


# ---- properties ---------------------------------------------------------------------------------

@PATHS
@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 4), k_len=(1, 4), head_dim=(1, 3)))
def test_weights_are_probabilities_or_zero_rows(fused, inp):
    _, w = sdpa(inp.query, inp.key, inp.value, mask=inp.mask, fused=fused)
    assert (w.numpy(force=True) >= 0).all()
    sums = w.numpy(force=True).sum(-1)
    if inp.mask is None:
        np.testing.assert_allclose(sums, 1.0, rtol=0, atol=1e-12)
    else:
        has_key = np.broadcast_to(inp.mask.numpy(force=True), w.shape).any(-1)
        np.testing.assert_allclose(sums, np.where(has_key, 1.0, 0.0), rtol=0, atol=1e-12)
        # exactly 0 where masked
        assert (w.numpy(force=True)[~np.broadcast_to(inp.mask.numpy(force=True), w.shape)] == 0).all()


@PATHS
@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 4), k_len=(1, 4), head_dim=(1, 3),
                        mask_kinds=("none",)), st.randoms(use_true_random=False))
def test_permutation_equivariance(fused, inp, rnd):
    q, k, v = inp.query, inp.key, inp.value
    tq, tk = q.shape[-2], k.shape[-2]
    pk, pq = list(range(tk)), list(range(tq))
    rnd.shuffle(pk)
    rnd.shuffle(pq)
    out, w = sdpa(q, k, v, fused=fused)
    out_k, w_k = sdpa(q, k[:, :, pk], v[:, :, pk], fused=fused)  # keys and values permuted together
    assert_close(out_k, out, rtol=1e-12, atol=1e-12)
    assert_close(w_k, w[..., pk], rtol=1e-12, atol=1e-12)
    out_q, _ = sdpa(q[:, :, pq], k, v, fused=fused)              # queries permuted: output permuted
    assert_close(out_q, out[:, :, pq], rtol=1e-12, atol=1e-12)


@PATHS
@given(st.integers(2, 5), st.data())
def test_causal_output_ignores_the_future_exactly(fused, T, data):
    t = data.draw(st.integers(0, T - 2), label="t")
    rng = np.random.default_rng(T * 7 + t)
    q, k, v = (mt.tensor(rng.standard_normal((2, 2, T, 3)), requires_grad=True) for _ in range(3))
    for is_causal, mask in ((True, None), (False, attention.causal_mask(T))):
        out, _ = sdpa(q, k, v, mask=mask, is_causal=is_causal, fused=fused)
        # change every input after t
        q2, k2, v2 = (mt.tensor(np.concatenate([x.numpy(force=True)[..., : t + 1, :],
                                                5 + rng.standard_normal(x.numpy(force=True)[..., t + 1:, :].shape)],
                                               -2))
                      for x in (q, k, v))
        out2, _ = sdpa(q2, k2, v2, mask=mask, is_causal=is_causal, fused=fused)
        assert np.array_equal(out.numpy(force=True)[..., : t + 1, :], out2.numpy(force=True)[..., : t + 1, :])
        # and the gradient of outputs up to t with respect to inputs after t is exactly 0
        up = rng.standard_normal(out.shape)
        up[..., t + 1:, :] = 0
        grads = _grads(out, (q, k, v), mt.tensor(up))
        for g in grads:
            assert (g.numpy(force=True)[..., t + 1:, :] == 0).all()
        assert np.abs(grads[2].numpy(force=True)[..., : t + 1, :]).sum() > 0  # something did flow to the past


@PATHS
@given(st.lists(st.integers(0, 4), min_size=1, max_size=3), st.integers(1, 3))
def test_padded_keys_get_exactly_zero_gradient_and_ignore_nan(fused, lengths, tq):
    B, T = len(lengths), 4
    rng = np.random.default_rng(sum(lengths) + tq)
    mask = attention.padding_mask(lengths, T)                       # (B, 1, 1, T)
    q = mt.tensor(rng.standard_normal((B, 2, tq, 3)), requires_grad=True)
    k_np, v_np = rng.standard_normal((B, 2, T, 3)), rng.standard_normal((B, 2, T, 2))
    out, w = sdpa(q, mt.tensor(k_np), mt.tensor(v_np), mask=mask, fused=fused)
    pad = np.arange(T)[None, :] >= np.asarray(lengths)[:, None]     # (B, T)
    k_nan, v_nan = k_np.copy(), v_np.copy()
    k_nan[pad[:, None, :].repeat(2, 1)] = np.nan
    v_nan[pad[:, None, :].repeat(2, 1)] = np.inf
    k, v = mt.tensor(k_nan, requires_grad=True), mt.tensor(v_nan, requires_grad=True)
    out2, w2 = sdpa(q, k, v, mask=mask, fused=fused)
    assert (np.array_equal(out.numpy(force=True), out2.numpy(force=True))
            and np.array_equal(w.numpy(force=True), w2.numpy(force=True)))
    gq, gk, gv = _grads(out2, (q, k, v), mt.tensor(rng.standard_normal(out2.shape)))
    for g in (gq, gk, gv):
        assert np.isfinite(g.numpy(force=True)).all()
    assert (gk.numpy(force=True)[pad[:, None, :].repeat(2, 1)] == 0).all()
    assert (gv.numpy(force=True)[pad[:, None, :].repeat(2, 1)] == 0).all()
    empty = np.asarray(lengths) == 0                                # whole sequence padded
    assert (out2.numpy(force=True)[empty] == 0).all() and (gq.numpy(force=True)[empty] == 0).all()


@PATHS
@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 4), k_len=(2, 4), head_dim=(1, 3),
                        mask_kinds=("2d", "full")), st.data())
def test_row_output_ignores_nan_in_its_masked_keys(fused, inp, data):
    allowed = np.broadcast_to(inp.mask.numpy(force=True), inp.query.shape[:-1] + (inp.key.shape[-2],))
    j = data.draw(st.integers(0, inp.key.shape[-2] - 1), label="key")
    k_nan = inp.key.numpy(force=True).copy()
    k_nan[..., j, :] = np.nan
    out, _ = sdpa(inp.query, inp.key, inp.value, mask=inp.mask, fused=fused)
    out2, w2 = sdpa(inp.query, mt.tensor(k_nan), inp.value, mask=inp.mask, fused=fused)
    rows = ~allowed[..., j]                                         # rows that mask key j
    assert np.array_equal(out.numpy(force=True)[rows], out2.numpy(force=True)[rows])
    assert np.isfinite(w2.numpy(force=True)[rows]).all()


@PATHS
def test_fully_masked_row_is_zero_with_zero_gradient_even_next_to_nan(fused):
    rng = np.random.default_rng(3)
    mask = mt.tensor([[True, True, False], [False, False, False], [True, False, True]])
    q = mt.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    k_np, v_np = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 5))
    k_np[:, 1], v_np[:, 1] = np.nan, np.nan       # key 1 is allowed for query 0 only
    k, v = mt.tensor(k_np, requires_grad=True), mt.tensor(v_np, requires_grad=True)
    out, w = sdpa(q, k, v, mask=mask, fused=fused)
    assert (out.numpy(force=True)[:, 1] == 0).all() and (w.numpy(force=True)[:, 1] == 0).all()
    up = rng.standard_normal(out.shape)
    up[:, 0] = 0                                  # query 0 legitimately attends to NaN
    gq, gk, gv = _grads(out, (q, k, v), mt.tensor(up))
    assert (gq.numpy(force=True)[:, 1] == 0).all()
    # and the clean case: the other rows are unaffected by the empty one
    k_np[:, 1], v_np[:, 1] = 0.5, -0.5
    out_a, _ = sdpa(q, mt.tensor(k_np), mt.tensor(v_np), mask=mask, fused=fused)
    out_b, _ = sdpa(q[:, [0, 2]], mt.tensor(k_np), mt.tensor(v_np), mask=mask[[0, 2]], fused=fused)
    assert_close(out_a[:, [0, 2]], out_b, rtol=1e-12, atol=1e-12)


@PATHS
def test_int_mask_reads_like_bool(fused):
    mt.manual_seed(4)
    q, k, v = (mt.randn(2, 3, 3, 2, dtype=mt.float64) for _ in range(3))
    mask = mt.tensor([[1, 0, 2], [0, 0, 0], [1, 1, 1]])  # nonzero = allowed, as Tensor.bool() reads it
    a = sdpa(q, k, v, mask=mask, fused=fused)
    b = sdpa(q, k, v, mask=mask.bool(), fused=fused)
    for x, y in zip(a, b):
        assert np.array_equal(x.numpy(force=True), y.numpy(force=True))


@PATHS
def test_masking_holds_at_any_magnitude_of_the_scores(fused):
    """A sentinel like -1e9 stops masking once real scores are below it; -inf never does."""
    q = mt.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=mt.float64)
    k = mt.tensor([[1.0, 0.0], [0.5, 0.0], [1.0, 1.0]], dtype=mt.float64)
    mask = mt.tensor([[True, False, True], [False, True, True]])
    # scores of row 0: (-1e12, -5e11, -1e12): the masked key scores highest, the allowed ones are far below -1e9
    _, w = sdpa(q, k, k, mask=mask, scale=-1e12, fused=fused)
    assert (w.numpy(force=True)[~mask.numpy(force=True)] == 0).all()
    assert_close(w.sum(-1), [1.0, 1.0])


@PATHS
def test_is_causal_combines_with_a_padding_mask(fused):
    mt.manual_seed(5)
    q, k, v = (mt.randn(2, 1, 4, 3, dtype=mt.float64) for _ in range(3))
    pad = attention.padding_mask([4, 2], 4)
    _, w = sdpa(q, k, v, mask=pad, is_causal=True, fused=fused)
    allowed = np.tril(np.ones((4, 4), bool)) & pad.numpy(force=True)
    assert ((w.numpy(force=True) > 0) == allowed).all()


@PATHS
def test_dropout_is_identity_in_eval_and_scales_in_training(fused):
    mt.manual_seed(6)
    q, k, v = (mt.randn(4, 2, 6, 3, dtype=mt.float64) for _ in range(3))
    ref, w_ref = sdpa(q, k, v, fused=fused)
    out, w = sdpa(q, k, v, dropout_p=0.5, training=False, fused=fused)
    assert np.array_equal(out.numpy(force=True), ref.numpy(force=True))
    out, w = sdpa(q, k, v, dropout_p=0.5, training=True, fused=fused)
    # returned weights are the ones before dropout
    assert np.array_equal(w.numpy(force=True), w_ref.numpy(force=True))
    assert not np.allclose(out.numpy(force=True), ref.numpy(force=True))
    zero, _ = sdpa(q, k, v, dropout_p=1.0, fused=fused)
    assert (zero.numpy(force=True) == 0).all()


@PATHS
def test_dropout_keeps_the_expectation(fused):
    mt.manual_seed(7)
    q, k, v = (mt.randn(1, 1, 3, 2, dtype=mt.float64) for _ in range(3))
    ref, _ = sdpa(q, k, v, fused=fused)
    mean = sum(sdpa(q, k, v, dropout_p=0.3, fused=fused)[0].numpy(force=True) for _ in range(3000)) / 3000
    np.testing.assert_allclose(mean, ref.numpy(force=True), atol=0.08)


# ---- dtypes and errors ----------------------------------------------------------------------

@PATHS
@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 4), k_len=(1, 4), head_dim=(1, 4)))
def test_float32_stays_float32_and_matches_float64(fused, inp):
    q, k, v = (mt.tensor(t.numpy(force=True), dtype=mt.float32, requires_grad=True)
               for t in (inp.query, inp.key, inp.value))
    out, w = sdpa(q, k, v, mask=inp.mask, fused=fused, dropout_p=0.1)
    assert out.dtype == w.dtype == mt.float32
    out.backward(mt.ones(*out.shape))
    assert q.grad.dtype == k.grad.dtype == v.grad.dtype == mt.float32
    out32, w32 = sdpa(q, k, v, mask=inp.mask, fused=fused)
    out64, w64 = sdpa(inp.query, inp.key, inp.value, mask=inp.mask, fused=fused)
    assert_close(out32, out64, rtol=1e-4, atol=1e-5, check_dtype=False)
    assert_close(w32, w64, rtol=1e-4, atol=1e-6, check_dtype=False)


def test_shape_errors_name_the_shapes():
    q = mt.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match=r"\(2, 3, 4\).*\(2, 3, 5\)"):
        sdpa(q, mt.randn(2, 3, 5), mt.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match=r"key \(2, 3, 4\), value \(2, 2, 4\)"):
        sdpa(q, mt.randn(2, 3, 4), mt.randn(2, 2, 4))
    with pytest.raises(RuntimeError, match=r"\(3,\)"):
        sdpa(mt.randn(3), mt.randn(3), mt.randn(3))
    with pytest.raises(RuntimeError, match=r"mask of shape \(2, 2\).*scores of shape \(2, 3, 3\)"):
        sdpa(q, q, q, mask=mt.ones(2, 2).bool())
    with pytest.raises(RuntimeError, match=r"mask of shape \(2, 1, 1, 3\).*\(2, 3, 3\)"):
        sdpa(q, q, q, mask=attention.padding_mask([1, 2], 3))  # would broadcast *up*: not allowed
    with pytest.raises(RuntimeError, match="same dtype"):
        sdpa(q, q.double(), q)
    with pytest.raises(ValueError, match="dropout_p"):
        sdpa(q, q, q, dropout_p=1.5)


# ---- the default path shows every step; the fused one is asked for ------------------------------

def _explained_ops(out, w, rng):
    """The op of every node explain() walks from a loss that reads the output and the weights
    with random weights."""
    loss = (out * mt.tensor(rng.standard_normal(out.shape))).sum() + (w * mt.tensor(rng.standard_normal(w.shape))).sum()
    return [r.op for r in mt.autograd.explain(loss).rows]


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
def test_explain_on_the_default_call_shows_matmul_scale_mask_and_softmax(mask_kind):
    rng = np.random.default_rng(10)
    q, k, v = (mt.tensor(rng.standard_normal((2, 2, 3, 4)), requires_grad=True) for _ in range(3))
    mask = {"none": None, "causal": attention.causal_mask(3), "padding": attention.padding_mask([3, 2], 3)}[mask_kind]
    ops = _explained_ops(*sdpa(q, k, v, mask=mask), rng)
    assert ops.count("MatmulBackward") == 2 and "SoftmaxBackward" in ops and "MulBackward" in ops  # Q K^T, P V; scale
    assert ("WhereBackward" in ops) == (mask is not None)
    assert not [op for op in ops if "Fused" in op]
    # the same call with fused=True is the one node instead: what this test tells apart
    fused_ops = _explained_ops(*sdpa(q, k, v, mask=mask, fused=True), rng)
    assert {"FusedAttentionBackward", "FusedAttentionWeightsBackward"} <= set(fused_ops)
    assert "SoftmaxBackward" not in fused_ops and "MatmulBackward" not in fused_ops


def test_to_dot_on_the_default_call_draws_every_step():
    from minitensor.viz import to_dot

    rng = np.random.default_rng(11)
    q, k, v = (mt.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(3))
    dot = to_dot(sdpa(q, k, v, is_causal=True)[0])
    assert dot.count('"MatmulBackward') == 2 and '"SoftmaxBackward' in dot and '"WhereBackward' in dot
    assert "Fused" not in dot
    dot = to_dot(sdpa(q, k, v, is_causal=True, fused=True)[0])
    assert '"FusedAttentionBackward' in dot and "SoftmaxBackward" not in dot


def test_the_global_switch_is_gone_and_says_what_replaced_it():
    for name in ("set_fused_enabled", "is_fused_enabled"):
        with pytest.raises(AttributeError, match="fused=True"):
            getattr(attention, name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        attention.nope  # noqa: B018


@PATHS
@pytest.mark.parametrize("causal, masked", [(False, False), (True, False), (False, True), (True, True)])
def test_zero_width_queries_and_keys_attend_uniformly_as_in_torch(fused, causal, masked):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    q, v = rng.standard_normal((2, 2, 3, 0)), rng.standard_normal((2, 2, 3, 4))
    u = rng.standard_normal((2, 2, 3, 4))
    allowed = np.array([[True, False, True], [True, True, False], [False, True, True]]) if masked else None
    qm, vm = mt.tensor(q, requires_grad=True), mt.tensor(v, requires_grad=True)
    out, _ = sdpa(qm, qm, vm, mask=None if allowed is None else mt.tensor(allowed), is_causal=causal, fused=fused)
    out.backward(mt.tensor(u))
    qt, vt = torch.tensor(q, requires_grad=True), torch.tensor(v, requires_grad=True)
    mask_t = None if allowed is None else torch.tensor(allowed)
    if causal and masked:  # torch takes one or the other: combine them as minitensor does
        mask_t, causal_t = mask_t & torch.ones(3, 3, dtype=torch.bool).tril(), False
    else:
        causal_t = causal
    ref = torch.nn.functional.scaled_dot_product_attention(qt, qt, vt, attn_mask=mask_t, is_causal=causal_t)
    ref.backward(torch.tensor(u))
    assert_close(out.numpy(force=True), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert_close(vm.grad.numpy(), vt.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert qm.grad.shape == (2, 2, 3, 0)


def test_the_composed_path_is_minitensors_attend_with_the_packages_masks():
    """fused=False is minitensor.nn.attention.attend, bit for bit, given the mask as attention.masks
    reads it (allowed and bias); attend itself sees nothing of the package's NaN-proofing."""
    from attention.masks import prepare_mask
    from minitensor.nn.attention import attend

    rng = np.random.default_rng(12)
    q, k, v = (mt.tensor(rng.standard_normal((2, 3, 4))) for _ in range(3))
    float_mask = mt.tensor(np.where(np.tril(np.ones((3, 3))), rng.standard_normal((3, 3)), -np.inf))
    for mask in (None, attention.causal_mask(3), float_mask, mt.tensor([[1, 0, 1]] * 3)):
        m = prepare_mask(mask, False, (2, 3, 3), q.dtype)
        out, w = sdpa(q, k, v, mask=mask)
        want_out, want_w = attend(q, k, v, m.allowed, m.bias, 0.5)
        assert np.array_equal(out.numpy(), want_out.numpy()) and np.array_equal(w.numpy(), want_w.numpy())
