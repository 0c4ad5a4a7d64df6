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
