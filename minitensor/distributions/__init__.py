"""Probability distributions with PyTorch's API (`torch.distributions`), written with minitensor's ops.

    from minitensor.distributions import Normal, Categorical, kl_divergence
    d = Normal(loc, scale)
    x = d.rsample((3,))            # reparameterised: gradients reach loc and scale
    d.log_prob(x), d.entropy(), kl_divergence(d, Normal(0.0, 1.0))

Sampling draws from minitensor's global generator: `minitensor.manual_seed(s)` makes it repeatable,
but the numbers are not PyTorch's (a different generator and, for some distributions, a different
sampling algorithm).
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Dirichlet", "Distribution", "Exponential", "Gamma", "Geometric",
    "Gumbel", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson",
    "Uniform", "constraints", "kl_divergence", "register_kl",
]
