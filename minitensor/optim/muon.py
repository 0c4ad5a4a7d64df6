r"""Muon (momentum, then orthogonalised by a Newton-Schulz iteration) for 2-D weights, with PyTorch's update rule."""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT, _lerp_


class Muon(Optimizer):
    r"""Muon, step by step as `torch.optim.Muon` (for 2-D parameters only):

        B = B + (1 - momentum) * (g - B)                            (state 'momentum_buffer')
        M = g + momentum * (B - g)                                  (nesterov=True)
        M = B                                                       (otherwise)
        O = NS(M)                                                   (roughly U V^T for M = U S V^T, see below)
        p = p * (1 - lr * weight_decay)
        p = p - lr * s * O,   s = sqrt(max(1, rows / cols))         (adjust_lr_fn None or 'original')
                              s = 0.2 * sqrt(max(rows, cols))       ('match_rms_adamw')

    NS, with (a, b, c) = ns_coefficients, works on X = M (or M^T when M has more rows than columns,
    so X X^T is the smaller Gram matrix):

        X = X / max(||X||_F, eps)
        repeat ns_steps times:  A = X X^T;  X = a X + (b A + c A A) X

    Each step maps every singular value s of X to a s + b s^3 + c s^5, which pushes singular values
    in (0, 1] towards 1 while the singular vectors stay: the update is M with its scales flattened.

    PyTorch runs NS in bfloat16; numpy has no bfloat16, so here it runs in the parameter's dtype
    (float32 or float64). The result differs from PyTorch's by bfloat16's rounding (about 3 digits);
    with that rounding taken out the two agree to float64 precision (the tests check both).
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{tuple(p.shape)} (optimize biases and embeddings with e.g. AdamW)")

    def _check_group(self, group):
        if not float(group["lr"]) >= 0.0:
            raise ValueError(f"Muon: learning rate should be >= 0 but is: {group['lr']}")
        if not float(group["momentum"]) >= 0.0:
            raise ValueError(f"Muon: momentum should be >= 0 but is: {group['momentum']}")
        if not float(group["weight_decay"]) >= 0.0:
            raise ValueError(f"Muon: weight decay should be >= 0 but is: {group['weight_decay']}")
        if group["adjust_lr_fn"] not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Muon: adjust learning rate function {group['adjust_lr_fn']} is not supported "
                             f"(use None, 'original' or 'match_rms_adamw')")
        if int(group["ns_steps"]) >= 100:
            raise ValueError(f"Muon: ns_steps must be less than 100, got {group['ns_steps']}")
        if len(group["ns_coefficients"]) != 3:
            raise ValueError(f"Muon: ns_coefficients must be three numbers (a, b, c), got {group['ns_coefficients']!r}")

    def _state_spec(self, group):
        return {"momentum_buffer": "array"}

    def _update_group(self, group):
        lr, wd, momentum = float(group["lr"]), float(group["weight_decay"]), float(group["momentum"])
        for p in group["params"]:
            if p.grad is None:
                continue
            g, w, state = self._grad(p, False), p._array, self.state[p]
            if g.ndim != 2:
                raise ValueError(f"Muon: a parameter's gradient must be a 2D matrix, got shape {g.shape}")
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = Tensor._make(np.zeros_like(w))
            buf = _lerp_(state["momentum_buffer"]._array, g, 1 - momentum)
            m = _lerp_(g.copy(), buf, momentum) if group["nesterov"] else buf
            o = _newton_schulz(m, group["ns_coefficients"], int(group["ns_steps"]), float(group["eps"]))
            w *= 1 - lr * wd
            w += -_adjusted_lr(lr, group["adjust_lr_fn"], w.shape) * o
            p._bump_version()


def _newton_schulz(m, coefficients, steps, eps):
    """NS(m) of the class docstring, on a new array (m is left as it is)."""
    a, b, c = (float(x) for x in coefficients)
    tall = m.shape[0] > m.shape[1]
    x = m.T if tall else m
    x = x / max(float(np.sqrt(np.sum(x * x))), eps)
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.T if tall else x


def _adjusted_lr(lr, adjust_lr_fn, shape):
    rows, cols = shape
    if adjust_lr_fn == "match_rms_adamw":
        return lr * (0.2 * math.sqrt(max(rows, cols)))
    return lr * math.sqrt(max(1, rows / cols))
