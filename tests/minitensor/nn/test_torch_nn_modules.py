"""The nn modules and functions teaching code uses (activations, losses, normalisation, shape layers,
convolutions, pooling) against PyTorch: the same inputs (and, for modules with parameters, the
same weights copied through the state dict) give the same outputs, input gradients and parameter
gradients under a random upstream weight; state-dict keys, constructor defaults and error types
match. Small shapes, a table of cases. Skipped where PyTorch is not installed.
"""
import inspect

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _r(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape)


def _prob(*shape):
    return RNG.uniform(0.05, 0.95, shape)


def _sign(*shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


def _int(hi, *shape):
    return RNG.integers(0, hi, shape).astype(np.int64)


def _pair(a, grad):
    """(minitensor tensor, torch tensor) holding a copy of `a`."""
    a = np.asarray(a)
    rg = grad and a.dtype.kind == "f"
    return mt.tensor(a.copy(), requires_grad=rg), torch.tensor(a.copy(), requires_grad=rg)


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy(force=True)


def _compare(fn, arrays, grad=True, rtol=1e-6, atol=1e-8, modules=None, seed=0):
    """fn(lib, *tensors) on both libraries: values, then the VJP of a random upstream weight for every
    float input (or those whose positions `grad` lists; none if False), and, with `modules` = (ours,
    theirs), every parameter."""
    wanted = grad if isinstance(grad, tuple) else range(len(arrays) if grad else 0)
    pairs = [_pair(a, i in wanted) for i, a in enumerate(arrays)]
    ours = fn(mt, *[p[0] for p in pairs]) if modules is None else modules[0](*[p[0] for p in pairs])
    theirs = fn(torch, *[p[1] for p in pairs]) if modules is None else modules[1](*[p[1] for p in pairs])
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=atol)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    if not theirs.requires_grad:
        return
    u = np.random.default_rng(seed).uniform(0.5, 1.5, tuple(theirs.shape))
    ours.backward(mt.tensor(u, dtype=ours.dtype))
    theirs.backward(torch.tensor(u, dtype=theirs.dtype))
    for (a, b) in pairs:
        if b.requires_grad:
            assert b.grad is not None and a.grad is not None
            np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=rtol, atol=atol)
    if modules is not None:
        theirs_p = dict(modules[1].named_parameters())
        for name, p in modules[0].named_parameters():
            np.testing.assert_allclose(_np(p.grad), _np(theirs_p[name].grad), rtol=rtol, atol=atol, err_msg=name)


def _F(lib):
    return lib.nn.functional


# ---- functions: (id, fn(lib, *tensors), arrays) -----------------------------------------------------
X = _r(3, 4)
EDGES = np.array([[-3.0, -1.0, 0.0, 1.0, 3.0, 6.0], [-0.5, 0.5, -20.0, 25.0, 2.5, -2.5]])  # the kinks

FUNCTIONS = [
    # activations
    ("leaky_relu", lambda lib, x: _F(lib).leaky_relu(x, 0.2), [EDGES]),
    ("elu", lambda lib, x: _F(lib).elu(x, 0.7), [EDGES]),
    ("selu", lambda lib, x: _F(lib).selu(x), [EDGES]),
    ("celu", lambda lib, x: _F(lib).celu(x, 1.5), [EDGES]),
    ("softplus", lambda lib, x: _F(lib).softplus(x, 2.0, 5.0), [EDGES]),
    ("mish", lambda lib, x: _F(lib).mish(x), [EDGES]),
    ("hardtanh", lambda lib, x: _F(lib).hardtanh(x, -1.0, 3.0), [EDGES]),
    ("relu6", lambda lib, x: _F(lib).relu6(x), [EDGES]),
    ("hardsigmoid", lambda lib, x: _F(lib).hardsigmoid(x), [EDGES]),
    ("hardswish", lambda lib, x: _F(lib).hardswish(x), [EDGES]),
    ("glu", lambda lib, x: _F(lib).glu(x, 1), [X]),
    ("glu dim 0", lambda lib, x: _F(lib).glu(x, 0), [_r(4, 3)]),
    ("logsigmoid", lambda lib, x: _F(lib).logsigmoid(x), [EDGES]),
    ("prelu channels", lambda lib, x, w: _F(lib).prelu(x, w), [_r(2, 3, 4), _r(3)]),
    ("prelu one", lambda lib, x, w: _F(lib).prelu(x, w), [_r(2, 3), _r(1)]),
    ("softmin", lambda lib, x: _F(lib).softmin(x, dim=1), [X]),
    ("softsign", lambda lib, x: _F(lib).softsign(x), [EDGES]),
    ("tanhshrink", lambda lib, x: _F(lib).tanhshrink(x), [EDGES]),
    ("hardshrink", lambda lib, x: _F(lib).hardshrink(x, 0.5), [EDGES]),
    ("softshrink", lambda lib, x: _F(lib).softshrink(x, 0.5), [EDGES]),
    ("threshold", lambda lib, x: _F(lib).threshold(x, 0.5, -3.0), [EDGES]),
    ("rrelu eval", lambda lib, x: _F(lib).rrelu(x, 0.1, 0.3), [EDGES]),
    # losses
    ("binary_cross_entropy", lambda lib, x, t: _F(lib).binary_cross_entropy(x, t), [_prob(3, 4), _prob(3, 4)]),
    ("binary_cross_entropy weight sum", lambda lib, x, t, w: _F(lib).binary_cross_entropy(x, t, w, reduction="sum"),
     [_prob(3, 4), _prob(3, 4), _prob(4)], (0,)),
    ("binary_cross_entropy none", lambda lib, x, t: _F(lib).binary_cross_entropy(x, t, reduction="none"),
     [_prob(5), np.array([0.0, 1.0, 1.0, 0.0, 0.5])]),
    ("binary_cross_entropy legacy", lambda lib, x, t: _F(lib).binary_cross_entropy(x, t, size_average=False),
     [_prob(5), _prob(5)]),
    ("binary_cross_entropy_with_logits pos_weight",
     lambda lib, x, t, p: _F(lib).binary_cross_entropy_with_logits(x, t, pos_weight=p),
     [_r(3, 4), _prob(3, 4), _prob(4)], (0,)),
    ("kl_div batchmean", lambda lib, x, t: _F(lib).kl_div(x, t, reduction="batchmean"),
     [np.log(_prob(3, 4)), _prob(3, 4)]),
    ("kl_div mean", lambda lib, x, t: _F(lib).kl_div(x, t, reduction="mean"), [np.log(_prob(3, 4)), _prob(3, 4)]),
    ("kl_div sum", lambda lib, x, t: _F(lib).kl_div(x, t, reduction="sum"), [np.log(_prob(3, 4)), _prob(3, 4)]),
    ("kl_div none log_target", lambda lib, x, t: _F(lib).kl_div(x, t, reduction="none", log_target=True),
     [np.log(_prob(3, 4)), np.log(_prob(3, 4))]),
    ("kl_div zero target", lambda lib, x, t: _F(lib).kl_div(x, t, reduction="sum"),
     [np.log(_prob(4)), np.array([0.0, 0.5, 0.5, 0.0])], False),
    ("l1_loss", lambda lib, x, t: _F(lib).l1_loss(x, t), [X, _r(3, 4)]),
    ("smooth_l1_loss", lambda lib, x, t: _F(lib).smooth_l1_loss(x, t, beta=0.7), [X, _r(3, 4)]),
    ("smooth_l1_loss beta 0", lambda lib, x, t: _F(lib).smooth_l1_loss(x, t, beta=0.0, reduction="sum"),
     [X, _r(3, 4)]),
    ("huber_loss", lambda lib, x, t: _F(lib).huber_loss(x, t, delta=0.6), [X, _r(3, 4)]),
    ("huber_loss weight", lambda lib, x, t, w: _F(lib).huber_loss(x, t, "sum", 0.6, w), [X, _r(3, 4), _prob(3, 4)]),
    ("soft_margin_loss", lambda lib, x, t: _F(lib).soft_margin_loss(x, t), [X, _sign(3, 4)], (0,)),
    ("poisson_nll_loss", lambda lib, x, t: _F(lib).poisson_nll_loss(x, t), [X, _r(3, 4, lo=0, hi=4)]),
    ("poisson_nll_loss rate full", lambda lib, x, t: _F(lib).poisson_nll_loss(x, t, log_input=False, full=True),
     [_prob(3, 4) * 3, np.floor(_r(3, 4, lo=0, hi=5))], (0,)),
    ("gaussian_nll_loss", lambda lib, x, t, v: _F(lib).gaussian_nll_loss(x, t, v), [X, _r(3, 4), _prob(3, 4)]),
    ("gaussian_nll_loss row var full", lambda lib, x, t, v: _F(lib).gaussian_nll_loss(x, t, v, full=True,
                                                                                     reduction="sum"),
     [X, _r(3, 4), _prob(3)]),
    ("gaussian_nll_loss clamped var", lambda lib, x, t, v: _F(lib).gaussian_nll_loss(x, t, v, eps=0.3),
     [X, _r(3, 4), _prob(3, 1)]),
    ("margin_ranking_loss", lambda lib, a, b, y: _F(lib).margin_ranking_loss(a, b, y, margin=0.3),
     [_r(6), _r(6), _sign(6)], (0, 1)),
    ("hinge_embedding_loss", lambda lib, x, y: _F(lib).hinge_embedding_loss(x, y, margin=1.5), [X, _sign(3, 4)], (0,)),
    ("cosine_embedding_loss", lambda lib, a, b, y: _F(lib).cosine_embedding_loss(a, b, y, margin=0.1),
     [X, _r(3, 4), _sign(3)], (0, 1)),
    ("cosine_embedding_loss 1-d", lambda lib, a, b, y: _F(lib).cosine_embedding_loss(a, b, y, reduction="none"),
     [_r(4), _r(4), np.array(-1.0)], (0, 1)),
    ("pairwise_distance", lambda lib, a, b: _F(lib).pairwise_distance(a, b), [X, _r(3, 4)]),
    ("pairwise_distance p1 keepdim", lambda lib, a, b: _F(lib).pairwise_distance(a, b, p=1.0, keepdim=True),
     [X, _r(4)]),
    ("triplet_margin_loss", lambda lib, a, p, n: _F(lib).triplet_margin_loss(a, p, n, margin=2.0),
     [X, _r(3, 4), _r(3, 4)]),
    ("triplet_margin_loss swap", lambda lib, a, p, n: _F(lib).triplet_margin_loss(a, p, n, swap=True, p=1),
     [X, _r(3, 4), _r(3, 4)]),
    ("multilabel_soft_margin_loss", lambda lib, x, t, w: _F(lib).multilabel_soft_margin_loss(x, t, w),
     [X, (_r(3, 4) > 0).astype(float), _prob(4)], (0,)),
    ("multi_margin_loss", lambda lib, x, t: _F(lib).multi_margin_loss(x, t), [X, _int(4, 3)]),
    ("multi_margin_loss p2 weight", lambda lib, x, t, w: _F(lib).multi_margin_loss(x, t, p=2, margin=0.5, weight=w),
     [X, _int(4, 3), _prob(4)], (0,)),
    ("multi_margin_loss 1-d", lambda lib, x, t: _F(lib).multi_margin_loss(x, t, reduction="none"),
     [_r(4), np.array(2)]),
    # normalisation
    ("batch_norm training", lambda lib, x, w, b: _F(lib).batch_norm(x, None, None, w, b, training=True),
     [_r(4, 3, 2), _r(3), _r(3)]),
    ("batch_norm eval", lambda lib, x, m, v, w: _F(lib).batch_norm(x, m, v, w, eps=0.1),
     [_r(4, 3), _r(3), _prob(3), _r(3)], (0, 3)),
    ("instance_norm", lambda lib, x, w, b: _F(lib).instance_norm(x, weight=w, bias=b), [_r(2, 3, 5), _r(3), _r(3)]),
    ("group_norm", lambda lib, x, w, b: _F(lib).group_norm(x, 2, w, b), [_r(2, 4, 3), _r(4), _r(4)]),
    ("rms_norm", lambda lib, x, w: _F(lib).rms_norm(x, [4], w), [X, _r(4)]),
    ("rms_norm eps 2 dims", lambda lib, x: _F(lib).rms_norm(x, (3, 4), eps=0.5), [_r(2, 3, 4)]),
    ("local_response_norm", lambda lib, x: _F(lib).local_response_norm(x, 3, alpha=0.5, beta=0.7, k=1.5),
     [_r(2, 5, 3)]),
    ("local_response_norm 4-d", lambda lib, x: _F(lib).local_response_norm(x, 2), [_r(1, 4, 2, 3)]),
    # shapes, resampling, padding
    ("bilinear", lambda lib, a, b, w, c: _F(lib).bilinear(a, b, w, c), [_r(2, 3, 4), _r(2, 3, 5), _r(6, 4, 5), _r(6)]),
    ("pixel_shuffle", lambda lib, x: _F(lib).pixel_shuffle(x, 2), [_r(2, 8, 2, 3)]),
    ("pixel_unshuffle", lambda lib, x: _F(lib).pixel_unshuffle(x, 2), [_r(1, 2, 4, 6)]),
    ("channel_shuffle", lambda lib, x: _F(lib).channel_shuffle(x, 3), [_r(2, 6, 2)]),
    ("interpolate nearest size", lambda lib, x: _F(lib).interpolate(x, size=7), [_r(2, 3, 4)]),
    ("interpolate nearest scale 2d", lambda lib, x: _F(lib).interpolate(x, scale_factor=(2, 1.5)), [_r(1, 2, 3, 4)]),
    ("interpolate nearest down", lambda lib, x: _F(lib).interpolate(x, size=(2, 3)), [_r(1, 2, 5, 7)]),
    ("interpolate linear", lambda lib, x: _F(lib).interpolate(x, size=7, mode="linear"), [_r(2, 3, 4)]),
    ("interpolate linear corners", lambda lib, x: _F(lib).interpolate(x, scale_factor=2.5, mode="linear",
                                                                      align_corners=True), [_r(2, 3, 4)]),
    ("interpolate bilinear", lambda lib, x: _F(lib).interpolate(x, size=(5, 3), mode="bilinear"), [_r(1, 2, 3, 4)]),
    ("interpolate bilinear corners", lambda lib, x: _F(lib).interpolate(x, scale_factor=2, mode="bilinear",
                                                                        align_corners=True), [_r(1, 2, 3, 4)]),
    ("interpolate bilinear down", lambda lib, x: _F(lib).interpolate(x, size=(2, 3), mode="bilinear"),
     [_r(1, 2, 5, 7)]),
    ("pad reflect", lambda lib, x: _F(lib).pad(x, (2, 1), mode="reflect"), [_r(2, 4)]),
    ("pad reflect 2d crop", lambda lib, x: _F(lib).pad(x, (1, -1, 2, 2), mode="reflect"), [_r(1, 2, 3, 4)]),
    ("pad replicate", lambda lib, x: _F(lib).pad(x, (3, 1, 0, 2), mode="replicate"), [_r(2, 3, 4)]),
    ("pad circular", lambda lib, x: _F(lib).pad(x, (3, 2), mode="circular"), [_r(1, 2, 3)]),
    ("pad circular 2d", lambda lib, x: _F(lib).pad(x, (1, 2, 2, 0), mode="circular"), [_r(1, 2, 3, 3)]),
    # convolutions and pooling
    ("conv2d", lambda lib, x, w, b: _F(lib).conv2d(x, w, b), [_r(2, 3, 5, 4), _r(4, 3, 3, 2), _r(4)]),
    ("conv2d stride pad dilation", lambda lib, x, w: _F(lib).conv2d(x, w, None, (2, 1), (1, 2), (1, 2)),
     [_r(1, 2, 6, 5), _r(3, 2, 2, 3)]),
    ("conv2d same groups", lambda lib, x, w, b: _F(lib).conv2d(x, w, b, padding="same", groups=2, dilation=2),
     [_r(2, 4, 5, 5), _r(6, 2, 2, 3), _r(6)]),
    ("conv2d valid unbatched", lambda lib, x, w: _F(lib).conv2d(x, w, padding="valid"), [_r(2, 4, 4), _r(1, 2, 3, 3)]),
    ("conv1d", lambda lib, x, w, b: _F(lib).conv1d(x, w, b, stride=2, padding=1), [_r(2, 3, 7), _r(4, 3, 3), _r(4)]),
    ("conv1d same groups", lambda lib, x, w: _F(lib).conv1d(x, w, padding="same", groups=3),
     [_r(1, 3, 6), _r(3, 1, 4)]),
    ("unfold", lambda lib, x: _F(lib).unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)), [_r(2, 2, 4, 5)]),
    ("fold", lambda lib, x: _F(lib).fold(x, (4, 5), 2, padding=1, stride=2), [_r(2, 3 * 4, 9)]),
    ("fold overlapping", lambda lib, x: _F(lib).fold(x, (3, 4), (2, 2)), [_r(1, 2 * 4, 6)]),
    ("max_pool2d", lambda lib, x: _F(lib).max_pool2d(x, 2), [_r(2, 3, 4, 5)]),
    ("max_pool2d overlap pad ceil", lambda lib, x: _F(lib).max_pool2d(x, 3, 2, 1, ceil_mode=True),
     [_r(1, 2, 6, 5)]),
    ("max_pool2d dilation", lambda lib, x: _F(lib).max_pool2d(x, (2, 2), 1, dilation=2), [_r(1, 2, 5, 5)]),
    ("max_pool2d ties", lambda lib, x: _F(lib).max_pool2d(x, 2, 1), [np.round(_r(1, 1, 4, 4))]),
    ("max_pool1d", lambda lib, x: _F(lib).max_pool1d(x, 3, 2, 1), [_r(2, 3, 8)]),
    ("avg_pool2d", lambda lib, x: _F(lib).avg_pool2d(x, 2), [_r(2, 3, 4, 5)]),
    ("avg_pool2d pad exclude ceil", lambda lib, x: _F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                                      count_include_pad=False), [_r(1, 2, 6, 5)]),
    ("avg_pool2d pad include ceil", lambda lib, x: _F(lib).avg_pool2d(x, 3, 2, 1, ceil_mode=True), [_r(1, 2, 6, 5)]),
    ("avg_pool2d divisor", lambda lib, x: _F(lib).avg_pool2d(x, 2, divisor_override=3), [_r(1, 2, 4, 4)]),
    ("avg_pool1d", lambda lib, x: _F(lib).avg_pool1d(x, 3, 2, 1, count_include_pad=False), [_r(2, 3, 8)]),
    ("adaptive_avg_pool2d", lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (3, 2)), [_r(2, 3, 7, 5)]),
    ("adaptive_avg_pool2d none", lambda lib, x: _F(lib).adaptive_avg_pool2d(x, (None, 4)), [_r(1, 2, 3, 6)]),
    ("adaptive_avg_pool1d", lambda lib, x: _F(lib).adaptive_avg_pool1d(x, 4), [_r(2, 3, 7)]),
    ("adaptive_max_pool2d", lambda lib, x: _F(lib).adaptive_max_pool2d(x, (3, 2)), [_r(2, 3, 7, 5)]),
    ("adaptive_max_pool1d", lambda lib, x: _F(lib).adaptive_max_pool1d(x, 3), [_r(2, 3, 7)]),
    ("cosine_similarity", lambda lib, a, b: _F(lib).cosine_similarity(a, b), [X, _r(3, 4)]),
    ("normalize", lambda lib, a: _F(lib).normalize(a, p=1.0, dim=0), [X]),
]


@pytest.mark.filterwarnings("ignore:reduction. 'mean':UserWarning")  # PyTorch's note on kl_div's 'mean'
@pytest.mark.parametrize("case", FUNCTIONS, ids=[c[0] for c in FUNCTIONS])
def test_function_matches_pytorch(case):
    _, fn, arrays, *grad = case
    _compare(fn, arrays, grad=grad[0] if grad else True)


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "mish", "hardswish", "logsigmoid", "softplus"])
def test_float32_activation_matches_pytorch(name):
    _compare(lambda lib, x: getattr(_F(lib), name)(x), [EDGES.astype(np.float32)], rtol=1e-5, atol=1e-6)


# ---- modules: (id, constructor(lib), input arrays) ---------------------------------------------------
MODULES = [
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.3), [EDGES]),
    ("ELU", lambda nn: nn.ELU(), [EDGES]),
    ("SELU", lambda nn: nn.SELU(), [EDGES]),
    ("CELU", lambda nn: nn.CELU(0.5), [EDGES]),
    ("Softplus", lambda nn: nn.Softplus(beta=2.0, threshold=3.0), [EDGES]),
    ("Mish", lambda nn: nn.Mish(), [EDGES]),
    ("Hardtanh", lambda nn: nn.Hardtanh(-2.0, 2.0), [EDGES]),
    ("ReLU6", lambda nn: nn.ReLU6(), [EDGES]),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid(), [EDGES]),
    ("Hardswish", lambda nn: nn.Hardswish(), [EDGES]),
    ("GLU", lambda nn: nn.GLU(), [EDGES]),
    ("LogSigmoid", lambda nn: nn.LogSigmoid(), [EDGES]),
    ("PReLU", lambda nn: nn.PReLU(), [EDGES]),
    ("PReLU channels", lambda nn: nn.PReLU(3, init=0.1), [_r(2, 3, 5)]),
    ("Softmin", lambda nn: nn.Softmin(dim=0), [X]),
    ("Softsign", lambda nn: nn.Softsign(), [EDGES]),
    ("Tanhshrink", lambda nn: nn.Tanhshrink(), [EDGES]),
    ("Hardshrink", lambda nn: nn.Hardshrink(0.7), [EDGES]),
    ("Softshrink", lambda nn: nn.Softshrink(), [EDGES]),
    ("Threshold", lambda nn: nn.Threshold(0.1, 20.0), [EDGES]),
    ("RReLU eval", lambda nn: nn.RReLU().eval(), [EDGES]),
    ("SiLU", lambda nn: nn.SiLU(), [EDGES]),
    ("BCELoss", lambda nn: nn.BCELoss(), [_prob(3, 4), _prob(3, 4)]),
    ("BCEWithLogitsLoss", lambda nn: nn.BCEWithLogitsLoss(reduction="sum"), [X, _prob(3, 4)]),
    ("KLDivLoss", lambda nn: nn.KLDivLoss(reduction="batchmean"), [np.log(_prob(3, 4)), _prob(3, 4)]),
    ("KLDivLoss log_target", lambda nn: nn.KLDivLoss(reduction="sum", log_target=True),
     [np.log(_prob(3, 4)), np.log(_prob(3, 4))]),
    ("L1Loss", lambda nn: nn.L1Loss(), [X, _r(3, 4)]),
    ("SmoothL1Loss", lambda nn: nn.SmoothL1Loss(beta=0.5), [X, _r(3, 4)]),
    ("HuberLoss", lambda nn: nn.HuberLoss(delta=0.5), [X, _r(3, 4)]),
    ("NLLLoss", lambda nn: nn.NLLLoss(), [np.log(_prob(3, 4)), _int(4, 3)]),
    ("SoftMarginLoss", lambda nn: nn.SoftMarginLoss(), [X, _sign(3, 4)], (0,)),
    ("PoissonNLLLoss", lambda nn: nn.PoissonNLLLoss(), [X, _r(3, 4, lo=0, hi=3)]),
    ("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(), [X, _r(3, 4), _prob(3, 4)]),
    ("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(0.2), [_r(5), _r(5), _sign(5)]),
    ("HingeEmbeddingLoss", lambda nn: nn.HingeEmbeddingLoss(), [X, _sign(3, 4)], (0,)),
    ("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(), [X, _r(3, 4), _sign(3)], (0, 1)),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(), [X, _r(3, 4), _r(3, 4)]),
    ("MultiLabelSoftMarginLoss", lambda nn: nn.MultiLabelSoftMarginLoss(), [X, (_r(3, 4) > 0).astype(float)]),
    ("MultiMarginLoss", lambda nn: nn.MultiMarginLoss(), [X, _int(4, 3)]),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(3), [_r(4, 3)]),
    ("BatchNorm1d 3-d no affine", lambda nn: nn.BatchNorm1d(3, affine=False, momentum=None), [_r(4, 3, 2)]),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(2, eps=0.01), [_r(2, 2, 3, 3)]),
    ("BatchNorm2d eval", lambda nn: nn.BatchNorm2d(2).eval(), [_r(2, 2, 3, 3)]),
    ("BatchNorm2d no stats", lambda nn: nn.BatchNorm2d(2, track_running_stats=False).eval(), [_r(2, 2, 3, 3)]),
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3), [_r(2, 3, 4)]),
    ("InstanceNorm1d unbatched affine", lambda nn: nn.InstanceNorm1d(3, affine=True), [_r(3, 4)]),
    ("InstanceNorm2d stats", lambda nn: nn.InstanceNorm2d(2, track_running_stats=True, affine=True),
     [_r(2, 2, 3, 3)]),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), [_r(2, 4, 3)]),
    ("RMSNorm", lambda nn: nn.RMSNorm(4), [X]),
    ("RMSNorm eps", lambda nn: nn.RMSNorm([3, 4], eps=1e-3, elementwise_affine=False), [_r(2, 3, 4)]),
    ("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(3), [_r(2, 4, 3)]),
    ("Flatten", lambda nn: nn.Flatten(), [_r(2, 3, 4)]),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 2)), [_r(3, 4)]),
    ("Dropout1d eval", lambda nn: nn.Dropout1d().eval(), [_r(2, 3, 4)]),
    ("Dropout2d p0", lambda nn: nn.Dropout2d(p=0.0), [_r(2, 3, 4, 2)]),
    ("AlphaDropout eval", lambda nn: nn.AlphaDropout(0.2).eval(), [_r(2, 3)]),
    ("Identity", lambda nn: nn.Identity(3, k=4), [_r(2, 3)]),
    ("Bilinear", lambda nn: nn.Bilinear(3, 4, 2), [_r(5, 3), _r(5, 4)]),
    ("PixelShuffle", lambda nn: nn.PixelShuffle(2), [_r(1, 4, 2, 3)]),
    ("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(3), [_r(1, 1, 3, 6)]),
    ("ChannelShuffle", lambda nn: nn.ChannelShuffle(2), [_r(1, 4, 2, 2)]),
    ("Upsample", lambda nn: nn.Upsample(scale_factor=2), [_r(1, 2, 3)]),
    ("Upsample bilinear", lambda nn: nn.Upsample(size=(4, 5), mode="bilinear", align_corners=False),
     [_r(1, 2, 3, 3)]),
    ("ZeroPad1d", lambda nn: nn.ZeroPad1d((1, 2)), [_r(2, 3)]),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d(1), [_r(1, 2, 3)]),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, 3.5), [_r(2, 3)]),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d((1, 0, 2, 1), -1.0), [_r(1, 2, 3)]),
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d(2), [_r(1, 2, 4)]),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d((1, 2, 0, 1)), [_r(1, 2, 3, 4)]),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d((3, 0)), [_r(1, 2, 2)]),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d(2), [_r(2, 2, 3)]),
    ("Conv2d", lambda nn: nn.Conv2d(3, 4, 3), [_r(2, 3, 5, 5)]),
    ("Conv2d options", lambda nn: nn.Conv2d(4, 6, (2, 3), stride=(2, 1), padding=1, dilation=(1, 2), groups=2,
                                            bias=False), [_r(1, 4, 5, 6)]),
    ("Conv2d same reflect", lambda nn: nn.Conv2d(2, 3, 3, padding="same", padding_mode="reflect"), [_r(1, 2, 4, 4)]),
    ("Conv2d circular", lambda nn: nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular"), [_r(1, 2, 4, 4)]),
    ("Conv1d", lambda nn: nn.Conv1d(3, 2, 3, padding=2, dilation=2), [_r(2, 3, 6)]),
    ("Conv1d replicate", lambda nn: nn.Conv1d(2, 2, 2, padding=1, padding_mode="replicate"), [_r(1, 2, 5)]),
    ("Unfold", lambda nn: nn.Unfold(2, stride=2), [_r(1, 2, 4, 4)]),
    ("Fold", lambda nn: nn.Fold((3, 3), 2), [_r(1, 8, 4)]),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), [_r(2, 3, 4, 4)]),
    ("MaxPool2d options", lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), [_r(1, 2, 5, 5)]),
    ("MaxPool1d", lambda nn: nn.MaxPool1d(2), [_r(2, 3, 5)]),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(2, padding=1), [_r(2, 3, 4, 4)]),
    ("AvgPool1d", lambda nn: nn.AvgPool1d(3, ceil_mode=True), [_r(2, 3, 7)]),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d(1), [_r(2, 3, 4, 5)]),
    ("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(2), [_r(2, 3, 5)]),
    ("AdaptiveMaxPool2d", lambda nn: nn.AdaptiveMaxPool2d((2, 3)), [_r(2, 3, 4, 5)]),
    ("AdaptiveMaxPool1d", lambda nn: nn.AdaptiveMaxPool1d(2), [_r(2, 3, 5)]),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(dim=0), [X, _r(3, 4)]),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(p=3.0), [X, _r(3, 4)]),
]


def _both(make):
    """Our module and PyTorch's, both float64, ours holding PyTorch's state dict."""
    theirs = make(torch.nn).double()
    ours = make(mt.nn).double()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: mt.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("case", MODULES, ids=[c[0] for c in MODULES])
def test_module_matches_pytorch(case):
    _, make, arrays, *grad = case
    ours, theirs = _both(make)
    assert repr(ours) == repr(theirs)
    _compare(None, arrays, grad=grad[0] if grad else True, modules=(ours, theirs))


def _defaults(fn):
    sig = inspect.signature(fn)
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()
            if p.name not in ("device", "dtype", "_stacklevel")]


# NLLLoss keeps minitensor's older (weight, ignore_index, reduction) order, without the deprecated flags
NAMES = sorted({c[0].split(" ")[0] for c in MODULES} - {"NLLLoss"})


@pytest.mark.parametrize("name", NAMES)
def test_module_constructor_signature_matches_pytorch(name):
    assert _defaults(getattr(mt.nn, name).__init__) == _defaults(getattr(torch.nn, name).__init__)


F_NAMES = sorted({c[0].split(" ")[0] for c in FUNCTIONS} - {"cosine_similarity", "normalize", "l1_loss"})


def _documented(fn):
    """(name, default) of each parameter of a PyTorch builtin, from the signature its docstring opens with."""
    head = fn.__doc__.strip().splitlines()[0]
    params = [p.strip() for p in head[head.index("(") + 1:head.index(")")].split(",")]
    return [(p.split("=")[0], eval(p.split("=")[1]) if "=" in p else inspect.Parameter.empty) for p in params]


@pytest.mark.parametrize("name", F_NAMES)
def test_function_signature_matches_pytorch(name):
    ours, theirs = getattr(mt.nn.functional, name), getattr(torch.nn.functional, name)
    try:
        sig = inspect.signature(theirs)
        builtin = any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())
    except ValueError:
        builtin = True
    if builtin:  # a builtin, or a dispatcher taking *args: the signature its docstring documents
        assert [(p.name, p.default) for p in inspect.signature(ours).parameters.values()] == _documented(theirs)
        return
    assert _defaults(ours) == _defaults(theirs)


# ---- errors: the same exception type as PyTorch on bad shapes and arguments --------------------------
ERRORS = [
    ("bce target size", lambda lib: _F(lib).binary_cross_entropy(lib.full((3,), 0.5), lib.full((2,), 0.5))),
    ("bce input range", lambda lib: _F(lib).binary_cross_entropy(lib.full((3,), 1.5), lib.full((3,), 0.5))),
    ("kl_div reduction", lambda lib: _F(lib).kl_div(lib.zeros(3), lib.zeros(3), reduction="avg")),
    ("smooth_l1 beta", lambda lib: _F(lib).smooth_l1_loss(lib.zeros(3), lib.zeros(3), beta=-1.0)),
    ("glu odd", lambda lib: _F(lib).glu(lib.zeros(2, 3))),
    ("glu 0-d", lambda lib: _F(lib).glu(lib.zeros(()))),
    ("prelu channels", lambda lib: _F(lib).prelu(lib.zeros(2, 4), lib.zeros(3))),
    ("softshrink lambd", lambda lib: _F(lib).softshrink(lib.zeros(3), -1.0)),
    ("multi_margin p", lambda lib: _F(lib).multi_margin_loss(lib.zeros(2, 3), lib.zeros(2, dtype=lib.int64), p=3)),
    ("gaussian var size", lambda lib: _F(lib).gaussian_nll_loss(lib.zeros(3, 4), lib.zeros(3, 4), lib.ones(2))),
    ("gaussian var negative", lambda lib: _F(lib).gaussian_nll_loss(lib.zeros(3), lib.zeros(3), -lib.ones(3))),
    ("triplet ndim", lambda lib: _F(lib).triplet_margin_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(3))),
    ("margin_ranking ndim", lambda lib: _F(lib).margin_ranking_loss(lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(3))),
    ("triplet margin", lambda lib: lib.nn.TripletMarginLoss(margin=0.0)),
    ("multi_margin weight", lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2))),
    ("batch_norm one value", lambda lib: _F(lib).batch_norm(lib.zeros(1, 3), None, None, training=True)),
    ("batch_norm features", lambda lib: _F(lib).batch_norm(lib.zeros(2, 3), lib.zeros(4), lib.ones(4))),
    ("BatchNorm2d dims", lambda lib: lib.nn.BatchNorm2d(3)(lib.zeros(2, 3))),
    ("BatchNorm1d dims", lambda lib: lib.nn.BatchNorm1d(3)(lib.zeros(2, 3, 4, 5))),
    ("GroupNorm divisible", lambda lib: lib.nn.GroupNorm(3, 4)),
    ("group_norm divisible", lambda lib: _F(lib).group_norm(lib.zeros(2, 4), 3)),
    ("local_response_norm dims", lambda lib: _F(lib).local_response_norm(lib.zeros(2, 4), 2)),
    ("pixel_shuffle channels", lambda lib: _F(lib).pixel_shuffle(lib.zeros(1, 3, 2, 2), 2)),
    ("channel_shuffle groups", lambda lib: _F(lib).channel_shuffle(lib.zeros(1, 5, 2), 2)),
    ("interpolate both", lambda lib: _F(lib).interpolate(lib.zeros(1, 2, 3), size=4, scale_factor=2.0)),
    ("interpolate neither", lambda lib: _F(lib).interpolate(lib.zeros(1, 2, 3))),
    ("interpolate nearest corners", lambda lib: _F(lib).interpolate(lib.zeros(1, 2, 3), size=4, align_corners=True)),
    ("interpolate linear 4-d", lambda lib: _F(lib).interpolate(lib.zeros(1, 2, 3, 3), size=4, mode="linear")),
    ("pad reflect too wide", lambda lib: _F(lib).pad(lib.zeros(1, 2, 3), (3, 3), mode="reflect")),
    ("pad reflect 1-d", lambda lib: _F(lib).pad(lib.zeros(3), (1, 1), mode="reflect")),
    ("pad circular wraps twice", lambda lib: _F(lib).pad(lib.zeros(1, 2, 3), (4, 0), mode="circular")),
    ("conv2d channels", lambda lib: _F(lib).conv2d(lib.zeros(1, 2, 5, 5), lib.zeros(4, 3, 3, 3))),
    ("conv2d kernel too big", lambda lib: _F(lib).conv2d(lib.zeros(1, 2, 2, 2), lib.zeros(4, 2, 3, 3))),
    ("conv2d same strided", lambda lib: _F(lib).conv2d(lib.zeros(1, 2, 5, 5), lib.zeros(4, 2, 3, 3), stride=2,
                                                         padding="same")),
    ("conv2d padding string", lambda lib: _F(lib).conv2d(lib.zeros(1, 2, 5, 5), lib.zeros(4, 2, 3, 3),
                                                           padding="full")),
    ("conv1d dims", lambda lib: _F(lib).conv1d(lib.zeros(1, 2, 5, 5), lib.zeros(4, 2, 3))),
    ("Conv2d groups", lambda lib: lib.nn.Conv2d(3, 4, 3, groups=2)),
    ("Conv2d same strided", lambda lib: lib.nn.Conv2d(3, 4, 3, stride=2, padding="same")),
    ("Conv2d padding_mode", lambda lib: lib.nn.Conv2d(3, 4, 3, padding_mode="mirror")),
    ("max_pool2d pad", lambda lib: _F(lib).max_pool2d(lib.zeros(1, 2, 5, 5), 2, padding=2)),
    ("fold blocks", lambda lib: _F(lib).fold(lib.zeros(1, 8, 5), (3, 3), 2)),
    ("dropout1d dims", lambda lib: _F(lib).dropout1d(lib.zeros(1, 2, 3, 4))),
    ("dropout2d p", lambda lib: _F(lib).dropout2d(lib.zeros(1, 2, 3, 4), p=1.5)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_error_type_matches_pytorch(case):
    _, fn = case
    with pytest.raises(Exception) as theirs:
        fn(torch)
    with pytest.raises(type(theirs.value)):
        fn(mt)


def test_rrelu_training_draws_slopes_in_range_with_minitensors_generator():
    x = mt.tensor(-np.ones(2000), requires_grad=True)
    mt.manual_seed(3)
    out = mt.nn.RReLU(0.1, 0.3)(x)
    slopes = -out.numpy(force=True)
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.05
    mt.manual_seed(3)
    np.testing.assert_array_equal(mt.nn.RReLU(0.1, 0.3)(x).numpy(force=True), out.numpy(force=True))
    out.backward(mt.ones(2000))
    np.testing.assert_allclose(x.grad.numpy(), slopes)  # the gradient uses the same slopes


@pytest.mark.parametrize("momentum", [0.1, None, 0.5])
@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (5, 3)), ("BatchNorm2d", (2, 3, 2, 2)),
                                         ("InstanceNorm1d", (2, 3, 4))])
def test_running_statistics_match_pytorch(name, shape, momentum):
    """Three training steps (momentum=None: the cumulative average), then eval() uses the running statistics."""
    kw = {"track_running_stats": True} if name.startswith("Instance") else {}
    if momentum is None and name.startswith("Instance"):
        return  # PyTorch's InstanceNorm takes a float momentum only
    ours, theirs = _both(lambda nn: getattr(nn, name)(3, momentum=momentum, **kw))
    for step in range(3):
        _compare(None, [_r(*shape) * (step + 1) + step], modules=(ours, theirs))
    theirs_buffers = dict(theirs.named_buffers())
    for key, buf in ours.named_buffers():
        np.testing.assert_allclose(_np(buf), _np(theirs_buffers[key]), rtol=1e-12, err_msg=key)
        assert str(buf.dtype).split(".")[-1] == str(theirs_buffers[key].dtype).split(".")[-1]
    ours.eval(), theirs.eval()
    _compare(None, [_r(*shape)], modules=(ours, theirs))


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d"])
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(name):
    x = mt.ones(40, 50, 3, 2, requires_grad=True) if name == "dropout2d" else mt.ones(40, 50, 6, requires_grad=True)
    out = getattr(mt.nn.functional, name)(x, p=0.25)
    per_channel = out.numpy(force=True).reshape(40, 50, -1)
    assert set(np.unique(per_channel)) <= {0.0, np.float32(1 / 0.75)}
    assert (per_channel.min(axis=2) == per_channel.max(axis=2)).all()  # a channel is dropped whole
    assert 0.15 < (per_channel[..., 0] == 0).mean() < 0.35
    out.backward(mt.ones(*out.shape))
    np.testing.assert_array_equal(x.grad.numpy(), out.numpy(force=True))


def test_alpha_dropout_keeps_mean_and_variance_of_standard_inputs():
    x = mt.tensor(RNG.standard_normal(200_000))
    out = mt.nn.functional.alpha_dropout(x, p=0.3, training=True).numpy(force=True)
    assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02
    assert np.isclose(out, -1.7580993408473766 * ((0.7 * (1 + 0.3 * 1.7580993408473766 ** 2)) ** -0.5)
                      + 1.7580993408473766 * 0.3 * ((0.7 * (1 + 0.3 * 1.7580993408473766 ** 2)) ** -0.5)).any()


def test_parameter_dict_registers_parameters_under_their_keys():
    pd = mt.nn.ParameterDict({"a": mt.nn.Parameter(mt.ones(2)), "b": mt.zeros(3)})
    tp = torch.nn.ParameterDict({"a": torch.nn.Parameter(torch.ones(2)), "b": torch.zeros(3)})
    assert list(pd.state_dict()) == list(tp.state_dict()) == ["a", "b"]
    assert isinstance(pd["b"], mt.nn.Parameter) and isinstance(tp["b"], torch.nn.Parameter)
    assert len(pd) == 2 and "a" in pd and [k for k, _ in pd.named_parameters()] == ["a", "b"]
    pd.update([("c", mt.ones(1))])
    assert list(pd) == ["a", "b", "c"] and pd.get("z") is None


def test_conv_default_init_is_pytorchs_kaiming_uniform():
    """The weight's and bias's bounds: kaiming_uniform_(a=sqrt(5)) gives 1/sqrt(fan_in), as the bias's."""
    mt.manual_seed(0)
    conv = mt.nn.Conv2d(4, 8, (3, 2), groups=2)
    fan_in = 2 * 3 * 2
    for p in (conv.weight, conv.bias):
        a = p.numpy(force=True)
        assert np.abs(a).max() <= 1 / np.sqrt(fan_in) and np.abs(a).max() > 0.6 / np.sqrt(fan_in)
    assert tuple(conv.weight.shape) == tuple(torch.nn.Conv2d(4, 8, (3, 2), groups=2).weight.shape)


@pytest.mark.parametrize("fn, args", [("max_pool2d", (3, 2, 1)), ("max_pool1d", (2, 1)),
                                      ("adaptive_max_pool2d", ((2, 3),)), ("adaptive_max_pool1d", (3,))])
def test_max_pool_indices_match_pytorch(fn, args):
    x = _r(2, 2, 5, 6) if fn.endswith("2d") else _r(2, 2, 7)
    ours = getattr(mt.nn.functional, fn)(mt.tensor(x), *args, return_indices=True)
    theirs = getattr(torch.nn.functional, fn)(torch.tensor(x), *args, return_indices=True)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy())
