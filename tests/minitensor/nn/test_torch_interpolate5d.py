"""Volumetric (5-d) interpolate: 'nearest', 'nearest-exact' and 'trilinear' against PyTorch (values, the
gradient of a random upstream weight, dtypes), with finite differences in float64; the Upsample layers on
5-d inputs. Also the layers of issue 30's last error rows: a lazy layer that refuses its first input stays
uninitialised, and a bare RNNBase has no forward."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

RNG = np.random.default_rng(30)
X = RNG.uniform(-1, 1, (1, 2, 2, 3, 2))

CASES = [  # (kwargs of interpolate), each on the (1, 2, 2, 3, 2) input X
    dict(mode="nearest", scale_factor=2),
    dict(mode="nearest", size=(3, 2, 5)),
    dict(mode="nearest", scale_factor=(1.5, 0.7, 2.5)),
    dict(mode="nearest-exact", scale_factor=(1.5, 0.7, 2.5)),
    dict(mode="nearest-exact", size=(3, 5, 3)),
    dict(mode="trilinear", scale_factor=2),
    dict(mode="trilinear", scale_factor=(1.5, 0.7, 2.5)),
    dict(mode="trilinear", size=(3, 2, 5)),
    dict(mode="trilinear", size=(3, 2, 5), align_corners=True),
    dict(mode="trilinear", scale_factor=(2, 1, 1.5), align_corners=True),
    dict(mode="trilinear", size=(1, 1, 1), align_corners=True),
]


def _ids(case):
    return ",".join(f"{k}={v}" for k, v in case.items())


@pytest.mark.parametrize("kw", CASES, ids=_ids)
def test_interpolate_5d_matches_pytorch(kw):
    t = torch.tensor(X, dtype=torch.float32, requires_grad=True)
    m = mt.tensor(X.astype(np.float32), requires_grad=True)
    a, b = torch.nn.functional.interpolate(t, **kw), F.interpolate(m, **kw)
    assert tuple(b.shape) == tuple(a.shape) and b.dtype == mt.float32
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6)
    w = RNG.uniform(-1, 1, tuple(a.shape)).astype(np.float32)
    (a * torch.tensor(w)).sum().backward()
    (b * mt.tensor(w)).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [c for c in CASES if c["mode"] == "trilinear"], ids=_ids)
def test_trilinear_finite_differences(kw):
    x = mt.tensor(X, dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda v: F.interpolate(v, **kw), [x], seed=7)


@pytest.mark.parametrize("build", [
    lambda nn: nn.Upsample(scale_factor=2, mode="trilinear"),
    lambda nn: nn.Upsample(size=(3, 2, 5), mode="trilinear", align_corners=True),
    lambda nn: nn.Upsample(scale_factor=1.5, mode="nearest-exact"),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=2),
])
def test_upsample_layers_on_5d(build):
    a = build(torch.nn)(torch.tensor(X, dtype=torch.float32))
    b = build(mt.nn)(mt.tensor(X.astype(np.float32)))
    np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape, kw", [
    ((1, 2, 3, 4), dict(mode="trilinear", scale_factor=2)),       # trilinear wants 5-d
    ((1, 2, 2, 2, 2), dict(mode="bilinear", scale_factor=2)),     # bilinear wants 4-d
    ((1, 1, 1, 1, 1, 2), dict(mode="nearest", scale_factor=2)),   # 6-d: no mode takes it
    ((1, 2, 2, 2, 2), dict(mode="nearest-exact", scale_factor=2, align_corners=True)),
    ((1, 2, 2, 2, 2), dict(mode="trilinear", size=(2, 3))),       # two sizes for three spatial dims
])
def test_interpolate_refusals_match_pytorch(shape, kw):
    with pytest.raises(Exception) as te:
        torch.nn.functional.interpolate(torch.zeros(shape), **kw)
    with pytest.raises(type(te.value)) as me:
        F.interpolate(mt.zeros(shape), **kw)
    assert "interpolate" in str(me.value)


@pytest.mark.parametrize("name, x", [
    ("LazyBatchNorm1d", np.zeros((1, 2, 1, 2, 1), np.float32)),
    ("LazyBatchNorm2d", np.zeros((2, 3), np.int64)),
    ("LazyBatchNorm1d", np.zeros((2, 3), np.int64)),
    ("LazyInstanceNorm2d", np.zeros((1, 2, 1, 2, 1), np.float32)),
    ("LazyInstanceNorm3d", np.zeros((2, 3), np.int64)),
    ("LazyBatchNorm1d", np.zeros((), np.float32)),
    ("LazyLinear", np.zeros((2, 3), np.int64)),
    ("LazyLinear", np.zeros((), np.float32)),
])
def test_a_refused_first_input_leaves_a_lazy_layer_uninitialised(name, x):
    with pytest.raises(Exception) as te:
        getattr(torch.nn, name)(4)(torch.tensor(x))
    layer = getattr(mt.nn, name)(4)
    with pytest.raises(type(te.value), match=name):
        layer(mt.tensor(x))
    assert type(layer).__name__ == name and layer.has_uninitialized_params()
    assert all(int(b.item()) == 0 for k, b in layer.named_buffers() if k == "num_batches_tracked")
    good = {"LazyLinear": (2, 3), "LazyBatchNorm1d": (2, 3), "LazyBatchNorm2d": (2, 3, 2, 2),
            "LazyInstanceNorm2d": (2, 3, 2, 2), "LazyInstanceNorm3d": (2, 3, 2, 2, 2)}[name]
    layer(mt.ones(good))  # a good input afterwards sizes it as usual
    assert not type(layer).__name__.startswith("Lazy")


def test_a_bare_rnnbase_has_no_forward():
    for lib in (torch, mt):
        with pytest.raises(NotImplementedError, match="RNNBase"):
            lib.nn.RNNBase("LSTM", 3, 4)(lib.zeros(2, 3))
    out, (h, c) = mt.nn.LSTM(3, 4)(mt.zeros(2, 3))  # its subclasses keep theirs
    assert tuple(out.shape) == (2, 4) and tuple(c.shape) == (1, 4)
