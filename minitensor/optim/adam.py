r"""Adam and AdamW, with PyTorch's exact update rules (bias correction, eps outside the root)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_fused_foreach


class Adam(Optimizer):
    r"""Adam, step by step exactly as `torch.optim.Adam` (AdamW is the same with decoupled decay):

        t = t + 1
        g = grad (or -grad with maximize=True)
        p = p * (1 - lr * weight_decay)                   (decoupled_weight_decay, i.e. AdamW)
        g = g + weight_decay * p                          (otherwise: L2 decay through the gradient)
        m = beta1 * m + (1 - beta1) * g                   (computed as m + (1 - beta1) * (g - m))
        v = beta2 * v + (1 - beta2) * g^2
        v_max = max(v_max, v)                             (amsgrad only; then v_max replaces v below)
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    Note eps is added *after* the bias-corrected root, as PyTorch does. State per parameter:
    `step` (an int), `exp_avg` (m), `exp_avg_sq` (v) and, with amsgrad, `max_exp_avg_sq`.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        if differentiable:
            raise NotImplementedError(f"{type(self).__name__}: differentiable=True is not supported")
        # foreach/fused/capturable only choose PyTorch kernels; these updates are vectorised numpy.
        _check_fused_foreach(fused, foreach)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        if not float(group["eps"]) >= 0.0:
            raise ValueError(f"Invalid epsilon value: {group['eps']}")
        betas = group["betas"]
        if len(betas) != 2:
            raise ValueError(f"Invalid betas: expected two values, got {betas!r}")
        for i, b in enumerate(betas):
            if not 0.0 <= float(b) < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {b}")
        group["betas"] = (float(betas[0]), float(betas[1]))

    def _state_spec(self, group):
        spec = {"step": "step", "exp_avg": "array", "exp_avg_sq": "array"}
        if group["amsgrad"]:
            spec["max_exp_avg_sq"] = "array"
        return spec

    #: the speed layer's one-pass update of a whole group (registered by minitensor/fast, never written
    #: here; None: the loop below): `fast_update_group(optimizer, group)` does the loop's arithmetic on
    #: all the group's parameters at once, or returns False without doing anything, and the loop runs.
    fast_update_group: Callable[[Adam, dict[str, Any]], bool] | None = None

    def _update_group(self, group):
        if self.fast_update_group is not None and self.fast_update_group(self, group):
            return
        lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
        beta1, beta2 = group["betas"]
        amsgrad, maximize, decoupled = group["amsgrad"], group["maximize"], group["decoupled_weight_decay"]
        for p in group["params"]:
            if p.grad is None:
                continue
            g = self._grad(p, maximize)
            w = p._array
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = Tensor._make(np.zeros_like(w))
                state["exp_avg_sq"] = Tensor._make(np.zeros_like(w))
                if amsgrad:
                    state["max_exp_avg_sq"] = Tensor._make(np.zeros_like(w))
            state["step"] += 1
            t = state["step"]
            if wd != 0:
                if decoupled:
                    w *= 1 - lr * wd
                else:
                    g = g + wd * w
            m, v = state["exp_avg"]._array, state["exp_avg_sq"]._array
            m += (1 - beta1) * (g - m)
            v *= beta2
            v += (1 - beta2) * g * g
            if amsgrad:
                vmax = state["max_exp_avg_sq"]._array
                np.maximum(vmax, v, out=vmax)
                v = vmax
            step_size = lr / (1 - beta1 ** t)
            denom = np.sqrt(v) / math.sqrt(1 - beta2 ** t) + eps
            w -= step_size * m / denom
            p._bump_version()


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov & Hutter): p = p * (1 - lr * weight_decay)
    before the Adam step, so the decay is not rescaled by the adaptive denominator.
    Default weight_decay=1e-2, as PyTorch's."""

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
