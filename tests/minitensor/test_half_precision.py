"""float16 as PyTorch computes it: reductions and the composites built on them in float32, rounded once.

The expected values are PyTorch 2.13's (tests/minitensor/test_torch_dtype_edges.py compares with torch itself)."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

H = mt.float16


def half(values):
    return mt.tensor(np.asarray(values, dtype=np.float16))


# (name, function, inputs, PyTorch's float16 result): each overflowed or stalled when computed in float16
CASES = [
    ("softplus", lambda x: F.softplus(x), [half([12.0, -12.0, 30.0])], [12.0, 6.139e-06, 30.0]),
    ("bce_logits", lambda x, t: F.binary_cross_entropy_with_logits(x, t), [half([-12.0, -20.0]), half([1.0, 1.0])],
     16.0),
    ("norm", lambda x: x.norm(), [half([300.0] * 4)], 600.0),
    ("vector_norm", lambda x: mt.linalg.vector_norm(x), [half([300.0] * 4)], 600.0),
    ("normalize", lambda x: F.normalize(x, dim=0), [half([300.0] * 4)], [0.5] * 4),
    ("cosine_similarity", lambda x, y: F.cosine_similarity(x, y, dim=0), [half([300.0] * 4), half([300.0] * 4)], 1.0),
    ("layer_norm", lambda x: F.layer_norm(x, (4,)), [half([[300.0, 200.0, 100.0, 400.0]])],
     [[0.4473, -0.4473, -1.3418, 1.3418]]),
    ("cumsum", lambda x: x.cumsum(0)[-1], [half([0.1] * 5000)], 500.0),
    ("sum", lambda x: x.sum(), [half([0.1] * 5000)], 500.0),
    ("mean", lambda x: x.mean(), [half([300.0] * 400)], 300.0),
    ("logsumexp", lambda x: x.logsumexp(0), [half([11.0, 11.0, 11.0])], 12.1016),
    ("softmax", lambda x: x.softmax(0), [half([11.0, 11.0, 11.0])], [1 / 3] * 3),
]


@pytest.mark.parametrize("name, fn, inputs, expected", CASES, ids=[c[0] for c in CASES])
def test_float16_matches_pytorch(name, fn, inputs, expected):
    out = fn(*inputs)
    assert out.dtype == H
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=2e-3)


# the float16 computation is the float32 one rounded: forward and gradient
CONSISTENT = [
    ("softplus", lambda x: F.softplus(x)),
    ("norm", lambda x: x.norm(dim=-1)),
    ("normalize", lambda x: F.normalize(x, dim=-1)),
    ("layer_norm", lambda x: F.layer_norm(x, (4,))),
    ("cumsum", lambda x: x.cumsum(-1)),
    ("sum", lambda x: x.sum(-1)),
    ("mean", lambda x: x.mean(-1)),
    ("var", lambda x: x.var(-1)),
    ("std", lambda x: x.std(-1)),
    ("logsumexp", lambda x: x.logsumexp(-1)),
    ("cosine", lambda x: F.cosine_similarity(x, x.flip(-1), dim=-1)),
]


@pytest.mark.parametrize("name, fn", CONSISTENT, ids=[c[0] for c in CONSISTENT])
def test_float16_is_float32_rounded(name, fn):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) * 30).astype(np.float16)
    x16 = mt.tensor(a, requires_grad=True)
    x32 = mt.tensor(a.astype(np.float32), requires_grad=True)
    out16, out32 = fn(x16), fn(x32)
    assert out16.dtype == H
    np.testing.assert_array_equal(out16.detach().numpy(), out32.detach().numpy().astype(np.float16))
    w = rng.standard_normal(out32.shape).astype(np.float32)
    (out16 * mt.tensor(w.astype(np.float16))).sum().backward()
    (out32 * mt.tensor(w)).sum().backward()
    assert x16.grad.dtype == H
    np.testing.assert_allclose(x16.grad.numpy().astype(np.float32), x32.grad.numpy(), rtol=2e-2, atol=2e-3)


def test_float16_dtype_argument_and_other_dtypes_unchanged():
    x = half([0.1] * 10)
    assert x.sum(dtype=mt.float64).dtype == mt.float64
    assert mt.tensor([1.0, 2.0]).sum().dtype == mt.float32
    assert mt.tensor([1, 2]).cumsum(0).dtype == mt.int64
    v = mt.var_mean(x)
    assert v[0].dtype == H and v[1].dtype == H
