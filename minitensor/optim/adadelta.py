r"""Adadelta, with PyTorch's update rule (an lr scaling the step; eps inside both roots)."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_not_differentiable


class Adadelta(Optimizer):
    r"""Adadelta, step by step as `torch.optim.Adadelta`:

        g = grad (or -grad with maximize=True);  g = g + weight_decay * p   (if weight_decay != 0)
        v = rho * v + (1 - rho) * g^2                                  (state 'square_avg')
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta^2                              (state 'acc_delta')
        p = p - lr * delta
    """

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach: bool | None = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_not_differentiable("Adadelta", differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        if not 0.0 <= float(group["rho"]) <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}")
        if not float(group["eps"]) >= 0.0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")

    def _state_spec(self, group):
        return {"step": "step", "square_avg": "array", "acc_delta": "array"}

    def _update_group(self, group):
        lr, rho, eps, wd = float(group["lr"]), float(group["rho"]), float(group["eps"]), float(group["weight_decay"])
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, group["maximize"]), p._array, self.state[p]
            if not state:
                state["step"] = 0
                state["square_avg"] = Tensor._make(np.zeros_like(w))
                state["acc_delta"] = Tensor._make(np.zeros_like(w))
            state["step"] += 1
            if wd != 0:
                g = g + wd * w
            v, u = state["square_avg"]._array, state["acc_delta"]._array
            v *= rho
            v += (1 - rho) * g * g
            delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
            u *= rho
            u += (1 - rho) * delta * delta
            w += -lr * delta
            p._bump_version()
