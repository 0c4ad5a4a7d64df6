"""Seed examples: the "Illustrated: Self-Attention" worked example through SelfAttention, and a
tutorial-style PyTorch attention class running on minitensor with only the imports changed."""
import math

import numpy as np
import pytest

import attention
import minitensor as mt
from minitensor.autograd import gradcheck
from minitensor.testing import assert_close

X = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]
W_KEY = [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]
W_QUERY = [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]
W_VALUE = [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]]


@pytest.fixture
def tutorial_layer():
    layer = attention.SelfAttention(4, 3, scale=1.0)   # the tutorial applies no 1/sqrt(d_k)
    layer.load_state_dict({"w_key": mt.tensor(W_KEY, dtype=mt.float32), "w_query": mt.tensor(W_QUERY, dtype=mt.float32),
                           "w_value": mt.tensor(W_VALUE, dtype=mt.float32)})
    return layer


def test_tutorial_keys_queries_values_and_scores(tutorial_layer):
    x = mt.tensor(X, dtype=mt.float32)
    queries, keys, values = tutorial_layer.project(x)
    assert keys.tolist() == [[0, 1, 1], [4, 4, 0], [2, 3, 1]]
    assert queries.tolist() == [[1, 0, 2], [2, 2, 2], [2, 1, 3]]
    assert values.tolist() == [[1, 2, 3], [2, 8, 0], [2, 6, 3]]
    assert (queries @ keys.T).tolist() == [[2, 4, 4], [4, 16, 12], [4, 12, 10]]
    assert (x @ tutorial_layer.w_key).tolist() == keys.tolist()   # the tutorial's own line works


def test_tutorial_outputs(tutorial_layer):
    out, weights = tutorial_layer(mt.tensor(X, dtype=mt.float32))
    assert out.dtype == weights.dtype == mt.float32
    # the numbers the tutorial's code prints
    assert_close(weights[0], [6.3379e-02, 4.6831e-01, 4.6831e-01], rtol=1e-4, atol=1e-5)
    assert_close(out, [[1.9366, 6.6831, 1.5951], [2.0000, 7.9640, 0.0540], [1.9997, 7.7599, 0.3584]],
                 rtol=1e-4, atol=1e-4)


def test_tutorial_weights_load_by_copy_and_backward_is_right(tutorial_layer):
    layer = attention.SelfAttention(4, 3, scale=1.0).double()
    with mt.no_grad():
        layer.w_key.copy_(mt.tensor(W_KEY))
        layer.w_query.copy_(mt.tensor(W_QUERY))
        layer.w_value.copy_(mt.tensor(W_VALUE))
    x = mt.tensor(X, dtype=mt.float64)
    assert_close(layer(x)[0], tutorial_layer(x.float())[0], rtol=1e-6, atol=1e-6, check_dtype=False)
    rng = np.random.default_rng(0)
    u = mt.tensor(rng.standard_normal((3, 3)))
    (layer(x)[0] * u).sum().backward()
    for w in (layer.w_query, layer.w_key, layer.w_value):
        assert w.grad is not None and w.grad.shape == w.shape

    def f(wq, wk, wv):
        return attention.scaled_dot_product_attention(x @ wq, x @ wk, x @ wv, scale=1.0)

    weights = [mt.tensor(w, dtype=mt.float64, requires_grad=True) for w in (W_QUERY, W_KEY, W_VALUE)]
    assert gradcheck(f, weights)


# ---- a tutorial-style class, written against PyTorch, run on minitensor --------------------------

import minitensor as torch  # noqa: E402  (the only lines that differ from the PyTorch version)
import minitensor.nn as nn  # noqa: E402
import minitensor.nn.functional as F  # noqa: E402


class ScaledDotProductAttention(nn.Module):
    """Attention exactly as tutorials write it for PyTorch."""

    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None

    def forward(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask: torch.Tensor = None):
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask.eq(0), -1e9)
        p_attn = F.softmax(scores, dim=-1)
        if self.dropout is not None:
            p_attn = self.dropout(p_attn)
        return torch.matmul(p_attn, value), p_attn


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding_int"])
def test_tutorial_class_runs_and_agrees_with_attention(mask_kind):
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4) for _ in range(3))
    mask = {"none": None, "causal": attention.causal_mask(5),
            "padding_int": attention.padding_mask([5, 3], 5).long()}[mask_kind]
    out, p = ScaledDotProductAttention()(q, k, v, mask)
    assert out.dtype == torch.float32
    ours, w = attention.scaled_dot_product_attention(q, k, v, mask=mask)
    assert_close(out, ours)
    assert_close(p, w)


def test_tutorial_class_gradients_agree_and_its_dropout_runs():
    torch.manual_seed(1)
    base = [torch.randn(2, 4, 3, dtype=torch.float64) for _ in range(3)]
    mask = attention.causal_mask(4)
    grads = []
    for use_tutorial in (True, False):
        q, k, v = (torch.tensor(b.numpy(force=True), requires_grad=True) for b in base)
        out = ScaledDotProductAttention()(q, k, v, mask)[0] if use_tutorial else \
            attention.scaled_dot_product_attention(q, k, v, mask=mask)[0]
        out.backward(torch.tensor(np.arange(24.0).reshape(2, 4, 3)))
        grads.append([q.grad, k.grad, v.grad])
    for a, b in zip(*grads):
        assert_close(a, b, rtol=1e-10, atol=1e-12)
    layer = ScaledDotProductAttention(dropout=0.1)
    out, p = layer(*base)
    layer.eval()
    assert_close(layer(*base)[1], attention.scaled_dot_product_attention(*base)[1])


def test_fully_masked_row_tutorial_gives_uniform_ours_gives_zero():
    """The documented difference: -1e9 makes an all-masked row uniform; our safe softmax makes it 0."""
    torch.manual_seed(2)
    q, k, v = (torch.randn(3, 2, dtype=torch.float64) for _ in range(3))
    mask = torch.tensor([[1, 1, 0], [0, 0, 0], [1, 0, 1]])
    _, p = ScaledDotProductAttention()(q, k, v, mask)
    _, w = attention.scaled_dot_product_attention(q, k, v, mask=mask)
    assert_close(p[1], [1 / 3] * 3)
    assert_close(w[1], [0.0] * 3)
    assert_close(p[[0, 2]], w[[0, 2]])
