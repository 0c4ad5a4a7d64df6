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
NO_SIGNATURE = {"softplus", "logsigmoid", "prelu", "hardshrink", "softshrink", "pairwise_distance", "softsign",
                "tanhshrink"}


@pytest.mark.parametrize("name", F_NAMES)
def test_function_signature_matches_pytorch(name):
    if name in NO_SIGNATURE:  # builtins without a Python signature: their documented one
        doc = getattr(torch.nn.functional, name).__doc__.strip().splitlines()[0]
        ours = str(inspect.signature(getattr(mt.nn.functional, name)))
        for param in doc[doc.index("(") + 1:doc.index(")")].split(","):
            assert param.strip().split("=")[0] in ours
        return
    assert _defaults(getattr(mt.nn.functional, name)) == _defaults(getattr(torch.nn.functional, name))


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
