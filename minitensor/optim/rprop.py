r"""Rprop (resilient backpropagation: per-weight step sizes driven by gradient signs), PyTorch's rule."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check_not_differentiable


class Rprop(Optimizer):
    r"""Rprop, step by step as `torch.optim.Rprop` (full-batch learning; the gradient's size is ignored):

        g = grad (or -grad with maximize=True);   s = sign(g * g_prev)
        f = etaplus where s > 0, etaminus where s < 0, 1 where s == 0
        step_size = clip(step_size * f, step_size_min, step_size_max)  (state 'step_size', starting at lr)
        g = 0 where f == etaminus                                      (no move right after a sign change)
        p = p - sign(g) * step_size;   g_prev = g                      (state 'prev')
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        _check_not_differentiable("Rprop", differentiable)
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        etaminus, etaplus = group["etas"]
        if not 0.0 < float(etaminus) < 1.0 < float(etaplus):
            raise ValueError(f"Invalid eta values: {etaminus}, {etaplus}")

    def _state_spec(self, group):
        return {"step": "step", "prev": "array", "step_size": "array"}

    def _update_group(self, group):
        etaminus, etaplus = (float(e) for e in group["etas"])
        lo, hi = (float(s) for s in group["step_sizes"])
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, group["maximize"]), p._array, self.state[p]
            if not state:
                state["step"] = 0
                state["prev"] = Tensor._make(np.zeros_like(w))
                state["step_size"] = Tensor._make(np.full_like(w, float(group["lr"])))
            state["step"] += 1
            prev, size = state["prev"]._array, state["step_size"]._array
            s = np.sign(g * prev)
            factor = np.where(s > 0, etaplus, np.where(s < 0, etaminus, 1.0)).astype(w.dtype)
            size *= factor
            np.clip(size, lo, hi, out=size)
            g = np.where(factor == w.dtype.type(etaminus), 0, g).astype(w.dtype)
            w += -1 * np.sign(g) * size
            prev[...] = g
            p._bump_version()
