"""The rest of torch.nn / F / nn.init / nn.utils / nn.utils.rnn against PyTorch: one table of differentiable
cases (values, dtypes, input gradients under a random upstream weight), finite differences in float64 for the
composed ones, and short tests for what is not a function of tensors (packing, clipping, reparametrisations,
lazy modules, in-place activations, init, Buffer). Tiny shapes. Skipped where PyTorch is not installed.
"""
import math
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.nn.utils import rnn as mrnn

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn

RNG = np.random.default_rng(0)


def _r(*shape):
    return RNG.uniform(-2.0, 2.0, shape)


def _lib(lib):
    return (mt if lib == "mt" else torch)


def _F(lib):
    return _lib(lib).nn.functional


def _t(lib, a, grad=False):
    a = np.asarray(a)
    return (mt.tensor(a.copy(), requires_grad=grad) if lib == "mt"
            else torch.tensor(a.copy(), requires_grad=grad))


_CTC_T = np.array([[1, 2, 2], [3, 1, 0]])
_LAB = np.array([[3, 0, -1, 1], [1, 2, 3, -1]])

# name, fn(lib, *float inputs), float input arrays (every one differentiated)
def _ce_module(L):
    m = _lib(L).nn.LinearCrossEntropyLoss(4, 3, bias=True).double()  # (PyTorch's chunked path imports its compiler)
    for p, a in zip(m.parameters(), (np.linspace(-1, 1, 12).reshape(3, 4), np.array([0.1, -0.2, 0.3]))):
        p.data = _t(L, a) if L == "torch" else mt.tensor(a)
    return m


CASES = [
    ("ctc_loss mean", lambda L, x: _F(L).ctc_loss(x.log_softmax(2), _t(L, _CTC_T), _t(L, [5, 4]), _t(L, [3, 2])),
     [_r(5, 2, 4)]),
    ("ctc_loss none concat", lambda L, x: _F(L).ctc_loss(x.log_softmax(2), _t(L, [1, 2, 2, 3, 1]), _t(L, [5, 4]),
                                                         _t(L, [3, 2]), blank=0, reduction="none"), [_r(5, 2, 4)]),
    ("CTCLoss sum blank", lambda L, x: _lib(L).nn.CTCLoss(blank=3, reduction="sum")(
        x.log_softmax(1), _t(L, [0, 1, 1]), _t(L, [5]), _t(L, [3])), [_r(5, 4)]),
    ("ctc_loss small", lambda L, x: _F(L).ctc_loss(x.log_softmax(2), _t(L, [[1, 1]]), _t(L, [4]), _t(L, [2])),
     [_r(4, 1, 3)]),
    ("multilabel_margin_loss", lambda L, x: _F(L).multilabel_margin_loss(x, _t(L, _LAB)), [_r(2, 4)]),
    ("MultiLabelMarginLoss none", lambda L, x: _lib(L).nn.MultiLabelMarginLoss(reduction="none")(x, _t(L, _LAB)),
     [_r(2, 4)]),
    ("triplet_margin_with_distance_loss", lambda L, a, p, n: _F(L).triplet_margin_with_distance_loss(
        a, p, n, margin=0.5, swap=True), [_r(3, 2), _r(3, 2), _r(3, 2)]),
    ("TripletMarginWithDistanceLoss cos", lambda L, a, p, n: _lib(L).nn.TripletMarginWithDistanceLoss(
        distance_function=lambda u, v: 1 - _F(L).cosine_similarity(u, v), reduction="none")(a, p, n),
     [_r(3, 2), _r(3, 2), _r(3, 2)]),
    ("embedding_bag mean offsets pad", lambda L, w: _F(L).embedding_bag(
        _t(L, [1, 2, 4, 4, 3, 0]), w, _t(L, [0, 2, 2]), mode="mean", padding_idx=4), [_r(5, 3)]),
    ("embedding_bag sum weights", lambda L, w, psw: _F(L).embedding_bag(
        _t(L, [[1, 2], [3, 1]]), w, mode="sum", per_sample_weights=psw), [_r(5, 3), _r(2, 2)]),
    ("embedding_bag max last offset", lambda L, w: _F(L).embedding_bag(
        _t(L, [1, 2, 4, 3]), w, _t(L, [0, 1, 4]), mode="max", include_last_offset=True), [_r(5, 3)]),
    ("multi_head_attention_forward", lambda L, q, k, v, ipw, ipb, opw, opb: _F(L).multi_head_attention_forward(
        q, k, v, 4, 2, ipw, ipb, None, None, True, 0.0, opw, opb, key_padding_mask=_t(L, [[False, True]]))[0],
     [_r(3, 1, 4), _r(2, 1, 4), _r(2, 1, 4), _r(12, 4), _r(12), _r(4, 4), _r(4)]),
    ("linear_cross_entropy", lambda L, x, w, b: _F(L).linear_cross_entropy(
        x, w, _t(L, [[0, 2], [1, 1], [2, 0]]), linear_bias=b, label_smoothing=0.1), [_r(3, 4), _r(3, 2, 4), _r(3, 2)]),
    ("LinearCrossEntropyLoss", lambda L, x: _ce_module(L)(x, _t(L, [0, 2])), [_r(2, 4)]),
    ("pdist p2", lambda L, x: _F(L).pdist(x), [_r(4, 3)]),
    ("pdist p1", lambda L, x: _F(L).pdist(x, 1.5), [_r(3, 2)]),
    ("Softmax2d", lambda L, x: _lib(L).nn.Softmax2d()(x), [_r(2, 3, 2, 2)]),
    ("CrossMapLRN2d", lambda L, x: _lib(L).nn.CrossMapLRN2d(3, alpha=0.5, beta=0.7, k=1.5)(x), [_r(1, 4, 2, 2)]),
    ("NLLLoss2d", lambda L, x: _lib(L).nn.NLLLoss2d()(x.log_softmax(1), _t(L, [[[0, 2], [1, 1]]])),
     [_r(1, 3, 2, 2)]),
    ("BatchNorm3d", lambda L, x: _lib(L).nn.BatchNorm3d(2).double()(x), [_r(2, 2, 2, 1, 2)]),
    ("InstanceNorm3d", lambda L, x: _lib(L).nn.InstanceNorm3d(2)(x), [_r(2, 2, 2, 1, 2)]),
    ("elu_ on a non-leaf", lambda L, x: _F(L).elu_(x * 1, 0.5), [_r(2, 3)]),
    ("leaky_relu_", lambda L, x: _F(L).leaky_relu_(x * 1, 0.2), [_r(2, 3)]),
    ("celu_ selu_", lambda L, x: _F(L).selu_(x * 1) + _F(L).celu_(x * 2, 0.7), [_r(2, 3)]),
    ("hardtanh_ threshold_", lambda L, x: _F(L).threshold_(_F(L).hardtanh_(x * 1, -1.0, 1.5), 0.3, -2.0),
     [_r(2, 3)]),
    ("relu_ rrelu_ eval", lambda L, x: _F(L).rrelu_(x * 1) + _F(L).relu_(x * 2), [_r(2, 3)]),
    ("ReLU(inplace) ELU(inplace)", lambda L, x: _lib(L).nn.ELU(inplace=True)(_lib(L).nn.ReLU(inplace=True)(x - 0.5)
                                                                            - 1), [_r(2, 3)]),
    ("Hardtanh Threshold inplace", lambda L, x: _lib(L).nn.Threshold(0.1, 7.0, inplace=True)(
        _lib(L).nn.Hardtanh(inplace=True)(x * 1)), [_r(2, 3)]),
]


# PyTorch's hand-written CrossMapLRN2d backward is not the derivative of its forward (it fails
# torch.autograd.gradcheck); minitensor's gradient is autograd's, checked by finite differences below
VALUES_ONLY = {"CrossMapLRN2d"}


@pytest.mark.parametrize("name, fn, arrays", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(name, fn, arrays):
    outs, grads = {}, {}
    upstream = None
    for L in ("mt", "torch"):
        xs = [_t(L, a, grad=True) for a in arrays]
        out = fn(L, *xs)
        if upstream is None:
            upstream = RNG.standard_normal(tuple(out.shape))
        (out * _t(L, upstream)).sum().backward()
        outs[L] = out.detach().numpy()
        grads[L] = [x.grad.numpy() for x in xs]
    assert outs["mt"].dtype == outs["torch"].dtype and outs["mt"].shape == outs["torch"].shape
    np.testing.assert_allclose(outs["mt"], outs["torch"], rtol=1e-7, atol=1e-9)
    if name in VALUES_ONLY:
        return
    for a, b in zip(grads["mt"], grads["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


GRADCHECK = ["ctc_loss small", "multilabel_margin_loss", "triplet_margin_with_distance_loss",
             "embedding_bag mean offsets pad", "embedding_bag sum weights", "pdist p1", "CrossMapLRN2d"]


@pytest.mark.parametrize("name", GRADCHECK)
def test_finite_differences(name):
    _, fn, arrays = next(c for c in CASES if c[0] == name)
    xs = [mt.tensor(a, requires_grad=True) for a in arrays]
    assert mt.autograd.gradcheck(lambda *ts: fn("mt", *ts), xs)


def test_ctc_impossible_target_is_inf_or_zero():
    x = _r(2, 1, 3)
    for L in ("mt", "torch"):
        lp = _t(L, x).log_softmax(2)
        args = (_t(L, [[1, 1]]), _t(L, [2]), _t(L, [2]))
        assert math.isinf(float(_F(L).ctc_loss(lp, *args, reduction="sum")))
        assert float(_F(L).ctc_loss(lp, *args, reduction="sum", zero_infinity=True)) == 0


# ---- nn.utils.rnn and the recurrent layers on packed input -----------------------------------------------------
def test_packing_round_trips_like_pytorch():
    seqs = [_r(2, 3), _r(4, 3), _r(1, 3)]
    out = {}
    for L, R in (("mt", mrnn), ("torch", trnn)):
        ts = [_t(L, s) for s in seqs]
        padded = R.pad_sequence(ts, batch_first=True, padding_value=-1.0, padding_side="left")
        packed = R.pack_sequence(ts, enforce_sorted=False)
        back, lengths = R.pad_packed_sequence(packed, total_length=6, padding_value=9.0)
        p2 = R.pack_padded_sequence(R.pad_sequence(ts), _t(L, [2, 4, 1]), enforce_sorted=False)
        out[L] = [padded.numpy(), packed.data.numpy(), packed.batch_sizes.numpy(), packed.sorted_indices.numpy(),
                  packed.unsorted_indices.numpy(), back.numpy(), lengths.numpy(), p2.data.numpy(),
                  R.invert_permutation(_t(L, [2, 0, 1])).numpy(),
                  *[s.numpy() for s in R.unpack_sequence(packed)],
                  *[s.numpy() for s in R.unpad_sequence(R.pad_sequence(ts), _t(L, [2, 4, 1]))]]
    for a, b in zip(out["mt"], out["torch"]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        mrnn.pack_padded_sequence(mt.zeros(3, 2), [1, 2])
    with pytest.raises(ValueError, match="total_length"):
        mrnn.pad_packed_sequence(mrnn.pack_sequence([mt.ones(3)]), total_length=2)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
def test_recurrent_layers_take_packed_sequences(cls):
    tm = getattr(torch.nn, cls)(3, 2, num_layers=2, bidirectional=True).double()
    mm = getattr(mt.nn, cls)(3, 2, num_layers=2, bidirectional=True).double()
    mm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    seqs = [_r(2, 3), _r(3, 3), _r(1, 3)]
    h0 = _r(4, 3, 2)
    res = {}
    for L, R, m in (("mt", mrnn, mm), ("torch", trnn, tm)):
        xs = [_t(L, s, grad=True) for s in seqs]
        h = _t(L, h0, grad=True)
        out, hn = m(R.pack_sequence(xs, enforce_sorted=False), (h, h * 0.5) if cls == "LSTM" else h)
        assert isinstance(out, R.PackedSequence)
        hn = hn[1] if cls == "LSTM" else hn
        w = np.linspace(-1, 1, out.data.numel()).reshape(tuple(out.data.shape))
        ((out.data * _t(L, w)).sum() + (hn * _t(L, h0)).sum()).backward()
        res[L] = [out.data.detach().numpy(), hn.detach().numpy(), h.grad.numpy(), *[x.grad.numpy() for x in xs]]
    for a, b in zip(res["mt"], res["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)


# ---- gradient clipping (issue 31) ---------------------------------------------------------------------------
GRADS = [np.array([0.0, 3.0, -1.0]), np.array([[2.0, 0.0], [0.0, 0.5]])]
NAN_GRADS = [np.array([1.0, 2.0]), np.array([np.nan, 1.0])]


@pytest.mark.parametrize("norm_type", [0, 1, 2, 3.5, math.inf, -math.inf, -1])
@pytest.mark.parametrize("grads", [GRADS, NAN_GRADS], ids=["finite", "nan in the second"])
def test_total_norm_and_clipping_match_pytorch(norm_type, grads):
    res = {}
    for L in ("mt", "torch"):
        lib = _lib(L)
        params = [_t(L, np.zeros_like(g, dtype=np.float32), grad=True) for g in grads]
        for p, g in zip(params, grads):
            p.grad = _t(L, g.astype(np.float32))
        total = lib.nn.utils.get_total_norm([p.grad for p in params], norm_type)
        returned = lib.nn.utils.clip_grad_norm_(params, 1.0, norm_type)
        res[L] = [total.numpy(), returned.numpy(), *[p.grad.numpy() for p in params]]
        with pytest.raises(RuntimeError, match="non-finite") if not np.isfinite(float(total)) else _no_error():
            lib.nn.utils.clip_grad_norm_(params, 1.0, norm_type, error_if_nonfinite=True)
    for a, b in zip(res["mt"], res["torch"]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)


class _no_error:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_clip_grads_with_norm_and_deprecated_alias():
    for L in ("mt", "torch"):
        p = _t(L, np.zeros(2), grad=True)
        p.grad = _t(L, [3.0, 4.0])
        _lib(L).nn.utils.clip_grads_with_norm_([p], 1.0, _t(L, 5.0))
        np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-6)
        with pytest.warns(FutureWarning):
            _lib(L).nn.utils.clip_grad_norm([p], 0.1)


# ---- reparametrisations and fusion ---------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["weight_norm", "weight_norm dim None", "spectral_norm"])
def test_reparametrisations_match_pytorch(kind):
    tl = torch.nn.Linear(3, 4).double()
    ml = mt.nn.Linear(3, 4).double()
    ml.load_state_dict({k: v.detach().numpy() for k, v in tl.state_dict().items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        if kind == "spectral_norm":
            torch.nn.utils.spectral_norm(tl, n_power_iterations=2)
            mt.nn.utils.spectral_norm(ml, n_power_iterations=2)
            for b in ("weight_u", "weight_v"):  # the same random start
                getattr(ml, b)._array[...] = getattr(tl, b).numpy()
        else:
            dim = None if "None" in kind else 0
            torch.nn.utils.weight_norm(tl, dim=dim)
            mt.nn.utils.weight_norm(ml, dim=dim)
    assert list(ml.state_dict()) == list(tl.state_dict())
    x = _r(2, 3)
    outs = [m(_t(L, x)) for L, m in (("mt", ml), ("torch", tl))]
    for o in outs:
        o.sum().backward()
    np.testing.assert_allclose(outs[0].detach().numpy(), outs[1].detach().numpy(), rtol=1e-7)
    for (k, p), q in zip(ml.named_parameters(), tl.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, err_msg=k)
    remove = "remove_spectral_norm" if kind == "spectral_norm" else "remove_weight_norm"
    getattr(mt.nn.utils, remove)(ml), getattr(torch.nn.utils, remove)(tl)
    assert list(ml.state_dict()) == list(tl.state_dict())
    np.testing.assert_allclose(ml.weight.detach().numpy(), tl.weight.detach().numpy(), rtol=1e-7)


def test_fusion_matches_pytorch():
    res = {}
    for L in ("mt", "torch"):
        nn = _lib(L).nn
        conv, lin, bn = nn.Conv2d(2, 3, 1).double().eval(), nn.Linear(2, 3).double().eval(), \
            nn.BatchNorm2d(3).double().eval()
        bn1 = nn.BatchNorm1d(3).double().eval()
        _copy_shared(L, conv, lin, bn, bn1)
        fc = _lib(L).nn.utils.fuse_conv_bn_eval(conv, bn)
        fl = _lib(L).nn.utils.fuse_linear_bn_eval(lin, bn1)
        res[L] = [fc.weight.detach().numpy(), fc.bias.detach().numpy(), fl.weight.detach().numpy(),
                  fl.bias.detach().numpy(), list(fc.state_dict())]
    for a, b in zip(res["mt"], res["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-7) if not isinstance(a, list) else None
        assert not isinstance(a, list) or a == b


_SHARED = {}


def _copy_shared(L, *mods):
    for i, m in enumerate(mods):
        for k, v in m.state_dict().items():
            key = (i, k)
            if key not in _SHARED:
                _SHARED[key] = RNG.uniform(0.5, 1.5, tuple(v.shape)) if v.dtype != torch.int64 and \
                    str(v.dtype) != "int64" else None
            if _SHARED[key] is not None:
                v.copy_(_t(L, _SHARED[key])) if L == "torch" else v._array.__setitem__(..., _SHARED[key])


def test_small_utils():
    conv = mt.nn.Conv2d(1, 1, 1)
    assert mt.nn.utils.convert_conv2d_weight_memory_format(conv, None) is conv
    assert mt.nn.utils.convert_conv3d_weight_memory_format(conv, None) is conv
    assert mt.nn.utils.skip_init(mt.nn.Linear, 2, 3).weight.shape == (3, 2)


# ---- lazy modules, Buffer, Container, init ---------------------------------------------------------------------
@pytest.mark.parametrize("name, shape", [("LazyLinear", (2, 5)), ("LazyBatchNorm1d", (2, 3)),
                                         ("LazyBatchNorm2d", (2, 3, 2, 2)), ("LazyBatchNorm3d", (2, 3, 1, 2, 2)),
                                         ("LazyInstanceNorm2d", (2, 3, 2, 2)),
                                         ("LazyInstanceNorm3d", (2, 3, 1, 2, 2))])
def test_lazy_modules_become_their_layer(name, shape):
    args = (4,) if name == "LazyLinear" else ()
    kw = {} if "Instance" not in name else {"affine": True, "track_running_stats": True}
    ms, ts = getattr(mt.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert list(ms.state_dict()) == list(ts.state_dict())
    assert isinstance(ms.weight, mt.nn.UninitializedParameter)
    ms(mt.zeros(*shape)), ts(torch.zeros(*shape))
    assert type(ms).__name__ == type(ts).__name__ and repr(ms) == repr(ts)
    assert {k: tuple(v.shape) for k, v in ms.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in ts.state_dict().items()}
    assert type(ms.weight) is mt.nn.Parameter


def test_lazy_linear_loads_a_state_dict():
    m = mt.nn.LazyLinear(3)
    m.load_state_dict(mt.nn.Linear(4, 3).state_dict())
    assert m(mt.ones(1, 4)).shape == (1, 3) and m.in_features == 4


def test_buffer_and_container():
    for L in ("mt", "torch"):
        lib = _lib(L)
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.ones(1), persistent=False)
        assert list(m.state_dict()) == ["a"] and [k for k, _ in m.named_buffers()] == ["a", "b"]
        with pytest.warns(FutureWarning, match="deprecated"):
            c = lib.nn.Container(lin=lib.nn.Linear(1, 1))
        assert list(c.state_dict()) == ["lin.weight", "lin.bias"]


def test_init_functions_like_pytorch():
    for L in ("mt", "torch"):
        init = _lib(L).nn.init
        w = _lib(L).empty(3, 5)
        init.orthogonal_(w, gain=2.0)
        np.testing.assert_allclose((w @ w.T).numpy(), 4 * np.eye(3), atol=1e-5)
        s = init.sparse_(_lib(L).empty(4, 3), sparsity=0.5)
        assert ((s == 0).sum(0) >= 2).all()
        d = init.dirac_(_lib(L).empty(4, 2, 3, 3), groups=2)
        res = d.numpy()
        if L == "mt":
            mine = res
    np.testing.assert_array_equal(mine, res)
    for name in ("uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                 "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"):
        args = {"constant": (0.5,), "sparse": (0.1,)}.get(name, ())
        t = mt.empty(3, 2, 3) if name == "dirac" else mt.empty(3, 4)
        with pytest.warns(FutureWarning, match=f"nn.init.{name}_"):
            getattr(mt.nn.init, name)(t, *args)


def test_in_place_activation_errors_and_versions():
    x = mt.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        mt.nn.functional.relu_(x)
    y = x * 1
    v = y._version
    assert mt.nn.functional.leaky_relu_(y) is y and y._version == v + 1
    z = mt.randn(4)
    assert mt.nn.ReLU(inplace=True)(z) is z and (z >= 0).all()


def test_gumbel_softmax_and_dropouts():
    x = mt.randn(4, 5, requires_grad=True)
    soft = mt.nn.functional.gumbel_softmax(x, tau=0.5)
    np.testing.assert_allclose(soft.detach().numpy().sum(1), 1.0, rtol=1e-6)
    hard = mt.nn.functional.gumbel_softmax(x, hard=True)
    assert set(np.unique(hard.detach().numpy())) <= {0.0, 1.0} and (hard.detach().numpy().sum(1) == 1).all()
    (hard * mt.randn(4, 5)).sum().backward()
    assert x.grad is not None and np.abs(x.grad.numpy()).sum() > 0
    y = mt.ones(2, 3, 1, 2, 2)
    out = mt.nn.Dropout3d(0.5)(y).numpy()
    assert all(np.unique(out[n, c]).size == 1 for n in range(2) for c in range(3))  # whole channels
    out = mt.nn.FeatureAlphaDropout(0.5)(y).numpy()
    assert all(np.unique(out[n, c]).size == 1 for n in range(2) for c in range(3))
    assert mt.nn.FeatureAlphaDropout(0.5).eval()(y) is y


def test_adaptive_log_softmax_matches_pytorch():
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True).double()
    mm = mt.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True).double()
    assert list(mm.state_dict()) == list(tm.state_dict()) and repr(mm) == repr(tm)
    mm.load_state_dict({k: v.numpy() for k, v in tm.state_dict().items()})
    x, t = _r(4, 8), np.array([0, 4, 9, 7])
    a, b = tm(torch.tensor(x), torch.tensor(t)), mm(mt.tensor(x), mt.tensor(t))
    np.testing.assert_allclose(b.output.detach().numpy(), a.output.detach().numpy(), rtol=1e-10)
    a.loss.backward(), b.loss.backward()
    for p, q in zip(mm.parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-7, atol=1e-12)
    np.testing.assert_array_equal(mm.predict(mt.tensor(x)).numpy(), tm.predict(torch.tensor(x)).numpy())
    with pytest.raises(RuntimeError, match="Target values should be in"):
        mm(mt.tensor(x), mt.tensor([0, 1, 2, 10]))


def test_linear_cross_entropy_options_are_accepted():
    opts = mt.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    m = mt.nn.LinearCrossEntropyLoss(4, 3, options=opts)
    assert m.options is opts and m(mt.ones(2, 4), mt.tensor([0, 1])).ndim == 0
