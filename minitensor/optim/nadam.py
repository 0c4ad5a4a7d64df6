r"""NAdam (Adam with Nesterov momentum and a momentum schedule), with PyTorch's update rule."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._adam_family import check_adam_like_group
from .optimizer import Optimizer, ParamsT, _check_not_differentiable, _lerp_


class NAdam(Optimizer):
    r"""NAdam, step by step as `torch.optim.NAdam`:

        t = t + 1;  g = grad (or -grad with maximize=True)
        p = p * (1 - lr * weight_decay)  (decoupled_weight_decay)   or   g = g + weight_decay * p
        mu_t = beta1 * (1 - 0.96^(t * momentum_decay) / 2);   mu_{t+1} likewise
        P = P * mu_t                                        (state 'mu_product', a scalar)
        m = m + (1 - beta1) * (g - m);   v = beta2 * v + (1 - beta2) * g^2
        denom = sqrt(v / (1 - beta2^t)) + eps
        p = p - lr (1 - mu_t) / (1 - P) * g / denom - lr mu_{t+1} / (1 - P mu_{t+1}) * m / denom

    `mu_product` is a 0-dim tensor of float32 (float64 when that is the default dtype), as PyTorch's,
    so it rounds the same way.
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_not_differentiable("NAdam", differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        check_adam_like_group(group)
        if not float(group["momentum_decay"]) >= 0.0:
            raise ValueError(f"Invalid momentum_decay value: {group['momentum_decay']}")

    def _state_spec(self, group):
        return {"step": "step", "mu_product": "scalar", "exp_avg": "array", "exp_avg_sq": "array"}

    def _update_group(self, group):
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        beta1, beta2 = group["betas"]
        psi = float(group["momentum_decay"])
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, group["maximize"]), p._array, self.state[p]
            if not state:
                state["step"] = 0
                state["mu_product"] = Tensor._make(np.ones((), dtype=self._scalar_dtype()))
                state["exp_avg"] = Tensor._make(np.zeros_like(w))
                state["exp_avg_sq"] = Tensor._make(np.zeros_like(w))
            state["step"] += 1
            t = state["step"]
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    w *= 1 - lr * wd
                else:
                    g = g + wd * w
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
            prod = state["mu_product"]._array
            prod *= mu
            prod_now = float(prod)
            m = _lerp_(state["exp_avg"]._array, g, 1 - beta1)
            v = state["exp_avg_sq"]._array
            v *= beta2
            v += (1 - beta2) * g * g
            denom = np.sqrt(v / (1 - beta2 ** t)) + eps
            w += (-lr * (1.0 - mu) / (1.0 - prod_now)) * (g / denom)
            w += (-lr * mu_next / (1.0 - prod_now * mu_next)) * (m / denom)
            p._bump_version()
