"""The speed layer's numpy twins (`minitensor/fast/vjps.py`) equal the ops' own backwards and forwards.

The engine runs an op's numpy twin when nothing records the backward, and its Tensor-op backward under
`create_graph=True`; the same graph run both ways must give the same gradients (float64, a random
upstream weight, Hypothesis shapes), for every input.
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import strategies as mst


def _both_ways(fn, arrays, seed):
    """Gradients of sum(U * fn(*inputs)) for every input, through the numpy twin and through the Tensor ops."""
    grads = []
    for create_graph in (False, True):
        inputs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in arrays]
        out = fn(*inputs)
        u = mt.tensor(np.random.default_rng(seed).standard_normal(tuple(out.shape)), dtype=mt.float64)
        grads.append(mt.autograd.grad((out * u).sum(), inputs, create_graph=create_graph))
    return grads


def _assert_equal_ways(fn, arrays, seed):
    twin, plain = _both_ways(fn, arrays, seed)
    for i, (a, b) in enumerate(zip(twin, plain)):
        np.testing.assert_allclose(a.numpy(force=True), b.numpy(force=True), rtol=1e-10, atol=1e-12,
                                   err_msg=f"input {i}")


def _array(draw, shape):
    return draw(mst.arrays_for(shape, dtype=np.float64))


@settings(max_examples=min(25, settings.default.max_examples), deadline=None)
@given(st.data(), st.integers(0, 2**31))
def test_linear(data, seed):
    lead = data.draw(mst.shapes(0, 2))
    n_in, n_out = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    bias = data.draw(st.booleans())
    arrays = [_array(data.draw, lead + (n_in,)), _array(data.draw, (n_out, n_in))]
    if bias:
        arrays.append(_array(data.draw, (n_out,)))
    _assert_equal_ways(lambda x, w, *b: F.linear(x, w, *b), arrays, seed)


@settings(max_examples=min(25, settings.default.max_examples), deadline=None)
@given(st.data(), st.integers(0, 2**31), st.booleans())
def test_layer_norm(data, seed, affine):
    shape = data.draw(mst.shapes(1))
    k = data.draw(st.integers(1, len(shape)))
    norm = shape[len(shape) - k:]
    arrays = [_array(data.draw, shape)] + ([_array(data.draw, norm), _array(data.draw, norm)] if affine else [])
    _assert_equal_ways(lambda x, *wb: F.layer_norm(x, norm, *wb), arrays, seed)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("weighted", [False, True])
@settings(max_examples=min(10, settings.default.max_examples), deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_cross_entropy(data, seed, reduction, smoothing, weighted):
    n, c = data.draw(st.integers(1, 5)), data.draw(st.integers(2, 5))
    target = mt.tensor(data.draw(st.lists(st.integers(-1, c - 1), min_size=n, max_size=n)))  # -1: ignored
    weight = mt.tensor(np.random.default_rng(seed).random(c) + 0.5, dtype=mt.float64) if weighted else None
    _assert_equal_ways(lambda x: F.cross_entropy(x, target, weight=weight, ignore_index=-1, reduction=reduction,
                                                 label_smoothing=smoothing), [_array(data.draw, (n, c))], seed)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@settings(max_examples=min(25, settings.default.max_examples), deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_gelu(data, seed, approximate):
    _assert_equal_ways(lambda x: F.gelu(x, approximate=approximate), [_array(data.draw, data.draw(mst.shapes()))], seed)


def test_the_twin_runs_without_create_graph_and_the_tensor_ops_with_it(monkeypatch):
    """So the two sides of the tests above really are two different computations."""
    calls = []
    twin = staticmethod(lambda ctx, g: calls.append("twin") or (None, None, None))
    monkeypatch.setattr(F.Linear, "fast_backward", twin)
    x, w = mt.randn(2, 3, requires_grad=True), mt.randn(4, 3, requires_grad=True)
    mt.autograd.grad(F.linear(x, w).sum(), [x, w], create_graph=True)
    assert calls == []
    F.linear(x, w).sum().backward()
    assert calls == ["twin"]


# ---- the forward twins: the same output as the op's own forward --------------------------------
def _forward_both_ways(fn, arrays):
    """fn's output with the speed layer's forward twins, and with the ops' own forwards (plugged out)."""
    outs = []
    for plugged in (True, False):
        if not plugged:
            mt.fast.plug_out()
        try:
            outs.append(fn(*[mt.tensor(a, dtype=mt.float64) for a in arrays]).numpy())
        finally:
            mt.fast.plug_in()
    return outs


@settings(max_examples=min(25, settings.default.max_examples), deadline=None)
@given(st.data(), st.booleans())
def test_layer_norm_forward(data, affine):
    shape = data.draw(mst.shapes(1))
    k = data.draw(st.integers(1, len(shape)))
    norm = shape[len(shape) - k:]
    arrays = [_array(data.draw, shape)] + ([_array(data.draw, norm), _array(data.draw, norm)] if affine else [])
    twin, plain = _forward_both_ways(lambda x, *wb: F.layer_norm(x, norm, *wb), arrays)
    np.testing.assert_allclose(twin, plain, rtol=1e-10, atol=1e-12)  # (row sums in another order)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@settings(max_examples=min(25, settings.default.max_examples), deadline=None)
@given(data=st.data())
def test_gelu_forward_bit_for_bit(data, approximate):
    twin, plain = _forward_both_ways(lambda x: F.gelu(x, approximate=approximate),
                                     [_array(data.draw, data.draw(mst.shapes()))])
    np.testing.assert_array_equal(twin, plain)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_gelu_tanh_forward_bit_for_bit_in_low_precision_with_its_limits(dtype):
    a = np.random.default_rng(3).standard_normal((40, 7)) * 4
    a[0, :7] = [np.inf, -np.inf, np.nan, 1e30, -1e30, 0.0, -0.0]  # (1e30: inf in float16)
    with np.errstate(over="ignore"):
        a = a.astype(dtype)
    outs = []
    for plugged in (True, False):
        if not plugged:
            mt.fast.plug_out()
        try:
            with np.errstate(over="raise", invalid="raise", divide="raise"):  # the twin is as quiet as the op
                outs.append(F.gelu(mt.from_numpy(a), approximate="tanh").numpy())
        finally:
            mt.fast.plug_in()
    assert outs[0].dtype == dtype
    np.testing.assert_array_equal(outs[0].view(np.uint8), outs[1].view(np.uint8))  # every bit, -0.0 and NaN's too


def test_an_embedding_backward_takes_the_rows_twin_and_equals_the_plain_scatter():
    idx = mt.tensor([[0, 2, 2], [4, 0, 1]])
    table = np.random.default_rng(1).standard_normal((5, 3))
    grads = []
    for plugged in (True, False):
        if not plugged:
            mt.fast.plug_out()
        try:
            w = mt.tensor(table, requires_grad=True)
            (F.embedding(idx, w) * mt.arange(18.0).reshape(2, 3, 3)).sum().backward()
            grads.append(w.grad.numpy())
        finally:
            mt.fast.plug_in()
    np.testing.assert_allclose(*grads, rtol=1e-12)
