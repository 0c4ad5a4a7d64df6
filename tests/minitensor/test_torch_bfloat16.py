"""bfloat16 (with the optional ml_dtypes) against PyTorch's: values, gradients and dtypes of the ops a
bfloat16 tutorial runs. `exact` rows match PyTorch bit for bit (one float32 computation, rounded once);
the others are computed by ml_dtypes' numpy step by step, each step rounded to bfloat16, and differ by
about one bfloat16 step (2^-8 relative), as docs/pytorch_compatibility.md says."""
import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytest.importorskip("ml_dtypes")
pytestmark = pytest.mark.slow

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 6)).astype(np.float32)
M = rng.standard_normal((6, 3)).astype(np.float32)
W = rng.standard_normal((6, 6)).astype(np.float32)  # an upstream weight, wider than any result

CASES = [  # name, f(L, x) with x a 4x6 bfloat16 tensor, exact
    ("add_float", lambda L, x: x + 0.1, True),
    ("sub_float", lambda L, x: x - 0.3, True),
    ("rsub_float", lambda L, x: 1.7 - x, True),
    ("mul_float", lambda L, x: x * 0.1, True),
    ("div_float", lambda L, x: x / 3.3, True),
    ("add_int", lambda L, x: x + 2, True),
    ("mul_self", lambda L, x: x * x + x, True),
    ("pow", lambda L, x: x ** 3, True),
    ("exp", lambda L, x: x.exp(), True),
    ("sqrt", lambda L, x: x.abs().sqrt(), True),
    ("tanh", lambda L, x: x.tanh(), False),
    ("sigmoid", lambda L, x: x.sigmoid(), False),
    ("relu", lambda L, x: L.relu(x), True),
    ("sum", lambda L, x: x.sum(), True),
    ("mean_dim", lambda L, x: x.mean(-1), True),
    ("cumsum", lambda L, x: x.cumsum(1), True),
    ("var", lambda L, x: x.var(0), False),
    ("amax", lambda L, x: x.amax(1), True),
    ("matmul", lambda L, x: x @ L.tensor(M).bfloat16(), True),
    ("mm_t", lambda L, x: x @ x.T, True),
    ("softmax", lambda L, x: x.softmax(-1), False),
    ("layer_norm", lambda L, x: L.nn.functional.layer_norm(x, (6,)), False),
    ("mix_float16", lambda L, x: x + L.ones(6, dtype=L.float16), True),
    ("mix_float32", lambda L, x: x * L.ones(6), True),
    ("mix_int64", lambda L, x: x - L.arange(6), True),
    ("where_float", lambda L, x: L.where(x > 0, x, 0.5), True),
]


@pytest.mark.parametrize("name,f,exact", CASES, ids=[c[0] for c in CASES])
def test_bfloat16_matches_torch(name, f, exact):
    xs = [L.tensor(X).to(L.bfloat16).requires_grad_() for L in (mt, torch)]
    outs = [f(L, x) for L, x in zip((mt, torch), xs)]
    assert str(outs[0].dtype).replace("minitensor.", "") == str(outs[1].dtype).replace("torch.", ""), name
    w = W[tuple(slice(0, n) for n in outs[1].shape) + (0,) * (2 - outs[1].dim())]
    for L, out in zip((mt, torch), outs):
        (out * L.tensor(w).to(out.dtype)).sum().backward()
    assert xs[0].grad.dtype == mt.bfloat16
    (mine, theirs), (gm, gt) = [[np.asarray(t.detach().float().numpy()) for t in pair]
                                for pair in (outs, [x.grad for x in xs])]
    if exact:
        np.testing.assert_array_equal(mine, theirs, err_msg=name)
    else:  # a step or two of bfloat16 apart (its spacing is 2^-7 relative: 0.0078)
        np.testing.assert_allclose(mine, theirs, rtol=2 ** -6, atol=2 ** -7 * np.abs(theirs).max(), err_msg=name)
    np.testing.assert_allclose(gm, gt, rtol=2 ** -6, atol=2 ** -6 * np.abs(gt).max(), err_msg=name)


def test_bfloat16_names_limits_and_printing_match_torch():
    for L in (mt, torch):
        assert L.promote_types(L.bfloat16, L.float16) == L.float32
        assert L.promote_types(L.bfloat16, L.float64) == L.float64
        assert L.promote_types(L.bfloat16, L.int64) == L.bfloat16
    mf, tf = mt.finfo(mt.bfloat16), torch.finfo(torch.bfloat16)
    assert (mf.bits, mf.eps, mf.max, mf.tiny, mf.resolution) == (tf.bits, tf.eps, tf.max, tf.tiny, tf.resolution)
    old, mt.Size.shown_as = mt.Size.shown_as, "torch"
    try:
        for L in (mt, torch):
            L.manual_seed(0)
        values = [1.5, -2.25, 3.0e5, 1e-3]
        for mine, theirs in [(mt.tensor(values, dtype=mt.bfloat16), torch.tensor(values, dtype=torch.bfloat16)),
                             (mt.zeros(2, dtype=mt.bfloat16), torch.zeros(2, dtype=torch.bfloat16)),
                             (mt.ones(2, 2).bfloat16(), torch.ones(2, 2).bfloat16()),
                             (mt.full((2,), 0.1).to(mt.bfloat16), torch.full((2,), 0.1).to(torch.bfloat16))]:
            assert repr(mine) == repr(theirs)
            assert mine.tolist() == theirs.tolist() and mine.element_size() == theirs.element_size() == 2
    finally:
        mt.Size.shown_as = old
