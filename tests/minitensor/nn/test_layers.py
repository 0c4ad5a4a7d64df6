"""Layers: forward math written out in numpy, float64 gradient checks, containers, dtypes."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitensor as mt
import minitensor.nn as nn
from minitensor.autograd import gradcheck


def functional_call(module, params, *inputs):
    """Run `module` with some parameters replaced by the given tensors (so gradcheck can vary them)."""
    store = module._parameters
    saved = dict(store)
    store.update(params)
    try:
        return module(*inputs)
    finally:
        store.clear()
        store.update(saved)


def check_module_grads(module, *inputs):
    names = [n for n, p in module._parameters.items() if p is not None]
    n_in = len(inputs)

    def fn(*args):
        return functional_call(module, dict(zip(names, args[n_in:])), *args[:n_in])

    params = [mt.tensor(module._parameters[n].numpy(force=True).copy(), requires_grad=True) for n in names]
    assert gradcheck(fn, tuple(inputs) + tuple(params))


def rand64(*shape, seed=0):
    return mt.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


# ---- Linear ---------------------------------------------------------------------------------------
@given(st.integers(1, 4), st.integers(1, 4), st.booleans(), st.sampled_from([(), (2,), (2, 3)]))
def test_linear_forward_is_x_wT_plus_b(n_in, n_out, bias, batch):
    lin = nn.Linear(n_in, n_out, bias=bias, dtype=mt.float64)
    x = np.random.default_rng(n_in).standard_normal(batch + (n_in,))
    expected = x @ lin.weight.numpy(force=True).T + (lin.bias.numpy(force=True) if bias else 0.0)
    np.testing.assert_allclose(lin(mt.tensor(x)).numpy(force=True), expected, rtol=1e-12, atol=1e-12)
    assert lin.weight.shape == (n_out, n_in)
    assert (lin.bias is None) == (not bias) and "bias" in lin._parameters


def test_linear_gradients():
    check_module_grads(nn.Linear(3, 2, dtype=mt.float64), rand64(4, 3))
    check_module_grads(nn.Linear(3, 2, bias=False, dtype=mt.float64), rand64(2, 4, 3))


def test_linear_dtype_and_errors():
    assert nn.Linear(2, 2).weight.dtype == mt.float32
    lin = nn.Linear(2, 2, dtype=mt.float64)
    assert lin.weight.dtype == lin.bias.dtype == mt.float64
    assert nn.Linear(2, 2)(mt.ones(1, 2)).dtype == mt.float32
    with pytest.raises(RuntimeError, match="device"):
        nn.Linear(2, 2, device="cuda")
    with pytest.raises(RuntimeError, match="features"):
        nn.Linear(3, 2)(mt.ones(1, 2))


# ---- Embedding -------------------------------------------------------------------------------------
def test_embedding_looks_up_rows_and_accumulates_repeated_indices():
    emb = nn.Embedding(5, 3, dtype=mt.float64)
    idx = mt.tensor([[1, 1, 4], [0, 1, 2]])
    out = emb(idx)
    np.testing.assert_array_equal(out.numpy(force=True), emb.weight.numpy(force=True)[idx.numpy(force=True)])
    g = np.random.default_rng(1).standard_normal(out.shape)
    out.backward(mt.tensor(g))
    expected = np.zeros((5, 3))
    np.add.at(expected, idx.numpy(force=True), g)
    np.testing.assert_allclose(emb.weight.grad.numpy(force=True), expected, rtol=1e-12)


def test_embedding_gradients():
    check_module_grads(nn.Embedding(5, 3, dtype=mt.float64), mt.tensor([[0, 4, 4], [2, 0, 1]]))


def test_embedding_padding_idx_is_zero_and_gets_no_gradient():
    emb = nn.Embedding(4, 2, padding_idx=-1)
    assert emb.padding_idx == 3 and not emb.weight.numpy(force=True)[3].any() and emb.weight.numpy(force=True)[:3].any()
    emb(mt.tensor([3, 0, 3])).sum().backward()
    assert not emb.weight.grad.numpy(force=True)[3].any() and (emb.weight.grad.numpy(force=True)[0] == 1).all()
    assert repr(emb) == "Embedding(4, 2, padding_idx=3)"
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(4, 2, padding_idx=4)


def test_embedding_from_pretrained_copies_and_freezes():
    w = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad and emb.weight.numpy(force=True) is not w.numpy(force=True)
    np.testing.assert_array_equal(emb(mt.tensor([1])).numpy(force=True), [[3.0, 4.0]])
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad


# ---- LayerNorm -------------------------------------------------------------------------------------
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_matches_its_formula(affine):
    ln = nn.LayerNorm((2, 3), eps=1e-3, elementwise_affine=affine, dtype=mt.float64)
    if affine:
        nn.init.normal_(ln.weight)
        nn.init.normal_(ln.bias)
    x = np.random.default_rng(2).standard_normal((4, 2, 3)) * 3 + 1
    mu = x.mean(axis=(1, 2), keepdims=True)
    var = ((x - mu) ** 2).mean(axis=(1, 2), keepdims=True)  # population variance
    expected = (x - mu) / np.sqrt(var + 1e-3)
    if affine:
        expected = expected * ln.weight.numpy(force=True) + ln.bias.numpy(force=True)
    np.testing.assert_allclose(ln(mt.tensor(x)).numpy(force=True), expected, rtol=1e-10, atol=1e-12)
    assert [n for n, _ in ln.named_parameters()] == (["weight", "bias"] if affine else [])
    check_module_grads(ln, rand64(4, 2, 3))


def test_layer_norm_without_bias():
    ln = nn.LayerNorm(3, bias=False)
    assert ln.bias is None and [n for n, _ in ln.named_parameters()] == ["weight"]


# ---- activations and the rest ---------------------------------------------------------------------
X = np.linspace(-3, 3, 13)


@pytest.mark.parametrize(
    "module, formula",
    [
        (nn.ReLU(), lambda x: np.maximum(x, 0)),
        (nn.Tanh(), np.tanh),
        (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
        (nn.GELU(), lambda x: x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
        (nn.GELU(approximate="tanh"),
         lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
        (nn.Identity(54, unused=1), lambda x: x),
    ],
    ids=["relu", "tanh", "sigmoid", "gelu", "gelu_tanh", "identity"],
)
def test_activation_formulas(module, formula):
    np.testing.assert_allclose(module(mt.tensor(X)).numpy(force=True), formula(X), rtol=1e-7, atol=1e-12)


def test_softmax_module_uses_its_dim():
    x = np.random.default_rng(3).standard_normal((2, 3))
    for dim in (0, 1, -1):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        np.testing.assert_allclose(nn.Softmax(dim=dim)(mt.tensor(x)).numpy(force=True),
                                   e / e.sum(axis=dim, keepdims=True), rtol=1e-12)
    assert repr(nn.Softmax(dim=-1)) == "Softmax(dim=-1)"


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"


def test_dropout_scales_survivors_and_validates_p():
    mt.manual_seed(1)
    x = mt.ones(20000, dtype=mt.float64)
    y = nn.Dropout(0.25)(x).numpy(force=True)
    assert set(np.unique(y)) == {0.0, 1 / 0.75}
    assert abs(y.mean() - 1.0) < 0.03  # inverted scaling keeps the expectation
    assert not nn.Dropout(1.0)(x).numpy(force=True).any()
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


# ---- containers -------------------------------------------------------------------------------------
def test_sequential_runs_in_order_and_indexes_like_pytorch():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    x = mt.randn(4, 2)
    np.testing.assert_allclose(seq(x).numpy(force=True), seq[2](seq[1](seq[0](x))).numpy(force=True))
    assert seq[-1] is seq[2] and len(seq) == 3 and list(seq) == [seq[0], seq[1], seq[2]]
    tail = seq[1:]
    assert list(tail._modules) == ["1", "2"]  # slicing keeps the names
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    seq.append(nn.Tanh())
    del seq[0]
    assert list(seq._modules) == ["0", "1", "2"] and isinstance(seq[2], nn.Tanh)
    seq.insert(0, nn.Identity())
    assert isinstance(seq[0], nn.Identity) and len(seq) == 4
    named = nn.Sequential({"enc": nn.Linear(1, 1), "act": nn.ReLU()})
    assert list(named.state_dict()) == ["enc.weight", "enc.bias"]


def test_module_list():
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    assert list(ml._modules) == ["0", "1", "2"] and len(ml) == 3
    ml.append(nn.ReLU())
    ml[0] = nn.Tanh()
    assert isinstance(ml[0], nn.Tanh) and isinstance(ml[-1], nn.ReLU)
    del ml[1]
    assert list(ml._modules) == ["0", "1", "2"]
    ml += [nn.Sigmoid()]
    assert isinstance(ml[3], nn.Sigmoid)
    ml.insert(1, nn.Identity())
    assert isinstance(ml[1], nn.Identity) and len(ml) == 5
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    with pytest.raises(IndexError):
        ml[10] = nn.ReLU()
    with pytest.raises(TypeError):
        ml.extend(nn.Linear(1, 1))


def test_module_dict():
    md = nn.ModuleDict({"b": nn.Linear(1, 2), "a": nn.Linear(2, 1)})
    assert list(md) == ["b", "a"] and "a" in md and len(md) == 2
    md["c"] = nn.ReLU()
    md.update([("d", nn.Tanh())])
    assert list(md.keys()) == ["b", "a", "c", "d"]
    assert isinstance(md.pop("c"), nn.ReLU) and "c" not in md
    assert list(md.state_dict()) == ["b.weight", "b.bias", "a.weight", "a.bias"]
