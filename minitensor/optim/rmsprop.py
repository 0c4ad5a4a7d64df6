r"""RMSprop, with PyTorch's update rule (eps outside the root; optional centering and momentum)."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_not_differentiable, _lerp_


class RMSprop(Optimizer):
    r"""RMSprop, step by step as `torch.optim.RMSprop`:

        g = grad (or -grad with maximize=True);  g = g + weight_decay * p     (if weight_decay != 0)
        v = alpha * v + (1 - alpha) * g^2                                    (state 'square_avg')
        m = m + (1 - alpha) * (g - m);  avg = sqrt(v - m^2) + eps            (centered: state 'grad_avg')
        avg = sqrt(v) + eps                                                  (otherwise)
        b = momentum * b + g / avg;  p = p - lr * b                          (momentum > 0: 'momentum_buffer')
        p = p - lr * g / avg                                                 (otherwise)

    State per parameter: `step`, `square_avg`, and `momentum_buffer` / `grad_avg` when used.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_not_differentiable("RMSprop", differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        for key in ("eps", "momentum", "alpha"):
            if not float(group[key]) >= 0.0:
                raise ValueError(f"Invalid {'epsilon' if key == 'eps' else key} value: {group[key]}")

    def _state_spec(self, group):
        spec = {"step": "step", "square_avg": "array"}
        if float(group["momentum"]) > 0:
            spec["momentum_buffer"] = "array"
        if group["centered"]:
            spec["grad_avg"] = "array"
        return spec

    def _update_group(self, group):
        lr, alpha, eps = float(group["lr"]), float(group["alpha"]), float(group["eps"])
        wd, momentum, centered = float(group["weight_decay"]), float(group["momentum"]), group["centered"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, group["maximize"]), p._array, self.state[p]
            if not state:
                state["step"] = 0
                state["square_avg"] = Tensor._make(np.zeros_like(w))
                if momentum > 0:
                    state["momentum_buffer"] = Tensor._make(np.zeros_like(w))
                if centered:
                    state["grad_avg"] = Tensor._make(np.zeros_like(w))
            state["step"] += 1
            if wd != 0:
                g = g + wd * w
            v = state["square_avg"]._array
            v *= alpha
            v += (1 - alpha) * g * g
            if centered:
                m = _lerp_(state["grad_avg"]._array, g, 1 - alpha)
                avg = np.sqrt(v + -1 * m * m)
            else:
                avg = np.sqrt(v)
            avg += eps
            if momentum > 0:
                b = state["momentum_buffer"]._array
                b *= momentum
                b += g / avg
                w += -lr * b
            else:
                w += -lr * (g / avg)
            p._bump_version()
