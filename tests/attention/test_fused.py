"""attention.fused: the single-node attention with a hand-derived backward equals the composed one.

Values and first and second derivatives are compared in float64 at a tight tolerance, with and
without masks (including fully masked rows) and with dropout (the same seed draws the same
keep-mask in both paths). The numpy twins of the fused backwards (attention.fast) are proven
equal to the Tensor-op backwards they stand in for.
"""
import contextlib

import numpy as np
import pytest
from hypothesis import given, strategies as st

import attention
import minitensor as mt
from attention import fast as fast_module, fused as fused_module, scaled_dot_product_attention as sdpa
from attention.fused import FusedAttention, FusedAttentionWeights
from attention.masks import prepare_mask
from minitensor.autograd import GradcheckError, gradcheck, gradgradcheck
from minitensor.testing import assert_close
from minitensor.testing.strategies import attention_inputs

TIGHT = dict(rtol=1e-10, atol=1e-12)


@contextlib.contextmanager
def backward_of(kind):
    """Run the fused nodes' "plain" backward (Tensor ops) or their "fast" numpy twins from attention.fast,
    whichever a test asks for, whatever else this process imported."""
    nodes = (FusedAttention, FusedAttentionWeights)
    twins = (fast_module.attention_backward, fast_module.weights_backward)
    before = [node.__dict__.get("fast_backward") for node in nodes]
    for node, twin in zip(nodes, twins):
        node.fast_backward = staticmethod(twin) if kind == "fast" else None
    try:
        yield
    finally:
        for node, was in zip(nodes, before):
            node.fast_backward = was


def _leaves(inp):
    return tuple(mt.tensor(t.numpy(force=True), requires_grad=True) for t in (inp.query, inp.key, inp.value))


def _run(fused, inputs, mask, dropout_p, seed, upstream, create_graph=False):
    mt.manual_seed(seed)
    out, w = sdpa(*inputs, mask=mask, dropout_p=dropout_p, fused=fused)
    g_out, g_w = upstream
    grads = mt.autograd.grad((out, w), inputs, grad_outputs=(g_out, g_w), create_graph=create_graph)
    return out, w, grads


@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 4), k_len=(1, 4), head_dim=(1, 3)),
       st.sampled_from([0.0, 0.3]), st.integers(0, 2**16))
def test_fused_equals_composed_values_and_gradients(inp, dropout_p, seed):
    rng = np.random.default_rng(seed)
    shapes = (inp.query.shape[:-1] + inp.value.shape[-1:], inp.query.shape[:-1] + inp.key.shape[-2:-1])
    upstream = tuple(mt.tensor(rng.standard_normal(s)) for s in shapes)   # into output *and* weights
    a_in, b_in = _leaves(inp), _leaves(inp)
    out_c, w_c, g_c = _run(False, a_in, inp.mask, dropout_p, seed, upstream)
    out_f, w_f, g_f = _run(True, b_in, inp.mask, dropout_p, seed, upstream)
    assert_close(out_f, out_c, **TIGHT)
    assert_close(w_f, w_c, **TIGHT)
    for gf, gc in zip(g_f, g_c):
        assert_close(gf, gc, **TIGHT)


@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 4), k_len=(1, 4), head_dim=(1, 3)),
       st.sampled_from([0.0, 0.3]), st.integers(0, 2**16), st.booleans())
def test_without_weights_the_output_and_its_gradients_are_the_same(inp, dropout_p, seed, create_graph):
    """need_weights=False (one node when fused, without dropout) against the composed path."""
    rng = np.random.default_rng(seed)
    g_out = mt.tensor(rng.standard_normal(inp.query.shape[:-1] + inp.value.shape[-1:]))
    results = []
    for fused, need_weights in ((False, True), (True, False)):
        inputs = _leaves(inp)
        mt.manual_seed(seed)
        out, w = sdpa(*inputs, mask=inp.mask, dropout_p=dropout_p, fused=fused, need_weights=need_weights)
        assert (w is None) == (not need_weights)
        grads = mt.autograd.grad(out, inputs, grad_outputs=g_out, create_graph=create_graph)
        results.append((out, grads))
    (out_c, g_c), (out_f, g_f) = results
    assert_close(out_f, out_c, **TIGHT)
    for gf, gc in zip(g_f, g_c):
        assert_close(gf, gc, **TIGHT)


@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 3), k_len=(1, 3), head_dim=(1, 2)),
       st.integers(0, 2**16))
def test_create_graph_backward_equals_numpy_backward(inp, seed):
    """The Tensor-op backward (recorded, for create_graph) and the numpy twin give the same numbers."""
    rng = np.random.default_rng(seed)
    shapes = (inp.query.shape[:-1] + inp.value.shape[-1:], inp.query.shape[:-1] + inp.key.shape[-2:-1])
    upstream = tuple(mt.tensor(rng.standard_normal(s)) for s in shapes)
    with backward_of("fast"):
        _, _, g_np = _run(True, _leaves(inp), inp.mask, 0.3, seed, upstream)
        _, _, g_graph = _run(True, _leaves(inp), inp.mask, 0.3, seed, upstream, create_graph=True)
    for a, b in zip(g_np, g_graph):
        assert b.grad_fn is not None
        assert_close(a, b, **TIGHT)


@given(attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 4), k_len=(1, 4), head_dim=(1, 3)),
       st.sampled_from(["output", "weights", "both", "output only"]), st.integers(0, 2**16))
def test_fast_twins_equal_the_plain_backward(inp, upstream_into, seed):
    """attention.fast's numpy twins against the fused nodes' own Tensor-op backward, first order (the
    only case where the twins run), into the output, the weights, both, or with need_weights=False
    (the one node that computes its own P): the same gradients, to the last bits' noise."""
    rng = np.random.default_rng(seed)
    g_out = mt.tensor(rng.standard_normal(inp.query.shape[:-1] + inp.value.shape[-1:]))
    g_w = mt.tensor(rng.standard_normal(inp.query.shape[:-1] + inp.key.shape[-2:-1]))
    grads = {}
    for kind in ("plain", "fast"):
        inputs = _leaves(inp)
        with backward_of(kind):
            out, w = sdpa(*inputs, mask=inp.mask, fused=True, need_weights=upstream_into != "output only")
            outputs, ups = {"output": ((out,), (g_out,)), "weights": ((w,), (g_w,)),
                            "both": ((out, w), (g_out, g_w)), "output only": ((out,), (g_out,))}[upstream_into]
            grads[kind] = mt.autograd.grad(outputs, inputs, grad_outputs=ups, allow_unused=True)
    for plain, fast in zip(grads["plain"], grads["fast"]):
        assert (plain is None) == (fast is None)
        if plain is not None:
            assert_close(fast, plain, **TIGHT)


@given(attention_inputs(batch=(1, 1), heads=(1, 2), q_len=(1, 3), k_len=(1, 3), head_dim=(1, 2)))
def test_fused_second_derivatives(inp):
    q, k, v = _leaves(inp)
    assert gradgradcheck(lambda q, k, v: sdpa(q, k, v, mask=inp.mask, fused=True), (q, k, v))


def test_fused_gradcheck_with_dropout():
    mt.manual_seed(0)
    q, k, v = (mt.randn(2, 2, 3, 2, dtype=mt.float64, requires_grad=True) for _ in range(3))

    def f(q, k, v):
        mt.manual_seed(11)  # the same keep-mask at every evaluation, so the function is deterministic
        return sdpa(q, k, v, dropout_p=0.4, fused=True)

    assert gradcheck(f, (q, k, v))


def test_hessian_vector_product_matches_composed():
    mt.manual_seed(1)
    base = [mt.randn(2, 3, 2, dtype=mt.float64) for _ in range(3)]
    u = mt.randn(2, 3, 2, dtype=mt.float64)
    hv = []
    for fused in (False, True):
        q, k, v = (mt.tensor(b.numpy(force=True), requires_grad=True) for b in base)
        out, _ = sdpa(q, k, v, mask=attention.causal_mask(3), fused=fused)
        (gq,) = mt.autograd.grad(out, (q,), grad_outputs=u, create_graph=True)
        hv.append(mt.autograd.grad((gq * u).sum(), (q, k, v)))
    for a, b in zip(*hv):
        assert_close(a, b, **TIGHT)


@pytest.mark.parametrize("kind", ["plain", "fast"])
@pytest.mark.parametrize("upstream_into", ["output", "weights"])
def test_gradcheck_catches_a_wrong_fused_backward(monkeypatch, upstream_into, kind):
    """The checks above can fail: drop the rowsum term of the softmax VJP, which both fused nodes
    share (in their Tensor-op backward, or in the numpy twins), and gradcheck objects, naming the
    node whose backward ran it."""
    def wrong_plain(d_p, p, query, key, mask, scale, needs):
        d_s = p * d_p                                       # missing: - rowsum(dP * P)
        return (d_s @ key) * scale, (d_s.mT @ query) * scale

    def wrong_fast(d_p, p, query, key, mask, scale, needs, own):
        d_s = p * d_p                                       # missing: - rowsum(dP * P)
        return (mt.from_numpy((d_s @ key.numpy(force=True)) * scale),
                mt.from_numpy((np.swapaxes(d_s, -1, -2) @ query.numpy(force=True)) * scale))

    if kind == "plain":
        monkeypatch.setattr(fused_module, "scores_vjp", wrong_plain)
    else:
        monkeypatch.setattr(fast_module, "scores_vjp_numpy", wrong_fast)
    mt.manual_seed(2)
    q, k, v = (mt.randn(3, 2, dtype=mt.float64, requires_grad=True) for _ in range(3))
    pick = 0 if upstream_into == "output" else 1
    node = "'FusedAttentionBackward'" if pick == 0 else "'FusedAttentionWeightsBackward'"
    with backward_of(kind), pytest.raises(GradcheckError, match=node):
        gradcheck(lambda q, k, v: sdpa(q, k, v, fused=True)[pick], (q, k, v))


@pytest.mark.parametrize("kind", ["plain", "fast"])
def test_a_query_gradient_never_depends_on_a_value_it_masks(kind):
    """Only the weights are differentiated, and a value that query 0 masks holds NaN: the fused
    node still computes dO V^T (dO = 0 here), so it must drop that entry before the softmax VJP."""
    rng = np.random.default_rng(4)
    mask = mt.tensor([[True, False, True], [True, True, True]])
    v_np = rng.standard_normal((3, 2))
    v_np[1] = np.nan                                  # allowed for query 1 only
    base_q, k = rng.standard_normal((2, 2)), mt.tensor(rng.standard_normal((3, 2)))
    up = mt.tensor(rng.standard_normal((2, 3)))
    grads = []
    for fused, create_graph in ((False, False), (True, False), (True, True)):
        q = mt.tensor(base_q, requires_grad=True)
        with backward_of(kind):
            _, w = sdpa(q, k, mt.tensor(v_np), mask=mask, fused=fused)
            (gq,) = mt.autograd.grad(w, (q,), grad_outputs=up, create_graph=create_graph)
        grads.append(gq.numpy(force=True)[0])
    for g in grads[1:]:
        assert np.isfinite(g).all()
        assert_close(g, grads[0], **TIGHT)


@pytest.mark.parametrize("kind", ["plain", "fast"])
def test_huge_finite_gradients_take_the_careful_path_and_stay_exact(kind):
    """The fused backward's numpy twin checks its row sums for NaN and inf by a sum of squares, which overflows
    for huge finite entries (beyond ~1e19 in float32): that only sends it down the careful path,
    whose gradients equal the composed path's."""
    rng = np.random.default_rng(6)
    q_np, k_np, v_np = (rng.standard_normal((2, 4, 3)).astype(np.float32) for _ in range(3))
    up = mt.tensor((rng.standard_normal((2, 4, 3)) * 1e21).astype(np.float32))
    grads = []
    for fused in (False, True):
        q, k, v = (mt.tensor(a, requires_grad=True) for a in (q_np, k_np, v_np))
        with backward_of(kind):
            out, _ = sdpa(q, k, v, is_causal=True, fused=fused, need_weights=False)
            out.backward(up)
        grads.append([t.grad.numpy(force=True) for t in (q, k, v)])
    for got, want in zip(grads[1], grads[0]):
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e16)


def test_fused_path_is_one_node_to_the_output_and_one_to_the_weights():
    mt.manual_seed(3)
    q, k, v = (mt.randn(2, 3, 2, dtype=mt.float64, requires_grad=True) for _ in range(3))
    out, w = sdpa(q, k, v, fused=True)
    assert out.grad_fn.name() == "FusedAttentionBackward"
    assert [n for n, _ in out.grad_fn.gradient_edges] == [q, k, v]   # straight to the leaves: P is not an input
    assert w.grad_fn.name() == "FusedAttentionWeightsBackward"
    assert [n for n, _ in w.grad_fn.gradient_edges] == [q, k]
    # each node on its own is differentiable, and so is a loss that reads both
    assert gradcheck(lambda q, k, v: sdpa(q, k, v, fused=True)[0], (q, k, v))
    assert gradcheck(lambda q, k, v: sdpa(q, k, v, fused=True)[1], (q, k, v))
    assert gradcheck(lambda q, k, v: sdpa(q, k, v, fused=True), (q, k, v))


def test_without_weights_the_fused_output_is_one_node():
    mt.manual_seed(6)
    q, k, v = (mt.randn(2, 3, 2, dtype=mt.float64, requires_grad=True) for _ in range(3))
    out, w = sdpa(q, k, v, is_causal=True, fused=True, need_weights=False)
    assert w is None
    assert out.grad_fn.name() == "FusedAttentionBackward"
    assert [n for n, _ in out.grad_fn.gradient_edges] == [q, k, v]
    assert gradcheck(lambda q, k, v: sdpa(q, k, v, is_causal=True, fused=True, need_weights=False)[0], (q, k, v))


def test_fused_attention_node_alone_matches_finite_differences():
    """FusedAttention computes P itself when not handed one: a function of Q, K and V alone."""
    mt.manual_seed(4)
    q, k = (mt.randn(2, 3, 2, dtype=mt.float64, requires_grad=True) for _ in range(2))
    v = mt.randn(2, 3, 4, dtype=mt.float64, requires_grad=True)
    mask = prepare_mask(attention.causal_mask(3), False, (2, 3, 3), mt.float64)
    assert gradcheck(lambda q, k, v: FusedAttention.apply(q, k, v, mask, 0.7, None), (q, k, v))
    assert gradgradcheck(lambda q, k, v: FusedAttention.apply(q, k, v, mask, 0.7, None), (q, k, v))


@given(st.data())
def test_fused_attention_node_gradcheck_on_broadcast_batch_dims(data):
    """The one-node path (need_weights=False) on Hypothesis shapes whose batch dims broadcast:
    key and value may have 1 where query has B or H, so dK and dV are summed back down to their
    own shapes. float64, random upstream weights (gradcheck's), with and without a causal mask."""
    B, H = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    tq, tk, d, dv = (data.draw(st.integers(1, 3)) for _ in range(4))
    kb, kh, vb, vh = (data.draw(st.sampled_from([1, n])) for n in (B, H, B, H))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    q = mt.tensor(rng.standard_normal((B, H, tq, d)), requires_grad=True)
    k = mt.tensor(rng.standard_normal((kb, kh, tk, d)), requires_grad=True)
    v = mt.tensor(rng.standard_normal((vb, vh, tk, dv)), requires_grad=True)
    causal = data.draw(st.booleans()) and tq == tk

    def attend(q, k, v):
        return sdpa(q, k, v, is_causal=causal, fused=True, need_weights=False)[0]

    assert type(attend(q, k, v).grad_fn) is FusedAttention  # the path under test: one node
    assert gradcheck(attend, (q, k, v))


def test_changing_the_weights_in_place_makes_the_output_backward_refuse():
    mt.manual_seed(5)
    q = mt.randn(3, 2, requires_grad=True)
    out, w = sdpa(q, q, q, fused=True)
    with mt.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="FusedAttentionBackward.*modified by an in-place operation"):
        out.sum().backward()


def test_gradients_of_head_views_come_back_in_the_views_layout():
    """MultiHeadAttention's q, k, v are (B, T, H, d) arrays seen as (B, H, T, d): the fused
    backward writes their gradients in that layout, so the transpose and reshape before it need
    no copy; the values are those of the plain product (scaled when asked), a contiguous input
    gets a contiguous one, and a broadcast input gets the product summed down to its shape."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal((2, 5, 3, 4))
    view = mt.from_numpy(base).transpose(1, 2)                        # (2, 3, 5, 4), strided
    a, b = rng.standard_normal((2, 3, 5, 6)), rng.standard_normal((2, 3, 6, 4))
    got = fast_module._grad_product(view, a, b).numpy(force=True)
    assert got.strides == view.numpy(force=True).strides
    np.testing.assert_array_equal(got, a @ b)
    contiguous = mt.from_numpy(np.ascontiguousarray(view.numpy(force=True)))
    plain = fast_module._grad_product(contiguous, a, b, 0.5).numpy(force=True)
    assert plain.flags.c_contiguous
    np.testing.assert_array_equal(plain, (a @ b) * 0.5)
    broadcast = mt.from_numpy(base[:1]).transpose(1, 2)                # batch dim 1: the product is wider
    summed = fast_module._grad_product(broadcast, a, b, 0.5).numpy(force=True)
    assert summed.shape == broadcast.shape
    np.testing.assert_allclose(summed, ((a @ b) * 0.5).sum(axis=0, keepdims=True), rtol=1e-12)


# ---- explain() prints the fused nodes' math -----------------------------------------------------

_ATTENTION_MATH = {
    "FusedAttentionBackward": ("out = P V", "P = softmax_rows(c Q K^T + bias)",
                               ("gV = P^T g", "dP = g V^T", "dS = P * (dP - rowsum(dP * P))", "gQ = c dS K",
                                "gK = c dS^T Q")),
    "FusedAttentionWeightsBackward": ("out = P = softmax_rows(S)", "S = c Q K^T + bias",
                                      ("dS = P * (g - rowsum(g * P))", "gQ = c dS K", "gK = c dS^T Q")),
}


@pytest.mark.parametrize("op", sorted(_ATTENTION_MATH))
def test_explain_shows_the_fused_nodes_math_and_no_implementation(op, implementation_words_in):
    rng = np.random.default_rng(9)
    q, k, v = (mt.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(3))
    out, w = sdpa(q, k, v, is_causal=True, fused=True)
    loss = (out * mt.tensor(rng.standard_normal(out.shape))).sum() + (w * mt.tensor(rng.standard_normal(w.shape))).sum()
    (row,) = [r for r in mt.autograd.explain(loss).rows if r.op == op]
    forward, vjp = " ".join(row.forward.split()), " ".join(row.vjp.split())
    start, definition, steps = _ATTENTION_MATH[op]
    assert forward.startswith(start) and definition in forward
    for step in steps:
        assert step in vjp
    assert implementation_words_in(forward + " " + vjp) == []


# Excerpts of what explain() printed for the two nodes before their docstrings kept only the math
_PRINTED_BEFORE = {
    "FusedAttentionBackward": "scores, mask, softmax and the product with V in one node Arguments: query (..., Tq, d), "
                              "key (..., Tk, d), value (..., Tk, dv) as Tensors of one dtype ... It is passed as "
                              "`SharedWeights`, not as a graph input",
    "FusedAttentionWeightsBackward": "Arguments: query (..., Tq, d), key (..., Tk, d) as Tensors of one dtype; "
                                     "then the "
                                     "constants `mask` (a `PreparedMask`) and the scale c.",
}


@pytest.mark.parametrize("op", sorted(_PRINTED_BEFORE))
def test_the_word_check_catches_what_the_fused_nodes_printed_before(op, implementation_words_in):
    assert implementation_words_in(_PRINTED_BEFORE[op])
