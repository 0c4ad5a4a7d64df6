"""nn.MultiheadAttention and the nn.Transformer family: PyTorch's parameters, state-dict names,
values, gradients, masks and errors (against PyTorch where it is installed), and finite-difference
gradient checks that need no PyTorch."""
import copy
import math
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import gradcheck
from minitensor.testing import assert_close

E, H = 8, 2


def rnd(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


def bool_mask(seed, shape, keep_first=True):
    """A random bool mask, True = may NOT attend; the first key stays visible so no query is blind."""
    m = np.random.default_rng(seed).random(shape) > 0.6
    if keep_first:
        m[..., 0] = False
    return m


def causal_bool(n):
    return np.triu(np.ones((n, n), dtype=bool), 1)


# ---- running one module in both libraries --------------------------------------------------------
def torch_or_skip():
    return pytest.importorskip("torch")


def copy_state(src, dst, to_lib):
    """Load src's state dict into dst (the other library's module), as arrays."""
    dst.load_state_dict({k: to_lib.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def run(lib, module, inputs, call, seed=0):
    """Forward `call(module, tensors)` on float64 leaves made from `inputs` (bool arrays stay masks),
    reduce every output with a random weight, backward; (outputs, input grads, parameter grads)."""
    tensors = {}
    for name, a in inputs.items():
        if a.dtype == bool:
            tensors[name] = lib.tensor(a)
        else:
            tensors[name] = lib.tensor(a, dtype=lib.float64).requires_grad_(True)
    outs = call(module, tensors)
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = 0.0
    for i, o in enumerate(outs):
        if o is not None:
            loss = loss + (o * lib.tensor(rnd(seed + i, *o.shape))).sum()
    loss.backward()
    grad = lambda t: None if t.grad is None else t.grad.numpy()  # noqa: E731
    return ([None if o is None else o.detach().numpy() for o in outs],
            {n: grad(t) for n, t in tensors.items() if t.requires_grad},
            {n: grad(p) for n, p in module.named_parameters()})


def both(make, inputs, call, train=False):
    """The same module (PyTorch's weights copied into minitensor's) run in both libraries."""
    torch = torch_or_skip()
    theirs = make(torch).double().train(train)
    ours = make(mt).double().train(train)
    copy_state(theirs, ours, mt)
    return run(mt, ours, inputs, call), run(torch, theirs, inputs, call)


def assert_same(ours, theirs, rtol=1e-10, atol=1e-12):
    (out_m, gin_m, gp_m), (out_t, gin_t, gp_t) = ours, theirs
    assert len(out_m) == len(out_t)
    for a, b in zip(out_m, out_t):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.shape == b.shape
            assert_close(a, b, rtol=rtol, atol=atol)
    assert gin_m.keys() == gin_t.keys() and list(gp_m) == list(gp_t)
    for name in gin_m:
        assert (gin_m[name] is None) == (gin_t[name] is None), name
        if gin_m[name] is not None:
            assert_close(gin_m[name], gin_t[name], rtol=rtol, atol=atol, msg=f"gradient of input {name}")
    for name in gp_m:
        if gp_t[name] is None:
            assert gp_m[name] is None or not gp_m[name].any(), name
        else:
            assert gp_m[name] is not None, f"no gradient for parameter {name}"
            assert_close(gp_m[name], gp_t[name], rtol=rtol, atol=atol, msg=f"gradient of parameter {name}")


# ---- MultiheadAttention -------------------------------------------------------------------------
L, S, N = 4, 5, 3


def mha_call(**kw):
    def call(m, t):
        masks = {k: t[k] for k in ("key_padding_mask", "attn_mask") if k in t}
        return m(t["q"], t.get("k", t["q"]), t.get("v", t.get("k", t["q"])), **masks, **kw)
    return call


MHA_CASES = {
    # name: (constructor kwargs, inputs, forward kwargs)
    "self_attention": ({}, {"q": rnd(1, L, N, E)}, {}),
    "cross_attention": ({}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, E), "v": rnd(3, S, N, E)}, {}),
    "batch_first": ({"batch_first": True}, {"q": rnd(1, N, L, E), "k": rnd(2, N, S, E), "v": rnd(3, N, S, E)}, {}),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, 3), "v": rnd(3, S, N, 5)}, {}),
    "no_bias": ({"bias": False}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, E), "v": rnd(3, S, N, E)}, {}),
    "key_padding_bool": ({"batch_first": True}, {"q": rnd(1, N, L, E), "k": rnd(2, N, S, E), "v": rnd(3, N, S, E),
                                                  "key_padding_mask": bool_mask(4, (N, S))}, {}),
    "key_padding_float": ({}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, E), "v": rnd(3, S, N, E),
                               "key_padding_mask": rnd(4, N, S)}, {}),
    "attn_mask_bool": ({}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, E), "v": rnd(3, S, N, E),
                            "attn_mask": bool_mask(5, (L, S))}, {}),
    "attn_mask_float": ({}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, E), "v": rnd(3, S, N, E),
                             "attn_mask": rnd(5, L, S)}, {}),
    "attn_mask_3d": ({"batch_first": True}, {"q": rnd(1, N, L, E), "k": rnd(2, N, S, E), "v": rnd(3, N, S, E),
                                              "attn_mask": bool_mask(5, (N * H, L, S))}, {}),
    "both_masks": ({}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, E), "v": rnd(3, S, N, E),
                        "attn_mask": rnd(5, L, S), "key_padding_mask": rnd(6, N, S)}, {}),
    "causal_hint_weights": ({}, {"q": rnd(1, L, N, E), "attn_mask": causal_bool(L)}, {"is_causal": True}),
    "causal_hint_no_weights": ({}, {"q": rnd(1, L, N, E), "attn_mask": causal_bool(L)},
                               {"is_causal": True, "need_weights": False}),
    "causal_hint_with_padding": ({}, {"q": rnd(1, L, N, E), "attn_mask": causal_bool(L),
                                      "key_padding_mask": bool_mask(4, (N, L))},
                                 {"is_causal": True, "need_weights": False}),
    "no_weights": ({}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, E), "v": rnd(3, S, N, E),
                        "attn_mask": bool_mask(5, (L, S))}, {"need_weights": False}),
    "weights_per_head": ({"batch_first": True}, {"q": rnd(1, N, L, E), "k": rnd(2, N, S, E), "v": rnd(3, N, S, E),
                                                  "key_padding_mask": bool_mask(4, (N, S))},
                         {"average_attn_weights": False}),
    "unbatched": ({}, {"q": rnd(1, L, E), "k": rnd(2, S, E), "v": rnd(3, S, E),
                       "key_padding_mask": bool_mask(4, (S,)), "attn_mask": bool_mask(5, (H, L, S))}, {}),
    "unbatched_batch_first": ({"batch_first": True}, {"q": rnd(1, L, E), "attn_mask": rnd(5, L, L)},
                              {"average_attn_weights": False}),
    "add_bias_kv": ({"add_bias_kv": True}, {"q": rnd(1, L, N, E), "k": rnd(2, S, N, E), "v": rnd(3, S, N, E),
                                            "attn_mask": rnd(5, L, S), "key_padding_mask": rnd(4, N, S)}, {}),
    "add_zero_attn": ({"add_zero_attn": True, "batch_first": True},
                      {"q": rnd(1, N, L, E), "k": rnd(2, N, S, E), "v": rnd(3, N, S, E),
                       "attn_mask": bool_mask(5, (L, S)), "key_padding_mask": bool_mask(4, (N, S))},
                      {"need_weights": False}),
}


@pytest.mark.parametrize("name", list(MHA_CASES))
def test_multihead_attention_values_and_gradients_equal_pytorchs(name):
    ctor, inputs, kw = MHA_CASES[name]
    ours, theirs = both(lambda lib: lib.nn.MultiheadAttention(E, H, **ctor), inputs, mha_call(**kw))
    assert_same(ours, theirs)
    if kw.get("need_weights", True):
        assert ours[0][1] is not None
        per_head = not kw.get("average_attn_weights", True)
        batched = inputs["q"].ndim == 3
        assert ours[0][1].ndim == 2 + per_head + batched


def test_a_query_that_sees_no_key_is_nan_with_weights_and_zero_without_as_in_pytorch():
    inputs = {"q": rnd(1, N, L, E), "k": rnd(2, N, S, E), "v": rnd(3, N, S, E),
              "key_padding_mask": np.zeros((N, S), dtype=bool), "attn_mask": bool_mask(5, (L, S))}
    inputs["key_padding_mask"][1] = True      # batch 1 may see no key at all
    inputs["attn_mask"][2] = True             # query 2 may see no key in any batch
    torch = torch_or_skip()
    theirs = torch.nn.MultiheadAttention(E, H, batch_first=True).double()
    ours = mt.nn.MultiheadAttention(E, H, batch_first=True).double()
    copy_state(theirs, ours, mt)
    args = lambda lib: [lib.tensor(inputs[k]) for k in ("q", "k", "v")]  # noqa: E731
    masks = lambda lib: {k: lib.tensor(inputs[k]) for k in ("key_padding_mask", "attn_mask")}  # noqa: E731
    out_m, w_m = ours(*args(mt), **masks(mt))
    out_t, w_t = theirs(*args(torch), **masks(torch))
    blind = np.zeros((N, L), dtype=bool)
    blind[1], blind[:, 2] = True, True
    assert (np.isnan(out_m.detach().numpy()).any(-1) == blind).all()
    assert_close(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)
    assert_close(w_m.detach().numpy(), w_t.detach().numpy(), rtol=1e-10, atol=1e-12, equal_nan=True)
    # without weights the work goes to scaled_dot_product_attention: such a query's attention is 0
    ours_nw, theirs_nw = both(lambda lib: lib.nn.MultiheadAttention(E, H, batch_first=True), inputs,
                              mha_call(need_weights=False))
    assert_same(ours_nw, theirs_nw)
    assert np.isfinite(ours_nw[0][0]).all() and all(np.isfinite(g).all() for g in ours_nw[2].values())


def test_the_causal_hint_replaces_the_mask_only_where_pytorch_trusts_it():
    # an attn_mask that is NOT causal, with is_causal=True: PyTorch uses the causal mask when it
    # hands the work to scaled_dot_product_attention (need_weights=False, no padding mask), and the
    # given mask otherwise; both libraries must give the same numbers in both cases.
    inputs = {"q": rnd(1, L, N, E), "attn_mask": bool_mask(5, (L, L))}
    for kw in ({"need_weights": False}, {"need_weights": True}):
        ours, theirs = both(lambda lib: lib.nn.MultiheadAttention(E, H), inputs, mha_call(is_causal=True, **kw))
        assert_same(ours, theirs)
    plain, _ = both(lambda lib: lib.nn.MultiheadAttention(E, H), inputs, mha_call(need_weights=False))
    hinted, _ = both(lambda lib: lib.nn.MultiheadAttention(E, H), inputs, mha_call(need_weights=False, is_causal=True))
    assert not np.allclose(plain[0][0], hinted[0][0])


def test_multihead_state_dict_names_shapes_and_init():
    torch = torch_or_skip()
    for kw in ({}, {"bias": False}, {"kdim": 3, "vdim": 5}, {"add_bias_kv": True}, {"add_zero_attn": True}):
        ours, theirs = mt.nn.MultiheadAttention(12, 3, **kw), torch.nn.MultiheadAttention(12, 3, **kw)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
               [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()], kw
        assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
        assert repr(ours) == repr(theirs)
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                     "bias_k", "bias_v"):
            assert (getattr(ours, name) is None) == (getattr(theirs, name) is None), name
        assert (ours.embed_dim, ours.num_heads, ours.head_dim, ours.kdim, ours.vdim, ours.batch_first,
                ours._qkv_same_embed_dim) == (theirs.embed_dim, theirs.num_heads, theirs.head_dim, theirs.kdim,
                                              theirs.vdim, theirs.batch_first, theirs._qkv_same_embed_dim)


def test_multihead_init_is_pytorchs():
    m = mt.nn.MultiheadAttention(64, 4)
    w = m.in_proj_weight.detach().numpy()
    bound = math.sqrt(6 / (64 + 3 * 64))  # xavier_uniform_ of (3E, E)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert not m.in_proj_bias.detach().numpy().any() and not m.out_proj.bias.detach().numpy().any()
    kaiming = 1 / math.sqrt(64)  # out_proj.weight keeps Linear's own init
    assert np.abs(m.out_proj.weight.detach().numpy()).max() <= kaiming
    b = mt.nn.MultiheadAttention(64, 4, add_bias_kv=True).bias_k.detach().numpy()
    assert b.shape == (1, 1, 64) and 0.5 * math.sqrt(2 / 128) < b.std() < 1.5 * math.sqrt(2 / 128)
    assert mt.nn.MultiheadAttention(8, 2, dtype=mt.float64).in_proj_weight.dtype == mt.float64


def test_weights_load_both_ways():
    torch = torch_or_skip()
    ours = mt.nn.MultiheadAttention(E, H, kdim=3)
    theirs = torch.nn.MultiheadAttention(E, H, kdim=3)
    copy_state(ours, theirs, torch)  # minitensor's init into PyTorch
    q, k, v = (rnd(i, *shape).astype(np.float32) for i, shape in enumerate([(L, N, E), (S, N, 3), (S, N, E)]))
    out_m, w_m = ours(mt.tensor(q), mt.tensor(k), mt.tensor(v))
    out_t, w_t = theirs(torch.tensor(q), torch.tensor(k), torch.tensor(v))
    assert out_m.dtype == mt.float32 and w_m.dtype == mt.float32
    assert_close(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert_close(w_m.detach().numpy(), w_t.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_float32_stays_float32_and_matches_float64():
    m = mt.nn.MultiheadAttention(E, H, batch_first=True)
    m64 = copy.deepcopy(m).double()
    x = rnd(1, N, L, E)
    pad = mt.tensor(bool_mask(4, (N, L)))
    for kw in ({}, {"need_weights": False}):
        out32, _ = m(mt.tensor(x, dtype=mt.float32), mt.tensor(x, dtype=mt.float32), mt.tensor(x, dtype=mt.float32),
                     key_padding_mask=pad, **kw)
        out64, _ = m64(mt.tensor(x), mt.tensor(x), mt.tensor(x), key_padding_mask=pad, **kw)
        assert out32.dtype == mt.float32
        assert_close(out32.detach().numpy(), out64.detach().numpy(), rtol=1e-5, atol=1e-5, check_dtype=False)


def test_attention_dropout_in_training_is_inverted_dropout():
    m = mt.nn.MultiheadAttention(4, 2, dropout=0.4, batch_first=True).double()
    one = rnd(1, 1, 3, 4)
    x = mt.tensor(np.repeat(one, 4000, axis=0))
    m.eval()
    ref_out, ref_w = m(x, x, x, average_attn_weights=False)
    m.train()
    out, w = m(x, x, x, average_attn_weights=False)
    ref_w, w = ref_w.detach().numpy(), w.detach().numpy()
    dropped = w == 0
    assert abs(dropped.mean() - 0.4) < 0.01
    assert_close(w[~dropped], (ref_w / 0.6)[~dropped], rtol=1e-12, atol=0)
    # E[output] is the eval output (dropout is applied to the weights, everything after is linear)
    assert_close(out.detach().numpy().mean(0), ref_out.detach().numpy()[0], rtol=0, atol=0.03)
    out_nw, _ = m(x, x, x, need_weights=False)
    assert_close(out_nw.detach().numpy().mean(0), ref_out.detach().numpy()[0], rtol=0, atol=0.03)
    assert np.abs(out_nw.detach().numpy() - ref_out.detach().numpy()).max() > 0.1


# ---- gradients without PyTorch ------------------------------------------------------------------
def numeric_parameter_grads(module, loss_fn, eps=1e-6):
    """Central differences of loss_fn() with respect to every element of every parameter."""
    grads = {}
    with mt.no_grad():
        for name, p in module.named_parameters():
            flat = p.detach().reshape(-1)
            g = np.zeros(flat.shape[0])
            for j in range(flat.shape[0]):
                orig = float(flat[j])
                flat[j] = orig + eps
                plus = float(loss_fn())
                flat[j] = orig - eps
                minus = float(loss_fn())
                flat[j] = orig
                g[j] = (plus - minus) / (2 * eps)
            grads[name] = g.reshape(tuple(p.shape))
    return grads


@pytest.mark.parametrize("kw, fwd", [
    ({}, {}),
    ({"batch_first": True, "add_bias_kv": True}, {"average_attn_weights": False}),
    ({"kdim": 3, "vdim": 2, "add_zero_attn": True}, {"need_weights": False}),
])
def test_multihead_gradcheck_without_torch(kw, fwd):
    m = mt.nn.MultiheadAttention(4, 2, **kw).double()
    kd, vd = kw.get("kdim", 4), kw.get("vdim", 4)
    lead = (lambda t: (2, t)) if kw.get("batch_first") else (lambda t: (t, 2))
    q = mt.tensor(rnd(1, *lead(3), 4), requires_grad=True)
    k = mt.tensor(rnd(2, *lead(4), kd), requires_grad=True)
    v = mt.tensor(rnd(3, *lead(4), vd), requires_grad=True)
    bias = mt.tensor(rnd(4, 3, 4), requires_grad=True)            # a learnable float attn_mask
    pad = mt.tensor(np.where([[False, False, True, False], [False, True, True, False]], -np.inf, 0.0))

    def f(q, k, v, bias):
        out, w = m(q, k, v, key_padding_mask=pad, attn_mask=bias, **fwd)
        return (out,) if w is None else (out, w)

    assert gradcheck(f, [q, k, v, bias])
    weights = [mt.tensor(rnd(10 + i, *o.shape)) for i, o in enumerate(f(q, k, v, bias))]

    def loss():
        return sum((o * u).sum() for o, u in zip(f(q, k, v, bias), weights))

    m.zero_grad()
    loss().backward()
    numeric = numeric_parameter_grads(m, loss)
    for name, p in m.named_parameters():
        assert_close(p.grad.numpy(), numeric[name], rtol=1e-5, atol=1e-7, msg=name)


def test_encoder_layer_gradcheck_without_torch():
    layer = mt.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation="gelu").double()
    x = mt.tensor(rnd(1, 3, 2, 4), requires_grad=True)
    mask = mt.nn.Transformer.generate_square_subsequent_mask(3, dtype=mt.bool)
    pad = mt.tensor([[False, False, False], [False, False, True]])
    assert gradcheck(lambda x: layer(x, src_mask=mask, src_key_padding_mask=pad), [x])


# ---- errors -------------------------------------------------------------------------------------
def _mha(lib, **kw):
    return lib.nn.MultiheadAttention(4, 2, **kw)


def _x(lib, *shape):
    return lib.zeros(*shape)


BAD = {
    "heads_dont_divide": lambda lib: lib.nn.MultiheadAttention(6, 4),
    "zero_embed_dim": lambda lib: lib.nn.MultiheadAttention(0, 2),
    "query_4d": lambda lib: _mha(lib)(_x(lib, 1, 3, 2, 4), _x(lib, 1, 3, 2, 4), _x(lib, 1, 3, 2, 4)),
    "key_2d_query_3d": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 3, 4), _x(lib, 3, 4)),
    "query_features": lambda lib: _mha(lib)(_x(lib, 3, 2, 5), _x(lib, 3, 2, 4), _x(lib, 3, 2, 4)),
    "key_value_shapes": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 4), _x(lib, 6, 2, 4)),
    "key_value_features": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 3), _x(lib, 5, 2, 4)),
    "kdim_features": lambda lib: _mha(lib, kdim=3, vdim=5)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 4), _x(lib, 5, 2, 5)),
    "kdim_lengths": lambda lib: _mha(lib, kdim=3, vdim=5)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 3), _x(lib, 6, 2, 5)),
    "batch_sizes": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 3, 4), _x(lib, 5, 3, 4)),
    "attn_mask_2d_shape": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 4), _x(lib, 5, 2, 4),
                                                attn_mask=lib.zeros(5, 3, dtype=lib.bool)),
    "attn_mask_3d_shape": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 4), _x(lib, 5, 2, 4),
                                                attn_mask=lib.zeros(2, 3, 5, dtype=lib.bool)),
    "attn_mask_4d": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 4), _x(lib, 5, 2, 4),
                                          attn_mask=lib.zeros(2, 2, 3, 5, dtype=lib.bool)),
    "attn_mask_unbatched_3d": lambda lib: _mha(lib)(_x(lib, 3, 4), _x(lib, 5, 4), _x(lib, 5, 4),
                                                    attn_mask=lib.zeros(3, 3, 5, dtype=lib.bool)),
    "attn_mask_integer": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 4), _x(lib, 5, 2, 4),
                                               attn_mask=lib.zeros(3, 5, dtype=lib.long)),
    "padding_mask_shape": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 4), _x(lib, 5, 2, 4),
                                                key_padding_mask=lib.zeros(5, 2, dtype=lib.bool)),
    "padding_mask_dims": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 5, 2, 4), _x(lib, 5, 2, 4),
                                               key_padding_mask=lib.zeros(5, dtype=lib.bool)),
    "causal_without_mask": lambda lib: _mha(lib)(_x(lib, 3, 2, 4), _x(lib, 3, 2, 4), _x(lib, 3, 2, 4),
                                                 is_causal=True),
    "weights_path_float_mask_dtype": lambda lib: _mha(lib)(_x(lib, 3, 2, 4).double(), _x(lib, 3, 2, 4).double(),
                                                           _x(lib, 3, 2, 4).double(), attn_mask=lib.zeros(3, 3)),
    "activation_name": lambda lib: lib.nn.TransformerEncoderLayer(4, 2, activation="tanh"),
    "transformer_batch": lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8)(_x(lib, 3, 2, 4), _x(lib, 3, 3, 4)),
    "transformer_features": lambda lib: lib.nn.Transformer(4, 2, 1, 1, 8)(_x(lib, 3, 2, 4), _x(lib, 3, 2, 5)),
    "encoder_layer_mask_shape": lambda lib: lib.nn.TransformerEncoderLayer(4, 2, 8)(
        _x(lib, 3, 2, 4), src_mask=lib.zeros(4, 4, dtype=lib.bool)),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_what_pytorch_raises_with_a_clear_message(name):
    torch = torch_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            BAD[name](torch)
        with pytest.raises(Exception) as got:
            BAD[name](mt)
    assert got.type is expected.type, (got.value, expected.value)
    assert any(w in str(got.value) for w in ("MultiheadAttention", "Transformer", "activation", "embed_dim",
                                              "attn_mask")), got.value


def test_bad_input_errors_without_torch_name_the_shapes():
    m = mt.nn.MultiheadAttention(4, 2)
    x = mt.zeros(3, 2, 4)
    with pytest.raises(RuntimeError, match=r"MultiheadAttention: the shape of the 2D attn_mask is \(5, 3\), but "
                                           r"should be \(L, S\) = \(3, 3\)"):
        m(x, x, x, attn_mask=mt.zeros(5, 3, dtype=mt.bool))
    with pytest.raises(AssertionError, match=r"embed_dim must be divisible by num_heads, got embed_dim=6 and "
                                             r"num_heads=4"):
        mt.nn.MultiheadAttention(6, 4)
    with pytest.raises(TypeError, match="MultiheadAttention: key must be a Tensor, got list"):
        m(x, [1.0], x)


def test_mismatched_mask_types_warn_as_in_pytorch():
    m = mt.nn.MultiheadAttention(4, 2)
    x = mt.zeros(3, 2, 4)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
        m(x, x, x, key_padding_mask=mt.zeros(2, 3, dtype=mt.bool), attn_mask=mt.zeros(3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(x, x, x, key_padding_mask=mt.zeros(2, 3, dtype=mt.bool), attn_mask=mt.zeros(3, 3, dtype=mt.bool))


# ---- the transformer layers -------------------------------------------------------------------
D, F_, NH = 8, 12, 2  # d_model, dim_feedforward, nhead


def activation_for(lib, kind):
    if kind == "function":
        return lib.nn.functional.silu
    if kind == "module":
        return lib.nn.GELU(approximate="tanh")
    return kind


def enc_layer(lib, norm_first=False, batch_first=False, activation="relu", bias=True):
    return lib.nn.TransformerEncoderLayer(D, NH, F_, dropout=0.1, activation=activation_for(lib, activation),
                                          batch_first=batch_first, norm_first=norm_first, bias=bias)


def src_shape(batch_first, n=N, s=S):
    return (n, s, D) if batch_first else (s, n, D)


ENCODER_LAYER_CASES = {
    # name: (layer kwargs, inputs, forward kwargs)
    "post_norm_relu": ({}, {"src": rnd(1, S, N, D)}, {}),
    "pre_norm_gelu": ({"norm_first": True, "activation": "gelu"}, {"src": rnd(1, S, N, D)}, {}),
    "function_activation": ({"activation": "function", "batch_first": True}, {"src": rnd(1, N, S, D)}, {}),
    "module_activation": ({"activation": "module", "norm_first": True}, {"src": rnd(1, S, N, D)}, {}),
    "no_bias": ({"bias": False}, {"src": rnd(1, S, N, D)}, {}),
    "padding_batch_first": ({"batch_first": True}, {"src": rnd(1, N, S, D),
                                                    "src_key_padding_mask": bool_mask(2, (N, S))}, {}),
    "causal_mask_and_hint": ({}, {"src": rnd(1, S, N, D), "src_mask": causal_bool(S)}, {"is_causal": True}),
    "float_mask_and_padding": ({"norm_first": True}, {"src": rnd(1, S, N, D), "src_mask": rnd(3, S, S),
                                                      "src_key_padding_mask": rnd(2, N, S)}, {}),
    "unbatched": ({"batch_first": True}, {"src": rnd(1, S, D), "src_key_padding_mask": bool_mask(2, (S,))}, {}),
}


def call_with(first, *rest, **kw):
    """A call(module, tensors) that passes tensors[first] (and rest) positionally, the others by name."""
    def call(m, t):
        named = {k: v for k, v in t.items() if k not in (first, *rest)}
        return m(t[first], *(t[r] for r in rest), **named, **kw)
    return call


@pytest.mark.parametrize("name", list(ENCODER_LAYER_CASES))
def test_encoder_layer_values_and_gradients_equal_pytorchs(name):
    layer_kw, inputs, kw = ENCODER_LAYER_CASES[name]
    ours, theirs = both(lambda lib: enc_layer(lib, **layer_kw), inputs, call_with("src", **kw))
    assert_same(ours, theirs)


ENCODER_CASES = {
    "final_norm_causal_detected": ({"norm": True}, {"src": rnd(1, S, N, D)}, {"mask": "causal"}),
    "no_norm_padding": ({"batch_first": True}, {"src": rnd(1, N, S, D),
                                                "src_key_padding_mask": bool_mask(2, (N, S))}, {}),
    "pre_norm_gelu_mask": ({"norm": True, "norm_first": True, "activation": "gelu"},
                           {"src": rnd(1, S, N, D), "mask": bool_mask(3, (S, S))}, {}),
    "unbatched": ({"norm": True}, {"src": rnd(1, S, D)}, {"mask": "causal"}),
}


def make_encoder(lib, norm=False, **layer_kw):
    return lib.nn.TransformerEncoder(enc_layer(lib, **layer_kw), num_layers=3,
                                     norm=lib.nn.LayerNorm(D) if norm else None, enable_nested_tensor=False)


@pytest.mark.parametrize("name", list(ENCODER_CASES))
def test_encoder_values_and_gradients_equal_pytorchs(name):
    enc_kw, inputs, kw = ENCODER_CASES[name]
    inputs = dict(inputs)
    kw = dict(kw)
    if kw.pop("mask", None) == "causal":  # recognised as causal (is_causal=None), so it takes the causal path
        inputs["mask"] = np.where(causal_bool(S), -np.inf, 0.0)
    ours, theirs = both(lambda lib: make_encoder(lib, **enc_kw), inputs, call_with("src", **kw))
    assert_same(ours, theirs)


def dec_layer(lib, norm_first=False, batch_first=False, activation="relu"):
    return lib.nn.TransformerDecoderLayer(D, NH, F_, dropout=0.1, activation=activation_for(lib, activation),
                                          batch_first=batch_first, norm_first=norm_first)


T = 4  # target length

DECODER_LAYER_CASES = {
    "post_norm": ({}, {"tgt": rnd(1, T, N, D), "memory": rnd(2, S, N, D)}, {}),
    "pre_norm_masks": ({"norm_first": True, "activation": "gelu"},
                       {"tgt": rnd(1, T, N, D), "memory": rnd(2, S, N, D), "tgt_mask": causal_bool(T),
                        "memory_mask": bool_mask(3, (T, S)), "tgt_key_padding_mask": bool_mask(4, (N, T)),
                        "memory_key_padding_mask": bool_mask(5, (N, S))}, {"tgt_is_causal": True}),
    "batch_first_float_masks": ({"batch_first": True, "activation": "module"},
                                {"tgt": rnd(1, N, T, D), "memory": rnd(2, N, S, D), "tgt_mask": rnd(3, T, T),
                                 "memory_key_padding_mask": rnd(5, N, S)}, {}),
    "unbatched": ({}, {"tgt": rnd(1, T, D), "memory": rnd(2, S, D), "tgt_mask": causal_bool(T)}, {}),
}


@pytest.mark.parametrize("name", list(DECODER_LAYER_CASES))
def test_decoder_layer_values_and_gradients_equal_pytorchs(name):
    layer_kw, inputs, kw = DECODER_LAYER_CASES[name]
    ours, theirs = both(lambda lib: dec_layer(lib, **layer_kw), inputs, call_with("tgt", "memory", **kw))
    assert_same(ours, theirs)


def test_decoder_stack_values_and_gradients_equal_pytorchs():
    inputs = {"tgt": rnd(1, N, T, D), "memory": rnd(2, N, S, D),
              "tgt_mask": np.where(causal_bool(T), -np.inf, 0.0), "memory_key_padding_mask": bool_mask(5, (N, S))}

    def make(lib):
        return lib.nn.TransformerDecoder(dec_layer(lib, batch_first=True), 2, norm=lib.nn.LayerNorm(D))

    def call(m, t):  # the causal float mask is a constant, as generate_square_subsequent_mask's
        mask = t.pop("tgt_mask").detach()
        return m(t.pop("tgt"), t.pop("memory"), tgt_mask=mask, **t)

    ours, theirs = both(make, inputs, call)
    assert_same(ours, theirs)


@pytest.mark.parametrize("batch_first, norm_first", [(False, False), (True, True)])
def test_transformer_end_to_end_equals_pytorch(batch_first, norm_first):
    s_shape, t_shape = src_shape(batch_first), src_shape(batch_first, s=T)
    inputs = {"src": rnd(1, *s_shape), "tgt": rnd(2, *t_shape), "src_key_padding_mask": bool_mask(3, (N, S)),
              "memory_key_padding_mask": bool_mask(3, (N, S)), "tgt_key_padding_mask": bool_mask(4, (N, T))}

    def make(lib):
        return lib.nn.Transformer(D, NH, 2, 2, F_, dropout=0.1, batch_first=batch_first, norm_first=norm_first)

    def call(m, t):
        mask = type(m).generate_square_subsequent_mask(T, dtype=t["src"].dtype)
        return m(t.pop("src"), t.pop("tgt"), tgt_mask=mask, **t)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's note that a sequence-first encoder can't use nested tensors
        ours, theirs = both(make, inputs, call)
    assert_same(ours, theirs)


def test_transformer_state_dict_names_shapes_and_repr_equal_pytorchs():
    torch = torch_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = [
            (lambda lib: lib.nn.Transformer(D, NH, 2, 1, F_)),
            (lambda lib: lib.nn.Transformer(D, NH, 1, 2, F_, bias=False, norm_first=True, activation="gelu")),
            (lambda lib: enc_layer(lib, activation="module")),
            (lambda lib: lib.nn.TransformerEncoder(enc_layer(lib), 2, norm=lib.nn.LayerNorm(D))),
            (lambda lib: lib.nn.TransformerDecoder(dec_layer(lib), 2)),
        ]
        for make in pairs:
            ours, theirs = make(mt), make(torch)
            assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
                   [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
            assert repr(ours) == repr(theirs)
            copy_state(ours, theirs, torch)   # minitensor -> PyTorch ...
            copy_state(theirs, ours, mt)      # ... and back, strictly


def test_layers_are_deep_copies_and_transformer_reinitialises_with_xavier():
    layer = mt.nn.TransformerEncoderLayer(D, NH, 64)
    enc = mt.nn.TransformerEncoder(layer, 3)
    w = [enc.layers[i].linear1.weight for i in range(3)]
    assert w[0] is not w[1] and w[0] is not layer.linear1.weight
    assert mt.equal(w[0], w[1]) and mt.equal(w[0], layer.linear1.weight)  # copies start from the same values
    with mt.no_grad():
        w[0].mul_(2.0)
    assert not mt.equal(w[0], w[1])
    # Transformer: every matrix Xavier-uniform (linear1 (64, 8): bound sqrt(6/72) = 0.29, below Linear's
    # 1/sqrt(8) = 0.35), biases as their layers made them
    model = mt.nn.Transformer(D, NH, 1, 1, 64)
    w1 = model.encoder.layers[0].linear1.weight.detach().numpy()
    assert 0.8 * math.sqrt(6 / 72) < np.abs(w1).max() <= math.sqrt(6 / 72)
    assert not model.decoder.layers[0].multihead_attn.in_proj_bias.detach().numpy().any()
    assert (model.encoder.norm.weight.detach().numpy() == 1).all()
    assert model.encoder.layers[0].linear1.bias.detach().numpy().any()
    assert (model.d_model, model.nhead, model.batch_first) == (D, NH, False)


def test_defaults_are_pytorchs():
    layer = mt.nn.TransformerEncoderLayer(D, NH)
    assert layer.linear1.out_features == 2048 and layer.dropout.p == 0.1 and not layer.norm_first
    assert layer.activation is mt.nn.functional.relu and layer.norm1.eps == 1e-5
    assert layer.self_attn.batch_first is False and layer.self_attn.dropout == 0.1
    torch = torch_or_skip()
    import inspect
    for name in ("MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
                 "TransformerDecoder", "Transformer"):
        for method in ("__init__", "forward"):
            ours = inspect.signature(getattr(getattr(mt.nn, name), method)).parameters
            theirs = inspect.signature(getattr(getattr(torch.nn, name), method)).parameters
            assert list(ours) == list(theirs), (name, method)
            for p in theirs:
                default = theirs[p].default
                if p != "activation":
                    assert ours[p].default == default, (name, method, p)


@pytest.mark.parametrize("dtype", [None, "float64", "bool"])
def test_generate_square_subsequent_mask_values_and_dtype(dtype):
    torch = torch_or_skip()
    ours = mt.nn.Transformer.generate_square_subsequent_mask(5, dtype=dtype and getattr(mt, dtype))
    theirs = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=dtype and getattr(torch, dtype))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert (ours.numpy() == theirs.numpy()).all()


def test_generate_square_subsequent_mask_without_torch():
    m = mt.nn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype == mt.float32 and m.tolist() == [[0, -math.inf, -math.inf], [0, 0, -math.inf], [0, 0, 0]]


def test_eval_encoder_zeroes_padding_where_pytorch_packs_it():
    """PyTorch's encoder skips padded positions in eval mode without gradients (its nested-tensor path),
    and outputs 0 there; with gradients, or padding not at the end, it computes them."""
    torch = torch_or_skip()

    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(D, NH, F_, dropout=0.0, batch_first=True)
        return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(D))

    theirs, ours = make(torch).double().eval(), make(mt).double().eval()
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, dtype=torch.float64) * 0.3)
    copy_state(theirs, ours, mt)
    x = rnd(1, N, S, D)
    at_end = np.zeros((N, S), dtype=bool)
    at_end[0, 3:], at_end[2, 1:] = True, True
    not_at_end = at_end.copy()
    not_at_end[1, 0] = True
    for pad in (at_end, not_at_end):
        for grad in (False, True):
            with torch.set_grad_enabled(grad), mt.set_grad_enabled(grad), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # PyTorch's note that its nested tensors are a prototype
                out_t = theirs(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
                out_m = ours(mt.tensor(x), src_key_padding_mask=mt.tensor(pad))
            assert_close(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-9, atol=1e-9)
            zeroed = pad is at_end and not grad  # then the final norm sees zeros there: its output is its bias
            assert (out_m.detach().numpy()[pad] == ours.norm.bias.detach().numpy()).all() == zeroed


def test_encoder_layer_in_training_drops_and_in_eval_does_not():
    layer = mt.nn.TransformerEncoderLayer(D, NH, F_, dropout=0.3, batch_first=True).double()
    x = mt.tensor(rnd(1, N, S, D))
    a, b = layer(x), layer(x)
    assert not mt.allclose(a, b)
    layer.eval()
    assert mt.equal(layer(x), layer(x))


def test_runner_maps_the_torch_names():
    from minitensor import run as runner
    with runner.torch_is_minitensor():
        import torch
        assert torch.nn.MultiheadAttention is mt.nn.MultiheadAttention
        assert torch.nn.Transformer.generate_square_subsequent_mask(2).dtype == mt.float32


def test_each_step_is_a_node_explain_can_show(node_names):
    m = mt.nn.MultiheadAttention(4, 2)
    x = mt.randn(3, 2, 4, requires_grad=True)
    out, _ = m(x, x, x, attn_mask=mt.nn.Transformer.generate_square_subsequent_mask(3))
    names = node_names(out)
    for step in ("IndexBackward", "LinearBackward", "PermuteBackward", "MatmulBackward", "SoftmaxBackward"):
        assert any(step in n for n in names), f"{step} missing from {names}"
    assert "MultiheadAttention" not in " ".join(names)  # composed: no node of its own
    assert mt.autograd.explain(out.sum())
