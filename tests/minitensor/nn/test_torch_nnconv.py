"""Issue 30, point 2 against PyTorch: 3-D and transposed convolutions, conv_tbc, 3-D / unpooling /
power-average / fractional pooling and their *_with_indices forms, affine_grid and grid_sample, the
upsampling names, the 3-D and circular padding modules and the lazy convolutions. One table of
function cases (values, input gradients under a random upstream weight, dtypes, indices), one of
modules (PyTorch's weights loaded through the state dict; keys, repr and constructor defaults), and
error types. Tiny shapes; skipped where PyTorch is not installed.
"""
import inspect
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor.nn.lazy import UninitializedParameter

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

RNG = np.random.default_rng(30)


def _r(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape)


def _F(lib):
    return lib.nn.functional


def _lib_tensor(lib, a):
    return mt.tensor(a) if lib is mt else torch.tensor(a)


U2, U3 = RNG.random((2, 2, 2)), RNG.random((2, 2, 3))  # fractional pooling's samples, passed to both

# (id, call(lib, *inputs), inputs, float64 only?)
FUNCTIONS = [
    ("conv3d", lambda lib, x, w, b: _F(lib).conv3d(x, w, b, stride=(1, 2, 1), padding=1, dilation=(1, 1, 2),
                                                   groups=2), [_r(2, 2, 3, 5, 5), _r(2, 1, 2, 3, 2), _r(2)]),
    ("conv3d same", lambda lib, x, w: _F(lib).conv3d(x, w, padding="same"), [_r(2, 3, 3, 3), _r(2, 2, 2, 3, 1)]),
    ("conv_transpose1d", lambda lib, x, w, b: _F(lib).conv_transpose1d(x, w, b, 3, 2, 2, 2, 2),
     [_r(2, 4, 4), _r(4, 3, 3), _r(6)]),
    ("conv_transpose2d", lambda lib, x, w, b: _F(lib).conv_transpose2d(x, w, b, stride=2, padding=1,
                                                                       output_padding=1),
     [_r(2, 2, 5, 5), _r(2, 3, 3, 2), _r(3)]),
    ("conv_transpose2d crop", lambda lib, x, w: _F(lib).conv_transpose2d(x, w, padding=2),
     [_r(2, 4, 4), _r(2, 2, 3, 3)]),
    ("conv_transpose3d", lambda lib, x, w: _F(lib).conv_transpose3d(x, w, stride=(2, 1, 1), dilation=(1, 2, 1),
                                                                    groups=2),
     [_r(2, 2, 2, 3, 3), _r(2, 1, 2, 2, 2)]),
    ("conv_tbc", lambda lib, x, w, b: (torch.conv_tbc if lib is torch else mt.nn.functional.conv_tbc)(x, w, b, 1),
     [_r(5, 2, 3), _r(3, 3, 4), _r(4)]),
    ("max_pool3d", lambda lib, x: _F(lib).max_pool3d(x, 2, 1, 1, return_indices=True), [_r(2, 2, 3, 4, 4)]),
    ("max_pool3d_with_indices", lambda lib, x: _F(lib).max_pool3d_with_indices(x, 2, 2, 0, 2, ceil_mode=True),
     [_r(2, 2, 5, 4, 5)]),
    ("max_pool1d_with_indices", lambda lib, x: _F(lib).max_pool1d_with_indices(x, 2), [_r(2, 2, 5)]),
    ("max_pool2d_with_indices", lambda lib, x: _F(lib).max_pool2d_with_indices(x, 3, 2, 1), [_r(2, 2, 5, 5)]),
    ("avg_pool3d", lambda lib, x: _F(lib).avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
     [_r(2, 2, 4, 5, 5)]),
    ("avg_pool3d divisor", lambda lib, x: _F(lib).avg_pool3d(x, 2, divisor_override=3), [_r(2, 4, 4, 4)]),
    ("adaptive_avg_pool3d", lambda lib, x: _F(lib).adaptive_avg_pool3d(x, (2, 3, None)), [_r(2, 2, 3, 5, 4)]),
    ("adaptive_max_pool3d", lambda lib, x: _F(lib).adaptive_max_pool3d(x, (2, 3, 2), True), [_r(2, 2, 3, 5, 4)]),
    ("adaptive_max_pool1d_with_indices", lambda lib, x: _F(lib).adaptive_max_pool1d_with_indices(x, 3),
     [_r(2, 2, 5)]),
    ("adaptive_max_pool2d_with_indices", lambda lib, x: _F(lib).adaptive_max_pool2d_with_indices(x, 3),
     [_r(2, 5, 4)]),
    ("adaptive_max_pool3d_with_indices", lambda lib, x: _F(lib).adaptive_max_pool3d_with_indices(x, 2),
     [_r(2, 2, 3, 3, 3)]),
    ("max_unpool1d", lambda lib, x: _F(lib).max_unpool1d(*_F(lib).max_pool1d(x, 2, return_indices=True), 2,
                                                         output_size=x.shape), [_r(2, 2, 5)]),
    ("max_unpool2d", lambda lib, x: _F(lib).max_unpool2d(*_F(lib).max_pool2d(x, 2, 1, return_indices=True), 2, 1),
     [_r(2, 2, 4, 5)]),
    ("max_unpool3d", lambda lib, x: _F(lib).max_unpool3d(*_F(lib).max_pool3d(x, 2, return_indices=True), 2),
     [_r(2, 4, 4, 4)]),
    ("lp_pool1d", lambda lib, x: _F(lib).lp_pool1d(x, 3, 2, 1), [_r(2, 2, 5, lo=0.1)]),
    ("lp_pool2d", lambda lib, x: _F(lib).lp_pool2d(x, 2, (2, 3), ceil_mode=True), [_r(2, 2, 5, 5)]),
    ("lp_pool3d", lambda lib, x: _F(lib).lp_pool3d(x, 1.5, 2), [_r(2, 2, 3, 4, 4, lo=0.1)]),
    ("fractional_max_pool2d", lambda lib, x: _F(lib).fractional_max_pool2d(
        x, 2, output_size=3, return_indices=True, _random_samples=_lib_tensor(lib, U2)), [_r(2, 2, 7, 6)]),
    ("fractional_max_pool2d_with_indices", lambda lib, x: _F(lib).fractional_max_pool2d_with_indices(
        x, (2, 3), output_ratio=(0.5, 0.6), _random_samples=_lib_tensor(lib, U2)), [_r(2, 2, 9, 8)]),
    ("fractional_max_pool3d", lambda lib, x: _F(lib).fractional_max_pool3d(
        x, 2, output_size=(3, 2, 4), _random_samples=_lib_tensor(lib, U3)), [_r(2, 2, 7, 6, 8)]),
    ("fractional_max_pool3d_with_indices", lambda lib, x: _F(lib).fractional_max_pool3d_with_indices(
        x, (2, 1, 2), output_ratio=0.5, _random_samples=_lib_tensor(lib, U3)), [_r(2, 2, 6, 4, 6)]),
    ("fractional_max_pool2d float32", lambda lib, x: _F(lib).fractional_max_pool2d(
        x, 2, output_size=4, _random_samples=_lib_tensor(lib, U2[:1].astype(np.float32))),
     [_r(2, 9, 9).astype(np.float32)]),
    ("affine_grid", lambda lib, t: _F(lib).affine_grid(t, [2, 3, 4, 5], False), [_r(2, 2, 3)]),
    ("affine_grid align", lambda lib, t: _F(lib).affine_grid(t, [2, 3, 4, 5, 3], True), [_r(2, 3, 4)]),
    ("grid_sample", lambda lib, x, g: _F(lib).grid_sample(x, g, align_corners=False),
     [_r(2, 2, 4, 5), _r(2, 3, 4, 2, lo=-1.5, hi=1.5)]),
    ("grid_sample border align", lambda lib, x, g: _F(lib).grid_sample(x, g, "bilinear", "border", True),
     [_r(2, 2, 4, 5), _r(2, 3, 4, 2, lo=-1.5, hi=1.5)]),
    ("grid_sample reflection", lambda lib, x, g: _F(lib).grid_sample(x, g, "bilinear", "reflection", False),
     [_r(2, 2, 4, 5), _r(2, 3, 4, 2, lo=-3.5, hi=3.5)]),
    ("grid_sample reflection align", lambda lib, x, g: _F(lib).grid_sample(x, g, "bilinear", "reflection", True),
     [_r(2, 2, 4, 5), _r(2, 3, 4, 2, lo=-3.5, hi=3.5)]),
    ("grid_sample nearest", lambda lib, x, g: _F(lib).grid_sample(x, g, "nearest", "reflection", False),
     [_r(2, 2, 4, 5), _r(2, 3, 4, 2, lo=-1.5, hi=1.5)]),
    ("grid_sample 3d", lambda lib, x, g: _F(lib).grid_sample(x, g, "bilinear", "zeros", True),
     [_r(2, 2, 3, 4, 3), _r(2, 2, 3, 2, 3, lo=-1.2, hi=1.2)]),
    ("grid_sample 3d nearest", lambda lib, x, g: _F(lib).grid_sample(x, g, "nearest", "border", False),
     [_r(2, 2, 3, 4, 3), _r(2, 2, 3, 2, 3, lo=-1.2, hi=1.2)]),
    ("grid_sample float32", lambda lib, x, g: _F(lib).grid_sample(x, g, align_corners=False),
     [_r(1, 2, 4, 5).astype(np.float32), _r(1, 3, 4, 2).astype(np.float32)]),
    ("upsample_nearest", lambda lib, x: _F(lib).upsample_nearest(x, scale_factor=2), [_r(2, 2, 3, 4)]),
    ("upsample_bilinear", lambda lib, x: _F(lib).upsample_bilinear(x, size=(5, 7)), [_r(2, 2, 3, 4)]),
    ("pad reflect 5d", lambda lib, x: _F(lib).pad(x, (1, 2, 0, 1, 2, 1), mode="reflect"), [_r(2, 2, 3, 3, 4)]),
    ("pad circular 5d", lambda lib, x: _F(lib).pad(x, (1, 2, 0, 1, 2, 1), mode="circular"), [_r(2, 2, 3, 3, 4)]),
    ("pad replicate 5d", lambda lib, x: _F(lib).pad(x, (1, 2, 0, 1, 2, 1), mode="replicate"), [_r(2, 2, 3, 3, 4)]),
]


def _outputs(lib, fn, arrays):
    inputs = [_lib_tensor(lib, a.copy()).requires_grad_(True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the deprecated upsample_* names warn in both
        out = fn(lib, *inputs)
    out, idx = out if isinstance(out, tuple) else (out, None)
    g = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(arrays[0].dtype)
    out.backward(_lib_tensor(lib, g))
    # a grid that reaches the output through no weight (nearest) gets zeros in PyTorch and no gradient here
    grads = [np.zeros(a.shape) if t.grad is None else t.grad.numpy() for t, a in zip(inputs, arrays)]
    return out, idx, grads


@pytest.mark.parametrize("case", FUNCTIONS, ids=[c[0] for c in FUNCTIONS])
def test_function_matches_pytorch(case):
    _, fn, arrays = case
    ours, our_idx, our_grads = _outputs(mt, fn, arrays)
    theirs, their_idx, their_grads = _outputs(torch, fn, arrays)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    tol = 1e-5 if arrays[0].dtype == np.float32 else 1e-10
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert (our_idx is None) == (their_idx is None)
    if our_idx is not None:
        assert our_idx.dtype == mt.int64
        np.testing.assert_array_equal(our_idx.numpy(), their_idx.numpy())


# (id, make(nn), inputs)
MODULES = [
    ("Conv3d", lambda nn: nn.Conv3d(2, 4, (2, 3, 2), stride=(1, 2, 1), padding=1, groups=2), [_r(2, 2, 3, 4, 4)]),
    ("Conv3d circular", lambda nn: nn.Conv3d(2, 3, 2, padding=1, bias=False, padding_mode="circular"),
     [_r(2, 3, 3, 3)]),
    ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(2, 4, 3, stride=2, padding=1, output_padding=1, groups=2),
     [_r(2, 2, 4)]),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(2, 3, (2, 3), stride=2, dilation=(2, 1), bias=False),
     [_r(2, 2, 3, 3)]),
    ("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(2, 3, 2, stride=(1, 2, 2), padding=(0, 1, 0)),
     [_r(2, 2, 2, 3, 3)]),
    ("MaxPool3d", lambda nn: nn.MaxPool3d(2, 1, 1, dilation=2), [_r(2, 2, 3, 4, 4)]),
    ("AvgPool3d", lambda nn: nn.AvgPool3d((2, 3, 2), 2, 1), [_r(2, 2, 3, 4, 4)]),
    ("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), [_r(2, 3, 4, 4)]),
    ("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d(2), [_r(2, 2, 3, 4, 4)]),
    ("LPPool1d", lambda nn: nn.LPPool1d(2, 3, 2), [_r(2, 2, 7)]),
    ("LPPool2d", lambda nn: nn.LPPool2d(2, 2), [_r(2, 2, 4, 5)]),
    ("LPPool3d", lambda nn: nn.LPPool3d(3, 2, ceil_mode=True), [_r(2, 2, 3, 3, 3, lo=0.1)]),
    ("FractionalMaxPool2d", lambda nn: nn.FractionalMaxPool2d(2, output_size=(3, 2), _random_samples=(
        mt.tensor(U2) if nn is mt.nn else torch.tensor(U2))), [_r(2, 2, 5, 5)]),
    ("FractionalMaxPool3d", lambda nn: nn.FractionalMaxPool3d(2, output_ratio=0.5, _random_samples=(
        mt.tensor(U3) if nn is mt.nn else torch.tensor(U3))), [_r(2, 2, 5, 5, 4)]),
    ("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(scale_factor=2), [_r(2, 2, 2, 3)]),
    ("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(size=(3, 5)), [_r(2, 2, 2, 3)]),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d((1, 0, 2, 1, 0, 1), 2.5), [_r(2, 2, 3, 3)]),
    ("ZeroPad3d", lambda nn: nn.ZeroPad3d(1), [_r(2, 2, 3, 3)]),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d((1, 2, 0, 1, 2, 1)), [_r(2, 2, 3, 3, 4)]),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d(2), [_r(2, 3, 3, 4)]),
    ("CircularPad1d", lambda nn: nn.CircularPad1d((1, 2)), [_r(2, 2, 4)]),
    ("CircularPad2d", lambda nn: nn.CircularPad2d((1, 2, 0, 1)), [_r(2, 3, 4)]),
    ("CircularPad3d", lambda nn: nn.CircularPad3d(1), [_r(2, 2, 3, 3, 4)]),
]


@pytest.mark.parametrize("case", MODULES, ids=[c[0] for c in MODULES])
def test_module_matches_pytorch(case):
    _, make, arrays = case
    theirs, ours = make(torch.nn).double(), make(mt.nn).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: mt.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    (ot, ti), (om, mi) = [(lib_in := [_lib_tensor(lib, a.copy()).requires_grad_(True) for a in arrays],
                           mod(*lib_in)) for lib, mod in ((torch, theirs), (mt, ours))]
    g = RNG.standard_normal(tuple(ti.shape))
    ti.backward(torch.tensor(g))
    mi.backward(mt.tensor(g))
    np.testing.assert_allclose(mi.detach().numpy(), ti.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(om[0].grad.numpy(), ot[0].grad.numpy(), rtol=1e-10, atol=1e-10)
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-10, err_msg=name)


def _defaults(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()
            if p.name not in ("device", "dtype")]


LAZY = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]
MODULE_NAMES = sorted({c[0].split(" ")[0] for c in MODULES} | {"MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", *LAZY})
F_NAMES = ["affine_grid", "grid_sample", "upsample_nearest", "upsample_bilinear", "max_unpool1d", "max_unpool2d",
           "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "adaptive_avg_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
           "fractional_max_pool3d_with_indices", "fractional_max_pool2d_with_indices"]


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_module_constructor_signature_matches_pytorch(name):
    assert _defaults(getattr(mt.nn, name).__init__) == _defaults(getattr(torch.nn, name).__init__)


@pytest.mark.parametrize("name", F_NAMES)
def test_function_signature_matches_pytorch(name):
    ours = [(p.name, p.default) for p in inspect.signature(getattr(mt.nn.functional, name)).parameters.values()]
    theirs = [(p.name, p.default) for p in inspect.signature(getattr(torch.nn.functional, name)).parameters.values()]
    assert ours == theirs


@pytest.mark.parametrize("name", LAZY)
def test_lazy_conv_infers_in_channels_and_becomes_the_plain_module(name):
    nd = int(name[-2])
    x = _r(2, 3, *(4,) * nd).astype(np.float32)
    kw = dict(stride=2, padding=1) if "Transpose" in name else dict(padding=1, groups=3)
    ours, theirs = getattr(mt.nn, name)(6, 3, **kw), getattr(torch.nn, name)(6, 3, **kw)
    assert repr(ours) == repr(theirs)
    assert isinstance(ours.weight, UninitializedParameter)
    with pytest.raises(RuntimeError):
        ours.weight.shape
    out, ref = ours(mt.tensor(x)), theirs(torch.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ == name.replace("Lazy", "")
    assert repr(ours) == repr(theirs)
    assert ours.in_channels == 3 and type(ours.weight) is mt.nn.Parameter
    assert [tuple(p.shape) for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    assert tuple(out.shape) == tuple(ref.shape) and out.dtype == mt.float32
    # PyTorch's init: kaiming_uniform(a=sqrt(5)) gives |w| <= 1/sqrt(fan_in), and the bias the same bound
    bound = 1 / np.sqrt(ours.weight.shape[1] * np.prod(ours.weight.shape[2:]))
    assert np.abs(ours.weight.detach().numpy()).max() <= bound and np.abs(ours.bias.detach().numpy()).max() <= bound
    assert np.abs(ours.weight.detach().numpy()).max() > bound / 2  # drawn, not left empty


def test_conv_modules_init_as_pytorch():
    for m in (mt.nn.Conv3d(2, 4, 3), mt.nn.ConvTranspose2d(6, 4, 3, groups=2)):
        bound = 1 / np.sqrt(m.weight.shape[1] * np.prod(m.weight.shape[2:]))
        w = m.weight.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound and w.std() > bound / 3


def test_conv_transpose_output_size_as_pytorch():
    x = _r(1, 2, 4, 4).astype(np.float32)
    ours, theirs = mt.nn.ConvTranspose2d(2, 3, 3, stride=3), torch.nn.ConvTranspose2d(2, 3, 3, stride=3)
    for size in ([12, 14], [1, 3, 13, 12]):
        assert tuple(ours(mt.tensor(x), output_size=size).shape) == tuple(
            theirs(torch.tensor(x), output_size=size).shape)
    with pytest.raises(ValueError):
        ours(mt.tensor(x), output_size=[15, 15])
    with pytest.raises(ValueError):
        theirs(torch.tensor(x), output_size=[15, 15])


def test_fractional_max_pool_draws_from_the_generator():
    x = mt.tensor(_r(1, 2, 8, 8))
    mt.manual_seed(3)
    a = mt.nn.functional.fractional_max_pool2d(x, 2, output_size=4)
    mt.manual_seed(3)
    b = mt.nn.FractionalMaxPool2d(2, output_size=4)(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


ERRORS = [
    ("conv3d channels", lambda lib: _F(lib).conv3d(_lib_tensor(lib, _r(1, 3, 3, 3, 3)),
                                                   _lib_tensor(lib, _r(2, 2, 1, 1, 1)))),
    ("conv3d 3d input", lambda lib: _F(lib).conv3d(_lib_tensor(lib, _r(3, 3, 3)),
                                                   _lib_tensor(lib, _r(2, 3, 1, 1, 1)))),
    ("conv_transpose2d output_padding", lambda lib: _F(lib).conv_transpose2d(
        _lib_tensor(lib, _r(1, 2, 3, 3)), _lib_tensor(lib, _r(2, 2, 2, 2)), stride=2, output_padding=2)),
    ("conv_transpose1d channels", lambda lib: _F(lib).conv_transpose1d(_lib_tensor(lib, _r(1, 3, 3)),
                                                                       _lib_tensor(lib, _r(2, 2, 2)))),
    ("ConvTranspose2d reflect", lambda lib: lib.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")),
    ("max_pool3d pad", lambda lib: _F(lib).max_pool3d(_lib_tensor(lib, _r(1, 1, 4, 4, 4)), 2, padding=2)),
    ("max_unpool2d size", lambda lib: _F(lib).max_unpool2d(*_F(lib).max_pool2d(
        _lib_tensor(lib, _r(1, 1, 4, 4)), 2, return_indices=True), 2, output_size=(9, 9))),
    # (an increasing ramp: each window's max is its last element, so index 78 lands past the 4x4x4 output;
    # random values made the refusal depend on the draw)
    ("max_unpool3d index", lambda lib: _F(lib).max_unpool3d(*_F(lib).max_pool3d(
        _lib_tensor(lib, np.arange(80.0).reshape(1, 4, 4, 5)), 2, return_indices=True), 2)),
    ("fractional no size", lambda lib: _F(lib).fractional_max_pool2d(_lib_tensor(lib, _r(1, 1, 4, 4)), 2)),
    ("FractionalMaxPool2d ratio", lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5)),
    ("affine_grid theta", lambda lib: _F(lib).affine_grid(_lib_tensor(lib, _r(1, 3, 3)), [1, 1, 2, 2], False)),
    ("affine_grid size", lambda lib: _F(lib).affine_grid(_lib_tensor(lib, _r(1, 2, 3)), [1, 1, 2], False)),
    ("grid_sample mode", lambda lib: _F(lib).grid_sample(_lib_tensor(lib, _r(1, 1, 2, 2)),
                                                         _lib_tensor(lib, _r(1, 1, 1, 2)), mode="area")),
    ("grid_sample padding", lambda lib: _F(lib).grid_sample(_lib_tensor(lib, _r(1, 1, 2, 2)),
                                                            _lib_tensor(lib, _r(1, 1, 1, 2)), padding_mode="wrap")),
    ("grid_sample dtype", lambda lib: _F(lib).grid_sample(_lib_tensor(lib, _r(1, 1, 2, 2)), _lib_tensor(
        lib, _r(1, 1, 1, 2).astype(np.float32)), align_corners=False)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_match_pytorch(case):
    _, call = case
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(mt)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
