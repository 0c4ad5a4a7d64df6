"""The option checks Adam's relatives share (lr, eps, betas, weight decay)."""
from __future__ import annotations


def check_adam_like_group(group):
    if not float(group["eps"]) >= 0.0:
        raise ValueError(f"Invalid epsilon value: {group['eps']}")
    betas = group["betas"]
    if len(betas) != 2:
        raise ValueError(f"Invalid betas: expected two values, got {betas!r}")
    for i, b in enumerate(betas):
        if not 0.0 <= float(b) < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")
    group["betas"] = (float(betas[0]), float(betas[1]))
