"""Dtype edges compared with PyTorch itself: float16 computed in float32, integer einsum and prod dtypes,
empty batches through attention and transformer layers, and the dtype promotions and refusals of nn."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.slow


def both(arrays):
    return [mt.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]


def same(ours, theirs, rtol=1e-3):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy().astype(np.float64), theirs.detach().numpy().astype(np.float64),
                               rtol=rtol, atol=1e-6)


h = np.float16
HALF = [
    ("softplus", lambda m, x: m.softplus(x), [np.array([12.0, -12.0, 30.0, -3.0], h)]),
    ("bce_logits", lambda m, x, t: m.binary_cross_entropy_with_logits(x, t),
     [np.array([-12.0, -20.0, 3.0], h), np.array([1.0, 1.0, 0.0], h)]),
    ("norm", lambda m, x: x.norm(dim=-1), [np.full((2, 4), 300.0, h)]),
    ("normalize", lambda m, x: m.normalize(x, dim=0), [np.full(4, 300.0, h)]),
    ("cosine_similarity", lambda m, x, y: m.cosine_similarity(x, y, dim=0),
     [np.full(4, 300.0, h), np.arange(4, dtype=h) * 100]),
    ("layer_norm", lambda m, x: m.layer_norm(x, (4,)), [np.array([[300.0, 200.0, 100.0, 400.0]], h)]),
    ("cumsum", lambda m, x: x.cumsum(0), [np.full(5000, 0.1, h)]),
    ("sum", lambda m, x: x.sum(), [np.full(5000, 0.1, h)]),
    ("mean", lambda m, x: x.mean(0), [np.full((400, 2), 300.0, h)]),
    ("std", lambda m, x: x.std(), [np.arange(40, dtype=h) * 10]),
    ("logsumexp", lambda m, x: x.logsumexp(0), [np.array([11.0, 11.0, 11.0], h)]),
    ("log_softmax", lambda m, x: x.log_softmax(0), [np.array([11.0, 11.0, 11.0], h)]),
]


@pytest.mark.parametrize("name, fn, arrays", HALF, ids=[c[0] for c in HALF])
def test_float16_as_pytorch(name, fn, arrays):
    ours, theirs = both(arrays)
    same(fn(F, *ours), fn(TF, *theirs), rtol=2e-3)


INT_DTYPES = [np.int8, np.int16, np.int32, np.uint8]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("equation", ["i,i->", "ij,jk->ik", "ij,ij->i", "ij->", "ij->ji"])
def test_einsum_integer_dtype(dtype, equation):
    a = (np.arange(6).reshape(2, 3) * 50).astype(dtype)
    arrays = [a[0], a[1]] if equation == "i,i->" else [a, a.T] if equation == "ij,jk->ik" else \
        [a, a] if equation == "ij,ij->i" else [a]
    ours, theirs = both(arrays)
    same(mt.einsum(equation, *ours), torch.einsum(equation, *theirs))


@pytest.mark.parametrize("dtype", [np.bool_, *INT_DTYPES], ids=lambda d: d.__name__)
@pytest.mark.parametrize("op", ["prod", "sum"])
def test_integer_prod_and_sum_are_int64(dtype, op):
    ours, theirs = both([np.array([[1, 2], [3, 1]], dtype)])
    same(getattr(ours[0], op)(), getattr(theirs[0], op)())
    same(getattr(ours[0], op)(1), getattr(theirs[0], op)(1))


def _layers(nn):
    return [
        ("mha", lambda: nn.MultiheadAttention(8, 2), 3, False),
        ("mha_batch_first_bias_kv", lambda: nn.MultiheadAttention(8, 2, batch_first=True, add_bias_kv=True,
                                                                  add_zero_attn=True), 3, True),
        ("encoder_layer", lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 1, False),
        ("encoder_layer_norm_first", lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                                                        norm_first=True), 1, True),
        ("decoder_layer", lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2, False),
        ("encoder", lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                                  enable_nested_tensor=False), 1, False),
        ("decoder", lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2), 2, False),
        ("transformer", lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0), 2, False),
    ]


@pytest.mark.parametrize("i", range(8), ids=[c[0] for c in _layers(mt.nn)])
def test_attention_and_transformer_layers_on_an_empty_batch(i):
    _, make, n_inputs, batch_first = _layers(mt.nn)[i]
    _, make_t, _, _ = _layers(torch.nn)[i]
    shapes = [(0, 3, 8), (0, 4, 8), (0, 4, 8)] if batch_first else [(3, 0, 8), (4, 0, 8), (4, 0, 8)]
    if n_inputs == 3:  # attention: query, then key and value of one length
        shapes = [shapes[0], shapes[1], shapes[1]]
    ours = make()(*[mt.zeros(*s, requires_grad=True) for s in shapes[:n_inputs]])
    theirs = make_t()(*[torch.zeros(*s) for s in shapes[:n_inputs]])
    ours, theirs = (ours, theirs) if isinstance(ours, tuple) else ((ours,), (theirs,))
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
    ours[0].sum().backward()  # and backward runs through the empty graph


def test_load_state_dict_casts_integer_and_bool_values_as_pytorch():
    ours, theirs = mt.nn.Linear(2, 1), torch.nn.Linear(2, 1)
    for m, t in ((ours, mt), (theirs, torch)):
        m.load_state_dict({"weight": t.tensor([[1, 2]]), "bias": t.tensor([True])})
    same(ours.weight, theirs.weight)
    same(ours.bias, theirs.bias)


PROMOTED = [
    ("bool_max_dim", lambda t, f: t.tensor([[True, False], [False, False]]).max(1)),
    ("bool_min_dim", lambda t, f: t.tensor([[True, False], [False, False]]).min(0)),
    ("mse_float_bool", lambda t, f: f.mse_loss(t.tensor([1.0, 2.0]), t.tensor([True, False]))),
    ("mse_bool_float", lambda t, f: f.mse_loss(t.tensor([True, False]), t.tensor([1.0, 2.0]))),
    ("mse_float_int", lambda t, f: f.mse_loss(t.tensor([1.0, 2.0]), t.tensor([1, 3]))),
    ("cosine_float_int", lambda t, f: f.cosine_similarity(t.tensor([1.0, 2.0]), t.tensor([1, 3]), dim=0)),
    ("cosine_bool_float", lambda t, f: f.cosine_similarity(t.tensor([True, True]), t.tensor([1.0, 3.0]), dim=0)),
]


@pytest.mark.parametrize("name, fn", PROMOTED, ids=[c[0] for c in PROMOTED])
def test_promotions_as_pytorch(name, fn):
    ours, theirs = fn(mt, F), fn(torch, TF)
    if isinstance(ours, tuple):
        for o, t in zip(ours, theirs):
            same(o, t)
    else:
        same(ours, theirs)


REFUSED = [
    ("cosine_int_int", lambda t, f: f.cosine_similarity(t.tensor([1, 2]), t.tensor([1, 3]), dim=0)),
    ("layer_norm_bool_weight", lambda t, f: f.layer_norm(t.tensor([1.0, 2.0]), (2,), t.tensor([True, False]))),
    ("layer_norm_int_bias", lambda t, f: f.layer_norm(t.tensor([1.0, 2.0]), (2,), None, t.tensor([1, 2]))),
    ("cross_entropy_bool_weight", lambda t, f: f.cross_entropy(t.tensor([[1.0, 2.0]]), t.tensor([1]),
                                                               t.tensor([True, False]))),
    ("cross_entropy_int_weight", lambda t, f: f.cross_entropy(t.tensor([[1.0, 2.0]]), t.tensor([1]),
                                                              t.tensor([1, 2]))),
]


@pytest.mark.parametrize("name, fn", REFUSED, ids=[c[0] for c in REFUSED])
def test_refusals_as_pytorch(name, fn):
    with pytest.raises(RuntimeError):
        fn(torch, TF)
    with pytest.raises(RuntimeError, match=name.split("_")[0]):
        fn(mt, F)
