"""The arguments scripts/api_signatures_nn.py found missing, now taken as PyTorch takes them, against
PyTorch: the deprecated size_average / reduce of the losses, mse_loss and l1_loss's weight, relu and
silu's inplace, normalize's out, the lazy norms' defaults and placeholders, and the layers' repr and state
dict. Values, dtypes and input gradients under a random upstream weight; tiny shapes. Skipped without PyTorch.
"""
import warnings

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
X, T, W = RNG.uniform(-2, 2, (3, 4)), RNG.uniform(-2, 2, (3, 4)), RNG.uniform(0.5, 2, (3, 4))
CLASSES, CW = np.array([1, 0, 3]), np.array([0.5, 1.0, 2.0, 1.5])


def _lib(L):
    return mt if L == "mt" else torch


def _t(L, a):
    return _lib(L).tensor(np.asarray(a).copy())


def _regression(name, **flags):
    """F.mse_loss / F.l1_loss with `flags`; weight=True stands for the weight W."""
    def fn(L, x):
        kw = dict(flags, weight=_t(L, W)) if flags.get("weight") else flags
        return getattr(_lib(L).nn.functional, name)(x, _t(L, T), **kw)
    return (f"{name} {flags}", fn)


def _classes(name, **flags):
    def fn(L, x):
        inp = x if name == "cross_entropy" else x.log_softmax(1)
        return getattr(_lib(L).nn.functional, name)(inp, _t(L, CLASSES), _t(L, CW), **flags)
    return (f"{name} {flags}", fn)


CASES = [
    *[_regression(name, **flags) for name in ("mse_loss", "l1_loss")
      for flags in ({"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True},
                    {"weight": True}, {"weight": True, "reduction": "sum"}, {"weight": True, "reduction": "none"})],
    *[_classes(name, **flags) for name in ("cross_entropy", "nll_loss")
      for flags in ({"size_average": False}, {"reduce": False}, {"ignore_index": 0})],
    ("CrossEntropyLoss positional", lambda L, x: _lib(L).nn.CrossEntropyLoss(_t(L, CW), None, 3)(x, _t(L, CLASSES))),
    ("NLLLoss reduce", lambda L, x: _lib(L).nn.NLLLoss(reduce=False)(x.log_softmax(1), _t(L, CLASSES))),
    ("MSELoss size_average", lambda L, x: _lib(L).nn.MSELoss(size_average=False)(x, _t(L, T))),
    ("relu inplace", lambda L, x: _lib(L).nn.functional.relu(x * 1, inplace=True)),
    ("silu inplace", lambda L, x: _lib(L).nn.functional.silu(x * 1, inplace=True)),
    ("TripletMarginWithDistanceLoss", lambda L, x: _lib(L).nn.TripletMarginWithDistanceLoss()(x, _t(L, T), _t(L, W))),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_pytorch(case):
    _, fn = case
    outs, grads = {}, {}
    for L in ("mt", "torch"):
        x = _lib(L).tensor(X.copy(), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's deprecation warnings of size_average / reduce
            out = fn(L, x)
        u = np.random.default_rng(7).uniform(-1, 1, tuple(out.shape))
        (out * _t(L, u)).sum().backward()
        outs[L], grads[L] = out.detach().numpy(), x.grad.numpy()
    assert outs["mt"].dtype == outs["torch"].dtype and outs["mt"].shape == outs["torch"].shape
    np.testing.assert_allclose(outs["mt"], outs["torch"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["mt"], grads["torch"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_a_weight_of_another_shape_is_a_value_error(name):
    for L in ("mt", "torch"):
        with pytest.raises(ValueError, match="(?i)weight"):
            getattr(_lib(L).nn.functional, name)(_t(L, X), _t(L, T), weight=_t(L, W[0]))


def test_normalize_writes_into_out_and_refuses_autograd():
    outs = {}
    for L in ("mt", "torch"):
        out = _lib(L).zeros(3, 4, dtype=_lib(L).float64)
        assert _lib(L).nn.functional.normalize(_t(L, X), 1.5, 0, 1e-12, out) is out
        outs[L] = out.numpy()
        with pytest.raises(RuntimeError, match="out="):
            _lib(L).nn.functional.normalize(_lib(L).tensor(X, requires_grad=True), out=out)
    np.testing.assert_allclose(outs["mt"], outs["torch"], rtol=1e-12)


@pytest.mark.parametrize("build", [
    lambda nn: nn.LazyInstanceNorm1d(), lambda nn: nn.LazyInstanceNorm2d(affine=False),
    lambda nn: nn.LazyBatchNorm1d(bias=False), lambda nn: nn.LazyBatchNorm2d(affine=False, bias=False),
    lambda nn: nn.CrossEntropyLoss(weight=None), lambda nn: nn.TripletMarginWithDistanceLoss(margin=2.0),
])
def test_layers_have_pytorchs_state_dict_and_repr_before_and_after_their_first_call(build):
    mods = {L: build(_lib(L).nn) for L in ("mt", "torch")}
    assert list(mods["mt"].state_dict()) == list(mods["torch"].state_dict())
    assert repr(mods["mt"]) == repr(mods["torch"])
    if "Lazy" in repr(mods["mt"]):
        assert type(mods["mt"].state_dict()["running_mean"]).__name__ == "UninitializedBuffer"  # as PyTorch's
        x = RNG.uniform(-1, 1, (2, 3, 4) if "1d" in repr(mods["mt"]) else (2, 3, 4, 2)).astype(np.float32)
        outs = {L: mods[L](_t(L, x)).detach().numpy() for L in mods}
        np.testing.assert_allclose(outs["mt"], outs["torch"], rtol=1e-5, atol=1e-6)
        assert repr(mods["mt"]) == repr(mods["torch"])
        assert {k: tuple(v.shape) for k, v in mods["mt"].state_dict().items()} == \
            {k: tuple(v.shape) for k, v in mods["torch"].state_dict().items()}


def test_the_loss_weight_is_a_buffer_in_the_state_dict():
    for cls in ("CrossEntropyLoss", "NLLLoss"):
        keys = {L: list(getattr(_lib(L).nn, cls)(weight=_t(L, CW)).state_dict()) for L in ("mt", "torch")}
        assert keys["mt"] == keys["torch"] == ["weight"]


def test_layers_without_arguments_refuse_them_and_buffers_keep_their_flag():
    for L in ("mt", "torch"):
        for cls in ("LogSigmoid", "Softsign", "Tanhshrink"):
            with pytest.raises(TypeError):
                getattr(_lib(L).nn, cls)(3)
        assert _lib(L).nn.UninitializedBuffer(persistent=False).persistent is False
        assert _lib(L).nn.UninitializedBuffer().persistent is True


def test_random_split_draws_from_the_global_generator_by_default():
    mt.manual_seed(5)
    a = [list(s.indices) for s in mt.utils.data.random_split(range(6), [3, 3])]
    mt.manual_seed(5)
    b = [list(s.indices) for s in mt.utils.data.random_split(range(6), [3, 3], generator=None)]
    assert a == b
