r"""Adamax (Adam with an infinity norm), with PyTorch's update rule."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._adam_family import check_adam_like_group
from .optimizer import Optimizer, ParamsT, _check_not_differentiable, _lerp_


class Adamax(Optimizer):
    r"""Adamax, step by step as `torch.optim.Adamax`:

        t = t + 1;  g = grad (or -grad with maximize=True);  g = g + weight_decay * p   (if weight_decay != 0)
        m = m + (1 - beta1) * (g - m)                              (state 'exp_avg')
        u = max(beta2 * u, |g| + eps)                              (state 'exp_inf')
        p = p - lr / (1 - beta1^t) * m / u
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_not_differentiable("Adamax", differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        check_adam_like_group(group)

    def _state_spec(self, group):
        return {"step": "step", "exp_avg": "array", "exp_inf": "array"}

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
                state["exp_inf"] = Tensor._make(np.zeros_like(w))
            state["step"] += 1
            if wd != 0:
                g = g + wd * w
            m = _lerp_(state["exp_avg"]._array, g, 1 - beta1)
            u = state["exp_inf"]._array
            u *= beta2
            np.maximum(u, np.abs(g) + eps, out=u)
            clr = lr / (1 - beta1 ** state["step"])
            w += -clr * (m / u)
            p._bump_version()
