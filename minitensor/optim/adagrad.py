r"""Adagrad, with PyTorch's update rule (lr decay by step, accumulator started at a chosen value)."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_fused_foreach, _check_not_differentiable


class Adagrad(Optimizer):
    r"""Adagrad, step by step as `torch.optim.Adagrad`:

        t = t + 1;  g = grad (or -grad with maximize=True);  g = g + weight_decay * p   (if weight_decay != 0)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g^2                                        (state 'sum', starting at initial_accumulator_value)
        p = p - clr * g / (sqrt(s) + eps)

    As PyTorch's, the state (`step` 0 and `sum`) exists from construction on, for every parameter.
    Sparse gradients do not exist in minitensor.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_not_differentiable("Adagrad", differentiable)
        _check_fused_foreach(fused, foreach)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["step"] = 0
                self.state[p]["sum"] = Tensor._make(
                    np.full_like(p._array, float(group["initial_accumulator_value"])))

    def _check_group(self, group):
        super()._check_group(group)
        if not float(group["lr_decay"]) >= 0.0:
            raise ValueError(f"Invalid lr_decay value: {group['lr_decay']}")
        if not float(group["initial_accumulator_value"]) >= 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: {group['initial_accumulator_value']}")
        if not float(group["eps"]) >= 0.0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")

    def _state_spec(self, group):
        return {"step": "step", "sum": "array"}

    def _update_group(self, group):
        lr, lr_decay, eps, wd = float(group["lr"]), float(group["lr_decay"]), float(group["eps"]), \
            float(group["weight_decay"])
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, group["maximize"]), p._array, self.state[p]
            if not state:  # a parameter added by add_param_group after construction
                state["step"] = 0
                state["sum"] = Tensor._make(np.full_like(w, float(group["initial_accumulator_value"])))
            state["step"] += 1
            if wd != 0:
                g = g + wd * w
            clr = lr / (1 + (state["step"] - 1) * lr_decay)
            s = state["sum"]._array
            s += g * g
            w += -clr * (g / (np.sqrt(s) + eps))
            p._bump_version()
