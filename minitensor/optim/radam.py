r"""RAdam (Adam with a rectified variance estimate), with PyTorch's update rule."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._adam_family import check_adam_like_group
from .optimizer import Optimizer, ParamsT, _check_not_differentiable, _lerp_


class RAdam(Optimizer):
    r"""RAdam, step by step as `torch.optim.RAdam`:

        t = t + 1;  g = grad (or -grad with maximize=True)
        p = p * (1 - lr * weight_decay)  (decoupled_weight_decay)   or   g = g + weight_decay * p
        m = m + (1 - beta1) * (g - m);   v = beta2 * v + (1 - beta2) * g^2
        rho_inf = 2 / (1 - beta2) - 1;   rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
        if rho_t > 5:   r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
                        p = p - lr * m / (1 - beta1^t) * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
        else:           p = p - lr * m / (1 - beta1^t)            (plain momentum for the first steps)
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_not_differentiable("RAdam", differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        check_adam_like_group(group)

    def _state_spec(self, group):
        return {"step": "step", "exp_avg": "array", "exp_avg_sq": "array"}

    def _update_group(self, group):
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        beta1, beta2 = group["betas"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, group["maximize"]), p._array, self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = Tensor._make(np.zeros_like(w))
                state["exp_avg_sq"] = Tensor._make(np.zeros_like(w))
            state["step"] += 1
            t = state["step"]
            if wd != 0:
                if group["decoupled_weight_decay"]:
                    w *= 1 - lr * wd
                else:
                    g = g + wd * w
            m = _lerp_(state["exp_avg"]._array, g, 1 - beta1)
            v = state["exp_avg_sq"]._array
            v *= beta2
            v += (1 - beta2) * g * g
            bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * t * (beta2 ** t) / bc2
            if rho_t > 5.0:
                rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                adaptive = bc2 ** 0.5 / (np.sqrt(v) + eps)
                w -= m / bc1 * lr * adaptive * rect
            else:
                w -= m / bc1 * lr
            p._bump_version()
