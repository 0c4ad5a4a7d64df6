"""Agreement with PyTorch, where it is installed: MultiHeadAttention vs torch.nn.MultiheadAttention,
scaled_dot_product_attention vs torch's, TransformerBlock vs a pre-LN TransformerEncoderLayer.

Weights are copied across; values and gradients are compared in float64. Mask conventions differ:
torch.nn.MultiheadAttention reads a bool attn_mask / key_padding_mask as True = NOT allowed,
so ours (True = allowed) is inverted on the way in.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

torch = pytest.importorskip("torch")

import attention  # noqa: E402
import minitensor as mt  # noqa: E402
from minitensor.testing import assert_close  # noqa: E402

# a comparison with PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

TOL = dict(rtol=1e-9, atol=1e-10)


def _t(x, grad=False):
    return torch.tensor(np.asarray(x.numpy(force=True) if isinstance(x, mt.Tensor) else x), dtype=torch.float64,
                        requires_grad=grad)


def _copy_mha(ours, theirs):
    with torch.no_grad():
        if theirs.in_proj_weight is not None:
            theirs.in_proj_weight.copy_(_t(np.concatenate([ours.w_q.weight.numpy(force=True),
                                                           ours.w_k.weight.numpy(force=True),
                                                           ours.w_v.weight.numpy(force=True)])))
        else:
            theirs.q_proj_weight.copy_(_t(ours.w_q.weight))
            theirs.k_proj_weight.copy_(_t(ours.w_k.weight))
            theirs.v_proj_weight.copy_(_t(ours.w_v.weight))
        if theirs.in_proj_bias is not None:
            theirs.in_proj_bias.copy_(_t(np.concatenate([ours.w_q.bias.numpy(force=True),
                                                         ours.w_k.bias.numpy(force=True),
                                                         ours.w_v.bias.numpy(force=True)])))
            theirs.out_proj.bias.copy_(_t(ours.w_o.bias))
        theirs.out_proj.weight.copy_(_t(ours.w_o.weight))


def _their_projection_grads(theirs, d):
    """torch's gradients split back into our w_q, w_k, w_v, w_o (weights then biases)."""
    if theirs.in_proj_weight is not None:
        gw = theirs.in_proj_weight.grad.numpy()
        ws = [gw[:d], gw[d:2 * d], gw[2 * d:]]
    else:
        ws = [theirs.q_proj_weight.grad.numpy(), theirs.k_proj_weight.grad.numpy(), theirs.v_proj_weight.grad.numpy()]
    grads = {"w_q.weight": ws[0], "w_k.weight": ws[1], "w_v.weight": ws[2],
             "w_o.weight": theirs.out_proj.weight.grad.numpy()}
    if theirs.in_proj_bias is not None:
        gb = theirs.in_proj_bias.grad.numpy()
        grads.update({"w_q.bias": gb[:d], "w_k.bias": gb[d:2 * d], "w_v.bias": gb[2 * d:],
                      "w_o.bias": theirs.out_proj.bias.grad.numpy()})
    return grads


@pytest.mark.parametrize("fused", [False, True], ids=["composed", "fused"])
@given(st.integers(1, 2), st.integers(1, 4), st.integers(1, 4), st.sampled_from([(1, 4), (2, 2), (3, 2)]),
       st.sampled_from(["none", "causal", "padding"]), st.booleans(), st.sampled_from([None, 3]))
def test_mha_equals_torch_multihead_attention(fused, B, Tq, Tk, heads_dim, mask_kind, bias, kvdim):
    H, dh = heads_dim
    d = H * dh
    rng = np.random.default_rng(B * 1000 + Tq * 100 + Tk * 10 + H)
    mt.manual_seed(int(rng.integers(1 << 30)))
    ours = attention.MultiHeadAttention(d, H, bias=bias, kdim=kvdim, vdim=kvdim, fused=fused).double()
    theirs = torch.nn.MultiheadAttention(d, H, bias=bias, kdim=kvdim, vdim=kvdim, batch_first=True, dtype=torch.float64)
    _copy_mha(ours, theirs)
    kv = kvdim or d
    q_np, k_np, v_np = (rng.standard_normal((B, Tq, d)), rng.standard_normal((B, Tk, kv)),
                        rng.standard_normal((B, Tk, kv)))
    mask, attn_mask, key_padding_mask = None, None, None
    if mask_kind == "causal":
        mask = attention.causal_mask(Tq, Tk)
        attn_mask = torch.tensor(~mask.numpy(force=True))                 # torch: True = not allowed
    elif mask_kind == "padding":
        lengths = rng.integers(1, Tk + 1, size=B)             # torch gives NaN for an all-padded row
        mask = attention.padding_mask(lengths, Tk)
        key_padding_mask = torch.tensor(~mask.numpy(force=True)[:, 0, 0, :])

    q, k, v = (mt.tensor(q_np, requires_grad=True), mt.tensor(k_np, requires_grad=True),
               mt.tensor(v_np, requires_grad=True))
    out, w = ours(q, k, v, mask=mask)
    tq, tk, tv = _t(q_np, True), _t(k_np, True), _t(v_np, True)
    t_out, t_w = theirs(tq, tk, tv, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                        need_weights=True, average_attn_weights=False)
    assert_close(out, t_out.detach().numpy(), **TOL)
    assert_close(w, t_w.detach().numpy(), **TOL)

    up = rng.standard_normal(out.shape)
    out.backward(mt.tensor(up))
    t_out.backward(torch.tensor(up))
    for a, b in ((q, tq), (k, tk), (v, tv)):
        assert_close(a.grad, b.grad.numpy(), **TOL)
    theirs_grads = _their_projection_grads(theirs, d)
    for name, p in ours.named_parameters():
        assert_close(p.grad, theirs_grads[name], **TOL, msg=name)


@pytest.mark.parametrize("fused", [False, True], ids=["composed", "fused"])
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "causal"])
def test_sdpa_equals_torch_sdpa(fused, mask_kind):
    rng = np.random.default_rng(0)
    q_np, k_np, v_np = (rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5)),
                        rng.standard_normal((2, 3, 6, 2)))
    mask = None
    if mask_kind == "bool":
        mask = rng.random((2, 1, 4, 6)) > 0.4
        mask[..., 0] = True
    elif mask_kind == "float":
        mask = rng.standard_normal((4, 6))
    causal = mask_kind == "causal"
    q, k, v = (mt.tensor(a, requires_grad=True) for a in (q_np, k_np, v_np))
    out, _ = attention.scaled_dot_product_attention(q, k, v, mask=None if mask is None else mt.tensor(mask),
                                                    is_causal=causal, scale=0.7, fused=fused)
    tq, tk, tv = _t(q_np, True), _t(k_np, True), _t(v_np, True)
    t_out = torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=None if mask is None else torch.tensor(mask), is_causal=causal, scale=0.7)
    assert_close(out, t_out.detach().numpy(), **TOL)
    up = rng.standard_normal(out.shape)
    out.backward(mt.tensor(up))
    t_out.backward(torch.tensor(up))
    for a, b in ((q, tq), (k, tk), (v, tv)):
        assert_close(a.grad, b.grad.numpy(), **TOL)


@pytest.mark.parametrize("fused", [False, True], ids=["composed", "fused"])
@pytest.mark.parametrize("causal", [False, True])
def test_transformer_block_equals_torch_pre_ln_encoder_layer(causal, fused):
    mt.manual_seed(3)
    d, H, d_ff, T = 6, 2, 10, 5
    ours = attention.TransformerBlock(d, H, d_ff=d_ff, causal=causal, fused=fused).double()
    theirs = torch.nn.TransformerEncoderLayer(d, H, dim_feedforward=d_ff, dropout=0.0, activation="gelu",
                                              batch_first=True, norm_first=True, dtype=torch.float64)
    _copy_mha(ours.attn, theirs.self_attn)
    with torch.no_grad():
        for mine, their in ((ours.mlp.fc1, theirs.linear1), (ours.mlp.fc2, theirs.linear2),
                            (ours.ln1, theirs.norm1), (ours.ln2, theirs.norm2)):
            their.weight.copy_(_t(mine.weight))
            their.bias.copy_(_t(mine.bias))
    rng = np.random.default_rng(4)
    x_np = rng.standard_normal((2, T, d))
    x, tx = mt.tensor(x_np, requires_grad=True), _t(x_np, True)
    out = ours(x)
    src_mask = torch.tensor(~attention.causal_mask(T).numpy(force=True)) if causal else None
    t_out = theirs(tx, src_mask=src_mask)
    assert_close(out, t_out.detach().numpy(), **TOL)
    up = rng.standard_normal(out.shape)
    out.backward(mt.tensor(up))
    t_out.backward(torch.tensor(up))
    assert_close(x.grad, tx.grad.numpy(), **TOL)
    assert_close(ours.mlp.fc1.weight.grad, theirs.linear1.weight.grad.numpy(), **TOL)
    assert_close(ours.ln1.weight.grad, theirs.norm1.weight.grad.numpy(), **TOL)
    assert_close(ours.attn.w_o.weight.grad, theirs.self_attn.out_proj.weight.grad.numpy(), **TOL)
