"""torch.nn.utils.fusion against PyTorch: the fused weights and biases (values, dtypes, requires_grad, state_dict
order), the fused layer's output and gradients against conv/linear -> batch norm in eval mode (float64, random
upstream weight), and the AssertionErrors / TypeErrors PyTorch raises. Skipped where PyTorch is not installed."""
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor import run as runner
from minitensor.nn.utils import fusion

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)

CONVS = [  # (conv class, its batch norm, a batch input shape, transpose, extra conv kwargs)
    ("Conv1d", "BatchNorm1d", (2, 4, 9), False, {}),
    ("Conv2d", "BatchNorm2d", (2, 4, 6, 5), False, {"groups": 2}),
    ("Conv3d", "BatchNorm3d", (1, 4, 4, 5, 3), False, {"stride": 2}),
    ("ConvTranspose1d", "BatchNorm1d", (2, 4, 5), True, {}),
    ("ConvTranspose2d", "BatchNorm2d", (2, 4, 4, 3), True, {"dilation": 2}),
    ("ConvTranspose3d", "BatchNorm3d", (1, 4, 3, 3, 2), True, {}),
]


def _pair(cls, *args, **kwargs):
    """The same layer in both libraries, float64, with random weights and running statistics (positive variance)."""
    t = getattr(torch.nn, cls)(*args, **kwargs).double()
    with torch.no_grad():
        for name, v in t.state_dict().items():
            if v.is_floating_point():
                values = RNG.uniform(0.2, 1.8, tuple(v.shape)) if "var" in name else RNG.normal(size=tuple(v.shape))
                v.copy_(torch.from_numpy(values))
    m = getattr(mt.nn, cls)(*args, **kwargs).double()
    m.load_state_dict({k: mt.tensor(v.numpy().copy()) for k, v in t.state_dict().items()})
    return m, t


def _np(x):
    return x.detach().numpy()


def _check_fused_params(mf, tf):
    assert list(mf.state_dict()) == list(tf.state_dict())
    for (k, p), q in zip(mf.named_parameters(), tf.parameters()):
        np.testing.assert_allclose(_np(p), _np(q), rtol=1e-13, atol=1e-14, err_msg=k)
        assert str(p.dtype).split(".")[1] == str(q.dtype).split(".")[1], k
        assert p.requires_grad == q.requires_grad, k
        assert isinstance(p, mt.nn.Parameter) and p.is_leaf, k


@pytest.mark.parametrize("conv_cls, bn_cls, shape, transpose, extra", CONVS, ids=[c[0] for c in CONVS])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_fused_conv_equals_conv_then_batch_norm(conv_cls, bn_cls, shape, transpose, extra, bias, affine):
    out_ch = 6
    mc, tc = _pair(conv_cls, 4, out_ch, 3 if len(shape) == 3 else 2, bias=bias, **extra)
    mb, tb = _pair(bn_cls, out_ch, affine=affine)
    for mod in (mc, tc, mb, tb):
        mod.eval()
    mf = mt.nn.utils.fuse_conv_bn_eval(mc, mb, transpose=transpose)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose=transpose)
    assert type(mf) is type(mc) and mf is not mc and mc.weight is not mf.weight
    _check_fused_params(mf, tf)
    if not bias:  # the original layer is left as it was
        assert mc.bias is None

    x = RNG.normal(size=shape)
    mx, tx = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    my, ty = mf(mx), tf(tx)
    np.testing.assert_allclose(_np(my), _np(ty), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(_np(my), _np(mb(mc(mt.tensor(x)))), rtol=1e-11, atol=1e-12)  # what it replaces
    w = RNG.normal(size=tuple(ty.shape))
    (my * mt.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-11, atol=1e-12)
    for (k, p), q in zip(mf.named_parameters(), tf.parameters()):
        assert (p.grad is None) == (q.grad is None), k
        if q.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-11, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("bn_features", [5, 1])
def test_fused_linear_equals_linear_then_batch_norm(bias, bn_features):
    ml, tl = _pair("Linear", 3, 5, bias=bias)
    mb, tb = _pair("BatchNorm1d", bn_features)
    for mod in (ml, tl, mb, tb):
        mod.eval()
    mf, tf = mt.nn.utils.fuse_linear_bn_eval(ml, mb), torch.nn.utils.fuse_linear_bn_eval(tl, tb)
    _check_fused_params(mf, tf)
    x = RNG.normal(size=(4, 3))
    mx, tx = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    my, ty = mf(mx), tf(tx)
    np.testing.assert_allclose(_np(my), _np(ty), rtol=1e-11, atol=1e-12)
    if bn_features == 5:  # (a one-feature batch norm cannot follow a 5-feature Linear: the fusion broadcasts it)
        np.testing.assert_allclose(_np(my), _np(mb(ml(mt.tensor(x)))), rtol=1e-11, atol=1e-12)
    w = RNG.normal(size=(4, 5))
    (my * mt.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(mf.weight.grad.numpy(), tf.weight.grad.numpy(), rtol=1e-11, atol=1e-12)


def _lib_tensors(lib, arrays, grads):
    make = (lambda a, g: mt.tensor(a, requires_grad=g)) if lib is mt else \
        (lambda a, g: torch.tensor(a, requires_grad=g))
    return [None if a is None else make(a, g) for a, g in zip(arrays, grads)]


@pytest.mark.parametrize("w_dtype, b_dtype, bn_dtype", [
    ("float32", "float32", "float64"), ("float64", "float32", "float32"), ("float32", None, "float64"),
    ("float64", None, "float64")])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("w_grad", [True, False])
def test_fuse_conv_bn_weights_keeps_the_conv_dtypes_and_flags(w_dtype, b_dtype, bn_dtype, transpose, w_grad):
    w = RNG.normal(size=(3, 3, 2, 2)).astype(w_dtype)
    b = None if b_dtype is None else RNG.normal(size=3).astype(b_dtype)
    rm, rv = RNG.normal(size=3).astype(bn_dtype), RNG.uniform(0.5, 2, 3).astype(bn_dtype)
    gamma, beta = RNG.normal(size=3).astype(bn_dtype), RNG.normal(size=3).astype(bn_dtype)
    res = {}
    for lib in (mt, torch):
        args = _lib_tensors(lib, [w, b, rm, rv], [w_grad, False, False, False])
        gb = _lib_tensors(lib, [gamma, beta], [True, True])
        res[lib] = lib.nn.utils.fuse_conv_bn_weights(*args[:2], args[2], args[3], 1e-3, *gb, transpose=transpose)
    for p, q in zip(res[mt], res[torch]):
        tol = 1e-6 if "float32" in (w_dtype, b_dtype) else 1e-13
        np.testing.assert_allclose(_np(p), _np(q), rtol=tol, atol=tol)
        assert str(p.dtype).split(".")[1] == str(q.dtype).split(".")[1]
        assert p.requires_grad == q.requires_grad and isinstance(p, mt.nn.Parameter) and p.grad_fn is None


@pytest.mark.parametrize("b_dtype", ["float32", "float64", None])
def test_fuse_linear_bn_weights_keeps_the_linear_dtypes_and_flags(b_dtype):
    w = RNG.normal(size=(4, 3)).astype(np.float32)
    b = None if b_dtype is None else RNG.normal(size=4).astype(b_dtype)
    stats = [RNG.normal(size=4), RNG.uniform(0.5, 2, 4), RNG.normal(size=4), RNG.normal(size=4)]
    res = {}
    for lib in (mt, torch):
        lw, lb = _lib_tensors(lib, [w, b], [True, True])
        rm, rv, g, be = _lib_tensors(lib, stats, [False] * 4)
        res[lib] = lib.nn.utils.fuse_linear_bn_weights(lw, lb, rm, rv, 1e-5, g, be)
    for p, q in zip(res[mt], res[torch]):
        np.testing.assert_allclose(_np(p), _np(q), rtol=1e-6, atol=1e-6)
        assert str(p.dtype).split(".")[1] == str(q.dtype).split(".")[1]
        assert p.requires_grad == q.requires_grad


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", ["conv_training", "bn_training", "linear_training", "no_running_stats_conv",
                                  "no_running_stats_linear", "features", "linear_no_affine"])
def test_errors_match_pytorch(case):
    def build(lib):
        nn = lib.nn
        conv, lin = nn.Conv2d(2, 3, 1), nn.Linear(2, 3)
        bn = nn.BatchNorm2d(3, track_running_stats=not case.startswith("no_running_stats"))
        bn1 = nn.BatchNorm1d({"features": 4}.get(case, 3), affine=case != "linear_no_affine",
                             track_running_stats=not case.startswith("no_running_stats"))
        for mod in (conv, lin, bn, bn1):
            mod.eval()
        {"conv_training": conv, "bn_training": bn, "linear_training": lin}.get(case, nn.Identity()).train()
        if case in ("conv_training", "bn_training", "no_running_stats_conv"):
            return lambda: nn.utils.fuse_conv_bn_eval(conv, bn)
        return lambda: nn.utils.fuse_linear_bn_eval(lin, bn1)

    assert _error(build(mt)) == _error(build(torch))


def test_grouped_transposed_conv_is_refused_as_in_pytorch():
    # its weight holds out_channels / groups per group on dim 1: the per-channel scale does not broadcast in PyTorch
    # either (a RuntimeError from the multiplication; the messages are each library's broadcasting error)
    for lib in (mt, torch):
        conv, bn = lib.nn.ConvTranspose2d(4, 6, 1, groups=2).eval(), lib.nn.BatchNorm2d(6).eval()
        with pytest.raises(RuntimeError):
            lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=True)


def test_conv_without_affine_batch_norm_in_the_weights_function():
    # a batch norm without affine parameters gives None for gamma and beta: the conv version takes them as 1 and 0
    res = {}
    for lib in (mt, torch):
        w, rm, rv = _lib_tensors(lib, [np.ones((2, 1, 1)), np.array([0.5, -1.0]), np.array([4.0, 1.0])], [True] * 3)
        res[lib] = [_np(p) for p in lib.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 0.0, None, None)]
    for p, q in zip(res[mt], res[torch]):
        np.testing.assert_array_equal(p, q)


def test_namespace_and_runner():
    assert fusion.__all__ == torch.nn.utils.fusion.__all__
    assert mt.nn.utils.fusion is fusion and mt.nn.utils.fuse_conv_bn_eval is fusion.fuse_conv_bn_eval
    with warnings.catch_warnings(), runner.torch_is_minitensor():
        import torch as shadow  # noqa: F811  (minitensor, under the runner)
        from torch.nn.utils.fusion import fuse_linear_bn_weights

        assert fuse_linear_bn_weights is fusion.fuse_linear_bn_weights
        assert shadow.nn.utils.fusion.fuse_conv_bn_eval is fusion.fuse_conv_bn_eval
