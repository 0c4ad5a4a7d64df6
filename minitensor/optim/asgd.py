r"""Averaged SGD, with PyTorch's update rule (a decaying step size and a running average of the iterates)."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_not_differentiable


class ASGD(Optimizer):
    r"""ASGD, step by step as `torch.optim.ASGD`:

        t = t + 1;  g = grad (or -grad with maximize=True);  g = g + weight_decay * p   (if weight_decay != 0)
        p = p * (1 - lambd * eta);   p = p - eta * g
        ax = ax + mu * (p - ax)      (ax = p while mu == 1)        (state 'ax': the averaged parameters)
        eta = lr / (1 + lambd * lr * t)^alpha;   mu = 1 / max(1, t - t0)

    `eta` and `mu` are 0-dim tensors of float32 (float64 when that is the default dtype), as PyTorch's.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_not_differentiable("ASGD", differentiable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _state_spec(self, group):
        return {"step": "step", "eta": "scalar", "mu": "scalar", "ax": "array"}

    def _update_group(self, group):
        lr, lambd, alpha, t0 = float(group["lr"]), float(group["lambd"]), float(group["alpha"]), float(group["t0"])
        wd = float(group["weight_decay"])
        sd = self._scalar_dtype()
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, group["maximize"]), p._array, self.state[p]
            if not state:
                state["step"] = 0
                state["eta"] = Tensor._make(np.array(lr, dtype=sd))
                state["mu"] = Tensor._make(np.ones((), dtype=sd))
                state["ax"] = Tensor._make(np.zeros_like(w))
            state["step"] += 1
            t = state["step"]
            if wd != 0:
                g = g + wd * w
            eta, mu = float(state["eta"]._array), float(state["mu"]._array)
            w *= 1 - lambd * eta
            w += -eta * g
            ax = state["ax"]._array
            if mu != 1:
                ax += (w - ax) * mu
            else:
                ax[...] = w
            state["eta"]._array[...] = lr / ((1 + lambd * lr * t) ** alpha)
            state["mu"]._array[...] = 1 / max(1, t - t0)
            p._bump_version()
