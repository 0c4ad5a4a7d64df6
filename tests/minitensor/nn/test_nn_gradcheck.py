"""Finite-difference gradient checks, in float64 with a random upstream weight (autograd.gradcheck),
for every differentiable function of the activation, loss, normalisation, shape, convolution and
pooling modules of minitensor.nn (their comparisons with PyTorch are in test_torch_nn_modules.py).
Inputs keep clear of the kinks (|x| = 1, 3, 6, the shrink thresholds, the ties of a max), where
central differences straddle two formulas. Tiny shapes: the whole file runs in a few seconds.
"""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck

RNG = np.random.default_rng(1)


def _r(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape)


def _away(*shape):
    """Values in (-7, 7) at least 0.1 away from every kink the activations have."""
    x = _r(*shape, lo=-7, hi=7)
    kinks = np.array([-6, -3, -1, -0.5, 0, 0.5, 1, 3, 6])
    near = np.abs(x[..., None] - kinks).min(-1) < 0.1
    return np.where(near, x + 0.25, x)


def _prob(*shape):
    return RNG.uniform(0.1, 0.9, shape)


def _sign(*shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


A = _away(2, 6)
X = _r(3, 4)
# constant targets, drawn once (a lambda drawing its own would see new ones at every evaluation)
SIGN5, SIGN34, SIGN3 = mt.tensor(_sign(5)), mt.tensor(_sign(3, 4)), mt.tensor(_sign(3))
LABELS = mt.tensor((_r(3, 4) > 0) * 1.0)

CASES = [
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), [A]),
    ("elu", lambda x: F.elu(x, 0.7), [A]),
    ("selu", F.selu, [A]),
    ("celu", lambda x: F.celu(x, 1.5), [A]),
    ("mish", F.mish, [A]),
    ("hardtanh", F.hardtanh, [A]),
    ("relu6", F.relu6, [A]),
    ("hardsigmoid", F.hardsigmoid, [A]),
    ("hardswish", F.hardswish, [A]),
    ("glu", lambda x: F.glu(x, 1), [A]),
    ("logsigmoid", F.logsigmoid, [A]),
    ("prelu", F.prelu, [_away(2, 3, 2), _r(3)]),
    ("softmin", lambda x: F.softmin(x, 1), [X]),
    ("softsign", F.softsign, [A]),
    ("tanhshrink", F.tanhshrink, [A]),
    ("hardshrink", F.hardshrink, [A]),
    ("softshrink", F.softshrink, [A]),
    ("threshold", lambda x: F.threshold(x, 0.25, 2.0), [A]),
    ("rrelu", F.rrelu, [A]),
    ("binary_cross_entropy", lambda x, t, w: F.binary_cross_entropy(x, t, w), [_prob(3, 4), _prob(3, 4), _prob(4)]),
    ("kl_div", lambda x, t: F.kl_div(x, t, reduction="batchmean"), [np.log(_prob(3, 4)), _prob(3, 4)]),
    ("kl_div log_target", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True),
     [np.log(_prob(3, 4)), np.log(_prob(3, 4))]),
    ("smooth_l1_loss", lambda x, t: F.smooth_l1_loss(x, t, beta=0.5), [X, X + _sign(3, 4) * _r(3, 4, lo=0.1, hi=2)]),
    ("huber_loss", lambda x, t: F.huber_loss(x, t, delta=0.5), [X, X + _sign(3, 4) * _r(3, 4, lo=0.1, hi=2)]),
    ("soft_margin_loss", F.soft_margin_loss, [X, _sign(3, 4)]),
    ("poisson_nll_loss", F.poisson_nll_loss, [X, _r(3, 4, lo=0, hi=3)]),
    ("poisson_nll_loss rate", lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True),
     [_prob(3, 4) * 3, _r(3, 4, lo=0, hi=3)]),
    ("gaussian_nll_loss", F.gaussian_nll_loss, [X, _r(3, 4), _prob(3, 4)]),
    ("margin_ranking_loss", lambda a, b: F.margin_ranking_loss(a, b, SIGN5, 0.1),
     [_r(5), _r(5)]),
    ("hinge_embedding_loss", lambda x: F.hinge_embedding_loss(x, SIGN34, 5.0), [X]),
    ("cosine_embedding_loss", lambda a, b: F.cosine_embedding_loss(a, b, SIGN3, -1.0),
     [X, _r(3, 4)]),
    ("pairwise_distance", F.pairwise_distance, [X, _r(3, 4)]),
    ("triplet_margin_loss", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=10.0), [X, _r(3, 4), _r(3, 4)]),
    ("multilabel_soft_margin_loss", lambda x: F.multilabel_soft_margin_loss(x, LABELS),
     [X]),
    ("multi_margin_loss", lambda x: F.multi_margin_loss(x, mt.tensor(np.array([0, 3, 1])), p=2, margin=9.0), [X]),
    ("batch_norm", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [_r(4, 3, 2), _r(3), _r(3)]),
    ("instance_norm", lambda x, w: F.instance_norm(x, weight=w), [_r(2, 3, 4), _r(3)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [_r(2, 4, 3), _r(4), _r(4)]),
    ("rms_norm", lambda x, w: F.rms_norm(x, [4], w), [X, _r(4)]),
    ("local_response_norm", lambda x: F.local_response_norm(x, 3, alpha=0.5), [_r(2, 4, 3)]),
    ("bilinear", F.bilinear, [_r(2, 3), _r(2, 4), _r(2, 3, 4), _r(2)]),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [_r(1, 4, 2, 2)]),
    ("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), [_r(1, 1, 4, 2)]),
    ("channel_shuffle", lambda x: F.channel_shuffle(x, 2), [_r(1, 4, 2)]),
    ("interpolate nearest", lambda x: F.interpolate(x, scale_factor=2), [_r(1, 2, 3)]),
    ("interpolate linear", lambda x: F.interpolate(x, size=5, mode="linear"), [_r(1, 2, 3)]),
    ("interpolate bilinear", lambda x: F.interpolate(x, size=(3, 4), mode="bilinear", align_corners=True),
     [_r(1, 1, 2, 3)]),
    ("pad reflect", lambda x: F.pad(x, (2, 1), mode="reflect"), [_r(2, 4)]),
    ("pad replicate", lambda x: F.pad(x, (1, 2, 2, 0), mode="replicate"), [_r(1, 2, 3)]),
    ("pad circular", lambda x: F.pad(x, (2, 1), mode="circular"), [_r(1, 2, 3)]),
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2)),
     [_r(2, 2, 4, 5), _r(3, 2, 2, 2), _r(3)]),
    ("conv2d groups same", lambda x, w: F.conv2d(x, w, padding="same", groups=2), [_r(1, 4, 3, 3), _r(4, 2, 2, 3)]),
    ("conv1d", lambda x, w, b: F.conv1d(x, w, b, padding=1), [_r(2, 2, 5), _r(3, 2, 3), _r(3)]),
    ("unfold", lambda x: F.unfold(x, 2, padding=1, stride=2), [_r(1, 2, 3, 4)]),
    ("fold", lambda x: F.fold(x, (3, 3), 2), [_r(1, 8, 4)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), [_r(1, 2, 5, 4)]),
    ("max_pool1d", lambda x: F.max_pool1d(x, 2), [_r(2, 2, 5)]),
    ("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [_r(1, 2, 5, 4)]),
    ("avg_pool1d", lambda x: F.avg_pool1d(x, 2, padding=1), [_r(2, 2, 5)]),
    # h-nnrest: the in-place functions (on a non-leaf: a leaf that requires grad can't change in place)
    ("relu_", lambda x: F.relu_(x * 1), [_r(2, 3)]),
    ("elu_", lambda x: F.elu_(x * 1, 0.7), [_r(2, 3)]),
    ("celu_", lambda x: F.celu_(x * 1, 0.7), [_r(2, 3)]),
    ("selu_", lambda x: F.selu_(x * 1), [_r(2, 3)]),
    ("leaky_relu_", lambda x: F.leaky_relu_(x * 1, 0.2), [_r(2, 3)]),
    ("hardtanh_", lambda x: F.hardtanh_(x * 1, -1.0, 1.5), [_r(2, 3)]),
    ("rrelu_", lambda x: F.rrelu_(x * 1), [_r(2, 3)]),
    ("threshold_", lambda x: F.threshold_(x * 1, 0.3, -2.0), [_r(2, 3)]),
    ("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [_r(1, 2, 5, 4)]),
    ("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 3), [_r(1, 2, 5)]),
    ("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 3)), [_r(1, 2, 5, 4)]),
    ("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 2), [_r(1, 2, 5)]),
]

# ---- issue 30, point 2 (nnconv helper): 3-D and transposed convolutions, more pooling, grid sampling ----
_POOLED = mt.tensor(_r(1, 2, 4, 4))
_OUT, _IDX = F.max_pool2d(_POOLED, 2, return_indices=True)  # fixed indices: the unpool is linear in its values
_IDX1 = F.max_pool1d(mt.tensor(_r(1, 2, 4)), 2, return_indices=True)[1]
_IDX3 = F.max_pool3d(mt.tensor(_r(1, 1, 2, 2, 4)), 2, return_indices=True)[1]
_U2, _U3 = mt.tensor(RNG.random((1, 2, 2))), mt.tensor(RNG.random((1, 1, 3)))
_GRID = mt.tensor(_r(1, 2, 2, 2))
CASES += [
    ("conv3d", lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(0, 1, 1), groups=2),
     [_r(1, 2, 2, 3, 3), _r(2, 1, 1, 2, 2), _r(2)]),
    ("conv_transpose1d", lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
     [_r(2, 2, 3), _r(2, 3, 3), _r(3)]),
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w, stride=(2, 1), padding=1, groups=2, dilation=(1, 2)),
     [_r(1, 2, 3, 3), _r(2, 1, 2, 2)]),
    ("conv_transpose3d", lambda x, w, b: F.conv_transpose3d(x, w, b, stride=2, output_padding=(1, 0, 0)),
     [_r(1, 1, 2, 2, 2), _r(1, 2, 1, 2, 1), _r(2)]),
    ("conv_tbc", lambda x, w, b: F.conv_tbc(x, w, b, 1), [_r(3, 2, 2), _r(2, 2, 3), _r(3)]),
    ("max_pool3d", lambda x: F.max_pool3d(x, 2, 1, 1), [_r(1, 1, 2, 3, 3)]),
    ("max_pool1d_with_indices", lambda x: F.max_pool1d_with_indices(x, 2)[0], [_r(1, 2, 5)]),
    ("max_pool2d_with_indices", lambda x: F.max_pool2d_with_indices(x, 2)[0], [_r(1, 2, 4, 3)]),
    ("max_pool3d_with_indices", lambda x: F.max_pool3d_with_indices(x, 2, ceil_mode=True)[0], [_r(1, 1, 3, 2, 3)]),
    ("avg_pool3d", lambda x: F.avg_pool3d(x, 2, 1, 1, count_include_pad=False), [_r(1, 1, 2, 3, 3)]),
    ("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, (1, 2, 2)), [_r(1, 1, 2, 3, 3)]),
    ("adaptive_max_pool3d", lambda x: F.adaptive_max_pool3d(x, (1, 2, 2)), [_r(1, 1, 2, 3, 3)]),
    ("adaptive_max_pool1d_with_indices", lambda x: F.adaptive_max_pool1d_with_indices(x, 2)[0], [_r(1, 2, 5)]),
    ("adaptive_max_pool2d_with_indices", lambda x: F.adaptive_max_pool2d_with_indices(x, 2)[0], [_r(1, 1, 3, 4)]),
    ("adaptive_max_pool3d_with_indices", lambda x: F.adaptive_max_pool3d_with_indices(x, 2)[0], [_r(1, 1, 3, 2, 3)]),
    ("max_unpool1d", lambda x: F.max_unpool1d(x, _IDX1, 2), [_r(1, 2, 2)]),
    ("max_unpool2d", lambda x: F.max_unpool2d(x, _IDX, 2), [_r(1, 2, 2, 2)]),
    ("max_unpool3d", lambda x: F.max_unpool3d(x, _IDX3, 2), [_r(1, 1, 1, 1, 2)]),
    ("lp_pool1d", lambda x: F.lp_pool1d(x, 3, 2), [_r(1, 2, 4, lo=0.2)]),
    ("lp_pool2d", lambda x: F.lp_pool2d(x, 2, 2, 1), [_r(1, 1, 3, 3)]),
    ("lp_pool3d", lambda x: F.lp_pool3d(x, 1.5, 2), [_r(1, 1, 2, 2, 4, lo=0.2)]),
    ("fractional_max_pool2d", lambda x: F.fractional_max_pool2d(x, 2, 2, _random_samples=_U2), [_r(1, 2, 4, 3)]),
    ("fractional_max_pool2d_with_indices",
     lambda x: F.fractional_max_pool2d_with_indices(x, 2, output_ratio=0.5, _random_samples=_U2)[0], [_r(1, 2, 4, 5)]),
    ("fractional_max_pool3d", lambda x: F.fractional_max_pool3d(x, 2, 2, _random_samples=_U3), [_r(1, 1, 3, 3, 3)]),
    ("fractional_max_pool3d_with_indices",
     lambda x: F.fractional_max_pool3d_with_indices(x, 2, (1, 2, 2), _random_samples=_U3)[0], [_r(1, 1, 2, 3, 3)]),
    ("affine_grid", lambda t: F.affine_grid(t, [1, 1, 2, 3], align_corners=False), [_r(1, 2, 3)]),
    ("affine_grid 3d", lambda t: F.affine_grid(t, [1, 1, 2, 2, 1], align_corners=False), [_r(1, 3, 4)]),
    ("grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=False),
     [_r(1, 2, 2, 3), _r(1, 1, 2, 2, lo=-1.3, hi=1.3)]),
    ("grid_sample border", lambda x, g: F.grid_sample(x, g, padding_mode="border", align_corners=True),
     [_r(1, 1, 2, 2), _r(1, 1, 2, 2, lo=-0.9, hi=0.9)]),
    ("grid_sample reflection", lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=False),
     [_r(1, 1, 2, 2), _r(1, 1, 2, 2, lo=-1.4, hi=1.4)]),
    ("grid_sample 3d", lambda x, g: F.grid_sample(x, g, align_corners=True), [_r(1, 1, 2, 2, 2), _r(1, 1, 1, 2, 3)]),
    ("grid_sample nearest", lambda x: F.grid_sample(x, _GRID, mode="nearest", align_corners=True), [_r(1, 2, 3, 3)]),
]
# ---- end of the nnconv helper's block ----


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_central_differences(case):
    _, fn, arrays = case
    inputs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in arrays]
    assert gradcheck(fn, inputs, seed=len(arrays))


def test_every_new_function_has_a_gradient_check():
    from minitensor.nn import activation, conv, loss, misc, normalization, pooling, sampling
    gradient_free = {"dropout1d", "dropout2d", "alpha_dropout", "upsample",  # random masks; an alias
                     "upsample_nearest", "upsample_bilinear"}  # interpolate's old names
    names = {n for m in (activation, conv, loss, misc, normalization, pooling, sampling) for n in m.FUNCTIONS}
    checked = {c[0].split(" ")[0] for c in CASES}
    assert names - gradient_free <= checked, names - gradient_free - checked


@pytest.mark.parametrize("fn", [F.dropout1d, F.dropout2d, F.alpha_dropout])
def test_random_dropouts_pass_gradient_through_their_mask(fn):
    x = mt.tensor(_r(4, 5, 3), dtype=mt.float64, requires_grad=True)
    mt.manual_seed(0)
    out = fn(x, 0.4, training=True)
    u = mt.tensor(_r(4, 5, 3), dtype=mt.float64)
    out.backward(u)
    mt.manual_seed(0)
    y = mt.ones(4, 5, 3, dtype=mt.float64, requires_grad=True)
    (fn(y, 0.4, training=True) * u).sum().backward()  # the same mask: d out / d x is the mask's scale
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy())
    assert fn(x, 0.4, training=False) is x


# ---- h-sig30: the same checks over random small shapes and arguments (Hypothesis, the profile's examples) ----
# Each property draws the sizes and the arguments of one family, then the values from a drawn seed, and
# checks every input's gradient (float64, random upstream weight) against central differences.
def _seeded(seed, *shape, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def _spaced(seed, *shape):
    """Values at least 0.3 apart (a shuffled grid plus a little noise): no two tie within a max window."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.3 + rng.uniform(0, 0.05, n) - 0.15 * n).reshape(shape)


@st.composite
def conv_cases(draw):
    d = draw(st.sampled_from([1, 2]))
    groups = draw(st.sampled_from([1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    k = tuple(draw(st.integers(1, 3 if d == 1 else 2)) for _ in range(d))
    stride = draw(st.integers(1, 2))
    dilation = draw(st.integers(1, 2))
    padding = "same" if stride == 1 and draw(st.booleans()) else draw(st.integers(0, 2))
    pad = 0 if padding == "same" else padding
    size = tuple(max(1, dilation * (kk - 1) + 1 - 2 * pad) + draw(st.integers(0, 2)) for kk in k)
    return d, draw(st.integers(1, 2)), cin, cout, k, size, stride, padding, dilation, groups, draw(st.booleans()), \
        draw(st.integers(0, 2 ** 16))


@given(conv_cases())
def test_convolutions_over_random_shapes(case):
    d, n, cin, cout, k, size, stride, padding, dilation, groups, bias, seed = case
    conv = F.conv1d if d == 1 else F.conv2d
    arrays = [_seeded(seed, n, cin, *size), _seeded(seed + 1, cout, cin // groups, *k)] + \
        ([_seeded(seed + 2, cout)] if bias else [])
    inputs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in arrays]
    fn = lambda x, w, b=None: conv(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)  # noqa: E731
    assert gradcheck(fn, inputs, seed=seed)


@st.composite
def pool_cases(draw):
    d = draw(st.sampled_from([1, 2]))
    k = draw(st.integers(1, 3))
    stride = draw(st.integers(1, 3))
    padding = draw(st.integers(0, k // 2))
    dilation = 1 if padding else draw(st.integers(1, 2))  # (a dilated window over padding may miss the input)
    size = tuple(max(1, dilation * (k - 1) + 1 - 2 * padding) + draw(st.integers(0, 2)) for _ in range(d))
    return d, draw(st.integers(1, 2)), draw(st.integers(1, 2)), size, k, stride, padding, dilation, \
        draw(st.booleans()), draw(st.booleans()), draw(st.integers(0, 2 ** 16))


@given(pool_cases())
def test_max_pooling_over_random_shapes(case):
    d, n, c, size, k, stride, padding, dilation, ceil_mode, _, seed = case
    pool = F.max_pool1d if d == 1 else F.max_pool2d
    x = mt.tensor(_spaced(seed, n, c, *size), dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda x: pool(x, k, stride, padding, dilation, ceil_mode=ceil_mode), [x], seed=seed)


@given(pool_cases())
def test_average_pooling_over_random_shapes(case):
    d, n, c, size, k, stride, padding, _, ceil_mode, count_include_pad, seed = case
    pool = F.avg_pool1d if d == 1 else F.avg_pool2d
    x = mt.tensor(_seeded(seed, n, c, *size), dtype=mt.float64, requires_grad=True)
    assert gradcheck(lambda x: pool(x, k, stride, padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad),
                     [x], seed=seed)


@st.composite
def norm_cases(draw):
    kind = draw(st.sampled_from(["batch_norm", "instance_norm", "group_norm", "layer_norm"]))
    groups = draw(st.integers(1, 2))
    c = groups * draw(st.integers(1, 2))
    rest = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    n = draw(st.integers(1, 3))
    spread = {"batch_norm": n * math.prod(rest), "instance_norm": math.prod(rest),
              "group_norm": c // groups * math.prod(rest), "layer_norm": math.prod(rest)}[kind]
    if spread < 2:  # a single value per statistic: its variance is 0 (and PyTorch refuses it in batch norm)
        rest = rest[:-1] + (rest[-1] + 1,)
    return kind, (n, c) + rest, groups, draw(st.booleans()), draw(st.integers(0, 2 ** 16))


@given(norm_cases())
def test_normalisations_over_random_shapes(case):
    kind, shape, groups, affine, seed = case
    x = _seeded(seed, *shape)
    if kind == "layer_norm":
        normalized = shape[-1:] if affine else shape[2:]
        fn = lambda x, *wb: F.layer_norm(x, normalized, *wb)  # noqa: E731
        params = [_seeded(seed + 1, *normalized), _seeded(seed + 2, *normalized)] if affine else []
    else:
        params = [_seeded(seed + 1, shape[1]), _seeded(seed + 2, shape[1])] if affine else []
        fn = {"batch_norm": lambda x, *wb: F.batch_norm(x, None, None, *wb, training=True),
              "instance_norm": lambda x, *wb: F.instance_norm(x, None, None, *wb),
              "group_norm": lambda x, *wb: F.group_norm(x, groups, *wb)}[kind]
    inputs = [mt.tensor(a, dtype=mt.float64, requires_grad=True) for a in [x] + params]
    assert gradcheck(fn, inputs, seed=seed)


LOSS_FAMILIES = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy", "kl_div",
                 "nll_loss", "cross_entropy"]


@st.composite
def loss_cases(draw):
    name = draw(st.sampled_from(LOSS_FAMILIES))
    reductions = ["none", "sum", "mean"] + (["batchmean"] if name == "kl_div" else [])
    shape = (draw(st.integers(1, 3)), draw(st.integers(2, 3))) + tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
    return name, shape, draw(st.sampled_from(reductions)), draw(st.booleans()), draw(st.integers(0, 2 ** 16))


@given(loss_cases())
def test_losses_over_random_shapes_and_reductions(case):
    name, shape, reduction, option, seed = case
    x, rng = _seeded(seed, *shape), np.random.default_rng(seed + 1)
    if name in ("mse_loss", "l1_loss"):  # option: an elementwise weight (PyTorch 2.13's argument)
        t = mt.tensor(x + np.where(rng.random(shape) < 0.5, -1, 1) * rng.uniform(0.1, 1.5, shape))  # off |x - t| = 0
        w = mt.tensor(rng.uniform(0.5, 2, shape)) if option else None
        fn = lambda x: getattr(F, name)(x, t, reduction=reduction, weight=w)  # noqa: E731
    elif name in ("smooth_l1_loss", "huber_loss"):  # the kinks at |x - t| = beta (delta)
        beta = 0.5
        t = mt.tensor(x + np.where(rng.random(shape) < 0.5, -1, 1) * rng.choice([0.2, 0.8, 1.4], shape))
        fn = (lambda x: F.smooth_l1_loss(x, t, reduction=reduction, beta=beta)) if name == "smooth_l1_loss" \
            else (lambda x: F.huber_loss(x, t, reduction=reduction, delta=beta))
    elif name == "binary_cross_entropy":
        x = rng.uniform(0.1, 0.9, shape)
        t, w = mt.tensor(rng.uniform(0, 1, shape)), mt.tensor(rng.uniform(0.5, 2, shape)) if option else None
        fn = lambda x: F.binary_cross_entropy(x, t, w, reduction=reduction)  # noqa: E731
    elif name == "kl_div":  # option: the target as log-probabilities
        p = rng.uniform(0.1, 0.9, shape)
        t = mt.tensor(np.log(p) if option else p)
        fn = lambda x: F.kl_div(x, t, reduction=reduction, log_target=option)  # noqa: E731
    else:  # class targets with class weights, one of them ignored when `option`
        n, c = shape[0], shape[1]
        target = rng.integers(0, c, (n,) + shape[2:])
        if option:
            target.reshape(-1)[0] = -100
        t, w = mt.tensor(target), mt.tensor(rng.uniform(0.5, 2, c))
        fn = (lambda x: F.nll_loss(x, t, w, reduction=reduction)) if name == "nll_loss" \
            else (lambda x: F.cross_entropy(x, t, w, reduction=reduction, label_smoothing=0.1 * option))
    assert gradcheck(fn, [mt.tensor(x, dtype=mt.float64, requires_grad=True)], seed=seed)
