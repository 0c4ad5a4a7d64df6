r"""Adafactor (second moments kept as row and column factors), with PyTorch's update rule."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _lerp_


class Adafactor(Optimizer):
    r"""Adafactor, step by step as `torch.optim.Adafactor`:

        t = t + 1;  g = grad (or -grad with maximize=True)
        beta = t^beta2_decay                        (the weight of the new squared gradient; 1 at t = 1)
        rho = min(lr, 1 / sqrt(t));  alpha = rho * max(eps2, rms(p))      (rms(x) = sqrt(mean(x^2)))
        p = p * (1 - lr * weight_decay)                                     (decoupled decay, before the update)
      for p with two or more dims (the last two are the matrix; earlier ones a batch):
        R = R + beta * (mean(g^2, over columns) - R)                        (state 'row_var', shape [..., m, 1])
        C = C + beta * (mean(g^2, over rows) - C)                           (state 'col_var', shape [..., 1, n])
        V = (R @ C) / max(mean(R over rows), eps1)                          (a rank-one estimate of E[g^2])
      otherwise:
        V = V + beta * (g^2 - V)                                            (state 'variance')
      then:
        u = g / sqrt(max(V, eps1^2))
        p = p - alpha / max(1, rms(u) / d) * u

    eps1=None means the machine epsilon of p's dtype. Keeping R and C instead of a full V is what
    makes the memory of a (m, n) weight's second moment m + n rather than m * n.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group):
        if not float(group["lr"]) >= 0.0:
            raise ValueError(f"Adafactor: learning rate should be >= 0 but is: {group['lr']}")
        if not float(group["beta2_decay"]) <= 0.0:
            raise ValueError(f"Adafactor: beta2_decay should be <= 0 but is: {group['beta2_decay']}")
        eps = group["eps"]
        if len(eps) != 2:
            raise ValueError(f"Adafactor: eps should be a pair (eps1 or None, eps2), got {eps!r}")
        if eps[0] is not None and not float(eps[0]) >= 0.0:
            raise ValueError(f"Adafactor: epsilon1 should be >= 0 but is: {eps[0]}")
        if not float(eps[1]) >= 0.0:
            raise ValueError(f"Adafactor: epsilon2 should be >= 0 but is: {eps[1]}")
        if not float(group["d"]) >= 1.0:
            raise ValueError(f"Adafactor: clipping threshold d should be >= 1 but is: {group['d']}")
        if not float(group["weight_decay"]) >= 0.0:
            raise ValueError(f"Adafactor: weight_decay should be >= 0 but is: {group['weight_decay']}")

    def _param_state_spec(self, group, p):
        # which buffers a parameter has depends on its number of dims
        shape = p._array.shape
        if len(shape) > 1:
            return {"step": "step", "row_var": ("array", shape[:-1] + (1,)),
                    "col_var": ("array", shape[:-2] + (1, shape[-1]))}
        return {"step": "step", "variance": "array"}

    def _update_group(self, group):
        lr, decay, d = float(group["lr"]), float(group["beta2_decay"]), float(group["d"])
        wd = float(group["weight_decay"])
        eps1, eps2 = group["eps"]
        eps2 = float(eps2)
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, group["maximize"]), p._array, self.state[p]
            e1 = float(np.finfo(w.dtype).eps) if eps1 is None else float(eps1)
            if not state:
                state["step"] = 0
                for k, kind in self._param_state_spec(group, p).items():
                    if k != "step":
                        shape = kind[1] if isinstance(kind, tuple) else w.shape
                        state[k] = Tensor._make(np.zeros(shape, dtype=w.dtype))
            state["step"] += 1
            t = float(state["step"])
            beta = t ** decay
            alpha = max(eps2, _norm(w) / w.size ** 0.5) * min(lr, 1 / t ** 0.5)
            if wd != 0:
                w *= 1 - lr * wd
            if g.ndim > 1:
                row, col = state["row_var"]._array, state["col_var"]._array
                sq = g * g
                _lerp_(row, sq.sum(axis=-1, keepdims=True) / g.shape[-1], beta)
                _lerp_(col, sq.sum(axis=-2, keepdims=True) / g.shape[-2], beta)
                v = (row @ col) / np.maximum(row.mean(axis=-2, keepdims=True), e1)
            else:
                v = _lerp_(state["variance"]._array, g * g, beta).copy()
            u = g / np.sqrt(np.maximum(v, e1 * e1))
            w += (-alpha / max(1.0, _norm(u) / (u.size ** 0.5 * d))) * u
            p._bump_version()


def _norm(a):
    """The 2-norm of all of a, as a Python float."""
    return float(np.sqrt(np.sum(a * a)))
