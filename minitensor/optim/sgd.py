r"""Stochastic gradient descent with momentum, dampening, Nesterov and L2 weight decay (PyTorch's rule)."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_fused_foreach, required


class SGD(Optimizer):
    r"""SGD, step by step exactly as `torch.optim.SGD`:

        g = grad (or -grad with maximize=True)
        g = g + weight_decay * p                          (if weight_decay != 0)
        if momentum != 0:
            b = g                                         (first step: the buffer starts as a copy of g)
            b = momentum * b + (1 - dampening) * g        (later steps)
            g = g + momentum * b  if nesterov  else  b
        p = p - lr * g

    The buffer lives in `optimizer.state[p]['momentum_buffer']` (only when momentum != 0).
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        if differentiable:
            raise NotImplementedError("SGD: differentiable=True is not supported (updates run outside the graph)")
        # foreach/fused only choose PyTorch kernels; every update here is already vectorised numpy.
        _check_fused_foreach(fused, foreach)
        # kept in each group (and its state dict) as in PyTorch, though they change nothing here
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def _check_group(self, group):
        if group["lr"] is required:
            raise ValueError("SGD: lr is required")
        super()._check_group(group)
        if not float(group["momentum"]) >= 0.0:
            raise ValueError(f"Invalid momentum value: {group['momentum']}")
        if group["nesterov"] and (float(group["momentum"]) <= 0 or float(group["dampening"]) != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")

    def _state_spec(self, group):
        return {"momentum_buffer": "array_or_none"} if float(group["momentum"]) != 0 else {}

    def _update_group(self, group):
        lr, momentum = float(group["lr"]), float(group["momentum"])
        dampening, wd = float(group["dampening"]), float(group["weight_decay"])
        nesterov, maximize = bool(group["nesterov"]), bool(group["maximize"])
        for p in group["params"]:
            if p.grad is None:
                continue
            g = self._grad(p, maximize)
            w = p._array
            if wd != 0:
                g = g + wd * w
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = Tensor._make(np.array(g, dtype=w.dtype, copy=True))
                else:
                    b = buf._array
                    b *= momentum
                    b += (1 - dampening) * g
                g = g + momentum * buf._array if nesterov else buf._array
            w -= lr * g
            p._bump_version()
