"""The closed-form KL divergences PyTorch registers for the distributions added with the transforms
(issue 29), registered into kl.py's table on import."""
from __future__ import annotations

import math

import minitensor

from ..tensor import Tensor
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .exp_family import ExponentialFamily
from .half_normal import HalfNormal
from .kl import _kl_normal_normal, kl_divergence, register_kl
from .pareto import Pareto
from .transformed_distribution import TransformedDistribution
from .utils import sum_rightmost

__all__: list[str] = []


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    """F(θ_q) - F(θ_p) - ⟨θ_q - θ_p, ∇F(θ_p)⟩: the Bregman divergence of the log normalizer."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    p_nparams = [n.detach().requires_grad_() for n in p._natural_params]
    q_nparams = q._natural_params
    with minitensor.enable_grad():
        lg_normal = p._log_normalizer(*p_nparams)
        gradients = minitensor.autograd.grad(lg_normal.sum(), p_nparams, create_graph=True)
    result = q._log_normalizer(*q_nparams) - lg_normal
    for pnp, qnp, g in zip(p_nparams, q_nparams, gradients):
        result = result - sum_rightmost((qnp - pnp) * g, len(q.event_shape))
    return result


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    """KL is invariant under one bijection applied to both: the bases' KL when the transforms agree."""
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    """ln(((s_p + s_q)² + (l_p - l_q)²) / (4 s_p s_q)) (Chyzak and Nielsen, 2019)."""
    t1 = ((p.scale + q.scale).square() + (p.loc - q.loc).square()).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Tensor:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    t1 = q.alpha * scale_ratio.log()
    t2 = -alpha_ratio.log()
    result = t1 + t2 + alpha_ratio - 1
    return minitensor.where(p.support.lower_bound < q.support.lower_bound, minitensor.full_like(result, math.inf),
                            result)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


