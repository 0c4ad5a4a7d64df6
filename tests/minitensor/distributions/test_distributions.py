"""minitensor.distributions without PyTorch: sample statistics, repeatability under manual_seed,
finite-difference gradients of log_prob / entropy / rsample in the parameters, shapes and errors."""
import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.distributions as D
from minitensor.autograd import gradcheck

F64 = mt.float64


def t(x, grad=False):
    return mt.tensor(np.asarray(x, dtype=np.float64), dtype=F64, requires_grad=grad)


# name: (make(*params), params, a value inside the support of shape batch_shape)
CASES = {
    "Normal": (D.Normal, ([0.3, -1.0], [1.5, 0.7]), [0.1, -2.0]),
    "Uniform": (D.Uniform, ([0.0, -1.0], [2.0, 0.5]), [1.3, 0.2]),
    "Exponential": (D.Exponential, ([0.5, 2.0],), [1.2, 0.3]),
    "Laplace": (D.Laplace, ([0.3, -1.0], [1.5, 0.7]), [0.1, -2.0]),
    "Gumbel": (D.Gumbel, ([0.3, -1.0], [1.5, 0.7]), [0.1, -2.0]),
    "LogNormal": (D.LogNormal, ([0.3, -1.0], [0.5, 0.7]), [1.1, 0.4]),
    "Gamma": (D.Gamma, ([2.0, 0.7], [1.5, 3.0]), [1.1, 0.4]),
    "Beta": (D.Beta, ([2.0, 0.7], [1.5, 3.0]), [0.6, 0.1]),
    "Bernoulli": (lambda p: D.Bernoulli(probs=p), ([0.3, 0.8],), [1.0, 0.0]),
    "BernoulliLogits": (lambda lg: D.Bernoulli(logits=lg), ([0.3, -2.0],), [1.0, 0.0]),
    "Geometric": (lambda p: D.Geometric(probs=p), ([0.3, 0.8],), [3.0, 0.0]),
    "Poisson": (D.Poisson, ([2.5, 0.4],), [3.0, 0.0]),
    "Binomial": (lambda p: D.Binomial(6, probs=p), ([0.3, 0.8],), [2.0, 6.0]),
    "Categorical": (lambda p: D.Categorical(probs=p), ([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]],), [2, 0]),
    "CategoricalLogits": (lambda lg: D.Categorical(logits=lg), ([[0.2, -1.3, 0.5], [1.6, 0.1, 0.3]],), [1, 2]),
    "OneHot": (lambda p: D.OneHotCategorical(probs=p), ([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]],),
               [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]),
    "Dirichlet": (D.Dirichlet, ([[2.0, 0.7, 1.5], [1.0, 3.0, 0.5]],), [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
    "MVN": (lambda loc, tril: D.MultivariateNormal(loc, scale_tril=tril),
            ([0.3, -1.0], [[1.5, 0.0], [0.4, 0.7]]), [0.1, -2.0]),
    "MVNCov": (lambda loc, cov: D.MultivariateNormal(loc, covariance_matrix=cov),
               ([0.3, -1.0], [[2.0, 0.4], [0.4, 0.9]]), [0.1, -2.0]),
    "MVNPrec": (lambda loc, prec: D.MultivariateNormal(loc, precision_matrix=prec),
                ([0.3, -1.0], [[2.0, 0.4], [0.4, 0.9]]), [0.1, -2.0]),
    "Independent": (lambda loc, s: D.Independent(D.Normal(loc, s), 1), ([0.3, -1.0], [1.5, 0.7]), [0.1, -2.0]),
}
NO_ENTROPY = {"Poisson"}
SYMMETRIC = {"MVNCov", "MVNPrec"}  # the matrix must stay symmetric: perturb through a symmetric map


def _build(name, params):
    make = CASES[name][0]
    if name in SYMMETRIC:  # a symmetric function of the free entries, so finite differences stay on the manifold
        loc, m = params
        return make(loc, (m + m.transpose(-2, -1)) / 2)
    if name == "MVN":  # only the lower triangle is free
        return make(params[0], params[1].tril())
    return make(*params)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_gradient_matches_finite_differences(name):
    _, params, value = CASES[name]
    inputs = [t(p, grad=True) for p in params]
    v = mt.tensor(value) if name.startswith("Categorical") else t(value)
    assert gradcheck(lambda *ps: _build(name, ps).log_prob(v), inputs)


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_ENTROPY))
def test_entropy_gradient_matches_finite_differences(name):
    _, params, _ = CASES[name]
    inputs = [t(p, grad=True) for p in params]
    assert gradcheck(lambda *ps: _build(name, ps).entropy(), inputs)


RSAMPLE = ["Normal", "Uniform", "Exponential", "Laplace", "Gumbel", "LogNormal", "MVN", "MVNCov", "Independent"]


@pytest.mark.parametrize("name", RSAMPLE)
def test_rsample_gradient_matches_finite_differences(name):
    _, params, _ = CASES[name]
    inputs = [t(p, grad=True) for p in params]

    def draw(*ps):
        mt.manual_seed(3)  # the same noise every call: rsample is then a smooth function of the parameters
        return _build(name, ps).rsample((4,))

    assert _build(name, inputs).has_rsample
    assert gradcheck(draw, inputs)


@pytest.mark.parametrize("name", ["Normal", "Exponential", "Laplace", "Gumbel", "Uniform", "LogNormal"])
def test_cdf_icdf_roundtrip_and_gradient(name):
    _, params, value = CASES[name]
    inputs = [t(p, grad=True) for p in params]
    d = _build(name, inputs)
    assert np.allclose(d.icdf(d.cdf(t(value))).detach().numpy(), value, atol=1e-7)
    assert gradcheck(lambda *ps: _build(name, ps).cdf(t(value)), inputs)
    assert gradcheck(lambda *ps: _build(name, ps).icdf(t([0.3, 0.9])), inputs)


STATS = ["Normal", "Uniform", "Exponential", "Laplace", "Gumbel", "LogNormal", "Gamma", "Beta", "Bernoulli",
         "Geometric", "Poisson", "Binomial", "OneHot", "Dirichlet", "MVN", "Independent"]


@pytest.mark.parametrize("name", STATS)
def test_sample_mean_and_variance_match_the_moments(name):
    _, params, _ = CASES[name]
    d = _build(name, [t(p) for p in params])
    mt.manual_seed(0)
    x = d.sample((20000,)).numpy()
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    se = np.sqrt(var / 20000)
    assert np.all(np.abs(x.mean(0) - mean) < 5 * se + 1e-12), (x.mean(0), mean)
    assert np.allclose(x.var(0), var, rtol=0.1), (x.var(0), var)


def test_categorical_sample_frequencies():
    p = np.array([0.1, 0.0, 0.6, 0.3])
    mt.manual_seed(1)
    x = D.Categorical(probs=t(p)).sample((20000,)).numpy()
    assert x.dtype == np.int64
    freq = np.bincount(x, minlength=4) / 20000
    assert freq[1] == 0 and np.allclose(freq, p, atol=0.015)


@pytest.mark.parametrize("name", STATS + ["Categorical"])
def test_samples_repeat_under_manual_seed_and_have_the_extended_shape(name):
    _, params, _ = CASES[name]
    d = _build(name, [t(p) for p in params])
    mt.manual_seed(5)
    a = d.sample((3, 2))
    mt.manual_seed(5)
    b = d.sample((3, 2))
    assert tuple(a.shape) == (3, 2) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert np.array_equal(a.numpy(), b.numpy())
    assert not a.requires_grad


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet"])
def test_implicit_reparameterisation_gradient_is_unbiased(name):
    # d/dθ E[f(x)] estimated by the mean of rsample's gradients must match the exact derivative of the mean
    _, params, _ = CASES[name]
    inputs = [t(p, grad=True) for p in params]
    d = _build(name, inputs)
    mt.manual_seed(2)
    x = d.rsample((4000,))  # seeded, so not flaky; the tolerance is ~4 standard errors
    w = t(np.random.default_rng(0).normal(size=tuple(x.shape[1:])))
    (x * w).mean(0).sum().backward()
    expected = mt.autograd.grad((_build(name, inputs).mean * w).sum(), inputs)
    for got, exp in zip(inputs, expected):
        assert np.allclose(got.grad.numpy(), exp.numpy(), atol=0.06, rtol=0.08), (got.grad, exp)


def test_probs_and_logits_derive_each_other():
    logits = t([[1.0, 2.0, 0.5]])
    c = D.Categorical(logits=logits)
    assert np.allclose(c.logits.numpy(), logits.numpy() - np.log(np.exp(logits.numpy()).sum()))
    assert np.allclose(c.probs.numpy().sum(-1), 1)
    c2 = D.Categorical(probs=t([[2.0, 6.0]]))
    assert np.allclose(c2.probs.numpy(), [[0.25, 0.75]]) and np.allclose(c2.logits.numpy(), np.log([[0.25, 0.75]]))
    b = D.Bernoulli(logits=t(0.0))
    assert b.probs.item() == 0.5


@pytest.mark.parametrize("make", [
    lambda: D.Normal(0.0, -1.0), lambda: D.Normal(t(math.nan), 1.0), lambda: D.Uniform(1.0, 0.0),
    lambda: D.Bernoulli(probs=t(1.5)), lambda: D.Categorical(probs=t([0.5, -0.1])), lambda: D.Exponential(0.0),
    lambda: D.Gamma(-1.0, 1.0), lambda: D.Poisson(-0.5), lambda: D.Dirichlet(t([1.0, 0.0])),
    lambda: D.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]])),
    lambda: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 1.0], [0.0, 1.0]])),
    lambda: D.Binomial(2.5, probs=t(0.3)),
])
def test_invalid_parameters_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


def test_validation_can_be_turned_off_and_log_prob_checks_the_support():
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="support"):
        D.Exponential(1.0).log_prob(t(-1.0))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)
    with pytest.raises(ValueError, match="broadcastable"):
        D.Normal(t([0.0, 1.0]), 1.0).log_prob(t([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="not both"):
        D.Categorical(probs=t([0.5, 0.5]), logits=t([0.0, 0.0]))


def test_expand_and_shapes():
    d = D.Normal(t([0.0, 1.0]), 1.0).expand((3, 2))
    assert d.batch_shape == (3, 2) and d.sample((4,)).shape == (4, 3, 2)
    o = D.OneHotCategorical(probs=t([0.2, 0.8])).expand((5,))
    assert o.batch_shape == (5,) and o.event_shape == (2,) and o.sample((3,)).shape == (3, 5, 2)
    m = D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t(np.eye(2)))
    assert m.expand((4,)).log_prob(t([1.0, 1.0])).shape == (4,)
    i = D.Independent(D.Normal(mt.zeros(3, 2, dtype=F64), 1.0), 1)
    assert i.batch_shape == (3,) and i.event_shape == (2,) and i.log_prob(mt.zeros(3, 2, dtype=F64)).shape == (3,)
    c = D.Categorical(logits=mt.zeros(4, 3))
    assert c.enumerate_support().shape == (3, 4) and c.log_prob(c.enumerate_support()).shape == (3, 4)


def test_kl_divergence_dispatch_and_registration():
    p, q = D.Normal(t(0.0), t(1.0)), D.Normal(t(1.0), t(2.0))
    assert np.isclose(D.kl_divergence(p, q).item(), math.log(2) + (1 + 1) / 8 - 0.5)
    assert D.kl_divergence(p, p).item() == 0.0
    with pytest.raises(NotImplementedError):
        D.kl_divergence(p, D.Exponential(1.0))

    class MyNormal(D.Normal):
        pass

    assert np.isclose(D.kl_divergence(MyNormal(0.0, 1.0), q).item(), D.kl_divergence(p, q).item())

    @D.register_kl(MyNormal, D.Normal)
    def _kl(a, b):
        return mt.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), q).item() == 42.0
    assert D.kl_divergence(p, q).item() != 42.0


KL_PAIRS = {
    "Normal": lambda a, b: (D.Normal(a, b), D.Normal(b - 1, a.abs() + 0.5)),
    "Laplace": lambda a, b: (D.Laplace(a, b), D.Laplace(b - 1, a.abs() + 0.5)),
    "Gumbel": lambda a, b: (D.Gumbel(a, b), D.Gumbel(b - 1, a.abs() + 0.5)),
    "Exponential": lambda a, b: (D.Exponential(b), D.Exponential(a.abs() + 0.5)),
    "Gamma": lambda a, b: (D.Gamma(b, a.abs() + 0.3), D.Gamma(a.abs() + 0.5, b)),
    "Beta": lambda a, b: (D.Beta(b, a.abs() + 0.3), D.Beta(a.abs() + 0.5, b)),
    "Bernoulli": lambda a, b: (D.Bernoulli(logits=a), D.Bernoulli(logits=b)),
    "Geometric": lambda a, b: (D.Geometric(logits=a), D.Geometric(logits=b)),
    "Poisson": lambda a, b: (D.Poisson(b), D.Poisson(a.abs() + 0.5)),
    "Categorical": lambda a, b: (D.Categorical(logits=mt.stack([a, b], -1)),
                                 D.Categorical(logits=mt.stack([b, a * 2], -1))),
    "MVN": lambda a, b: (D.MultivariateNormal(a, scale_tril=b.unsqueeze(-1) * mt.eye(2, dtype=F64)),
                         D.MultivariateNormal(b, covariance_matrix=mt.eye(2, dtype=F64) * 2)),
}


@pytest.mark.parametrize("name", sorted(KL_PAIRS))
def test_kl_gradient_and_monte_carlo(name):
    a, b = t([0.3, -1.2], grad=True), t([1.5, 0.7], grad=True)
    assert gradcheck(lambda x, y: D.kl_divergence(*KL_PAIRS[name](x, y)), [a, b])
    p, q = KL_PAIRS[name](a.detach(), b.detach())
    mt.manual_seed(0)
    x = p.sample((20000,))
    mc = (p.log_prob(x) - q.log_prob(x)).mean(0).numpy()
    assert np.allclose(D.kl_divergence(p, q).numpy(), mc, atol=0.06, rtol=0.05)


def test_special_functions_against_math():
    from minitensor.ops import _special as K  # the kernels of minitensor.lgamma, digamma, polygamma, erfinv

    x = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 30.0])
    assert np.allclose(K.lgamma(x), [math.lgamma(v) for v in x], rtol=1e-14)
    h = 1e-5
    assert np.allclose(K.digamma(x), (K.lgamma(x + h) - K.lgamma(x - h)) / (2 * h), rtol=1e-5)
    assert np.allclose(K.polygamma(1, x), (K.digamma(x + h) - K.digamma(x - h)) / (2 * h), rtol=1e-5)
    y = np.array([-0.99, -0.3, 0.0, 0.2, 0.999])
    assert np.allclose([math.erf(v) for v in K.erfinv(y)], y, atol=1e-14)
