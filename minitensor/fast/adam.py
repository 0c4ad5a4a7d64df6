"""Adam's update of a whole parameter group in one pass (the speed layer).

`Adam._update_group` (minitensor/optim/adam.py) is the update a learner reads: a loop over the
parameters, a dozen numpy calls each. A model has many small parameters, so this does the same
arithmetic once on all of them: measured +2.25% of a training step of the default model when
switched off (CPU instructions). Its temporaries (the flat gradient, the update and one work
array) are buffers kept between steps, each written with `out=`: the loop's expressions in its
order, so the same bits (2026-11-28, docs/performance.md). tests/minitensor/optim/test_adam_flat.py
proves it equal to the loop, bit for bit.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..tensor import Tensor

if TYPE_CHECKING:
    from ..optim.adam import Adam


def adam_step_flat(optimizer: Adam, group: dict[str, Any]) -> bool:
    """The same update as the loop in `Adam._update_group`, as a dozen numpy calls on all of the
    group's parameters at once instead of a dozen per parameter (a model has many small ones).

    The moments of the group live in two flat arrays, and each parameter's `exp_avg` and
    `exp_avg_sq` are views into them, so the state dict is unchanged. Used when every parameter
    has a gradient, one dtype and one step count, without amsgrad, maximize or L2 decay; returns
    False (nothing done) otherwise, and the loop runs."""
    params = group["params"]
    l2 = float(group["weight_decay"]) != 0 and not group["decoupled_weight_decay"]  # decay through the gradient
    if group["amsgrad"] or group["maximize"] or l2 or any(p._grad is None for p in params):
        return False
    dtype = params[0]._array.dtype
    if any(p._array.dtype != dtype or p._grad._array.shape != p._array.shape for p in params):
        return False
    states = [optimizer.state[p] for p in params]
    steps = {st.get("step", 0) for st in states}
    if len(steps) != 1:
        return False
    m, v = _flat_moments(optimizer, params, states, dtype)
    g, work, update, views = _scratch(optimizer, params, m)
    t = steps.pop() + 1
    lr, eps, wd = float(group["lr"]), float(group["eps"]), float(group["weight_decay"])
    beta1, beta2 = group["betas"]
    grads = [p._grad._array.reshape(-1) for p in params]
    if all(a.dtype == dtype for a in grads):
        np.concatenate(grads, out=g)
    else:  # (a gradient of another dtype: cast as the loop does)
        g[...] = np.concatenate(grads).astype(dtype, copy=False)
    # the loop's expressions, each temporary written into a buffer kept between steps
    np.subtract(g, m, out=work)
    work *= 1 - beta1
    m += work                                   # m += (1 - beta1) * (g - m)
    v *= beta2
    np.multiply(g, 1 - beta2, out=work)
    work *= g
    v += work                                   # v += (1 - beta2) * g * g
    step_size = lr / (1 - beta1 ** t)
    np.multiply(m, step_size, out=update)
    np.sqrt(v, out=work)
    work /= math.sqrt(1 - beta2 ** t)
    work += eps
    update /= work                              # step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
    decay = 1 - lr * wd if wd != 0 else None
    for p, st, u in zip(params, states, views):
        w = p._array
        if decay is not None:
            w *= decay
        w -= u
        st["step"] = t
        p._bump_version()
    return True


def _scratch(optimizer, params, m):
    """(g, work, update, views): the flat gradient and two work arrays of the group, kept between
    steps, and each parameter's view of `update` in its own shape."""
    key = tuple(map(id, params))
    kept = optimizer.__dict__.setdefault("_flat_scratch", {}).get(key)
    if kept is None or kept[0].shape != m.shape or kept[0].dtype != m.dtype:
        g, work, update = np.empty_like(m), np.empty_like(m), np.empty_like(m)
        views, offset = [], 0
        for p in params:
            n = p._array.size
            views.append(update[offset:offset + n].reshape(p._array.shape))
            offset += n
        kept = optimizer._flat_scratch[key] = (g, work, update, views)
    return kept

def _flat_moments(optimizer, params, states, dtype):
    """The flat (m, v) of these parameters, rebuilt from their states whenever those are not
    (still) views into it: on the first step, or after load_state_dict replaced them."""
    key = tuple(map(id, params))
    flat = optimizer.__dict__.setdefault("_flat", {}).get(key)
    if flat is not None and all(st.get("exp_avg") is not None and st["exp_avg"]._array.base is flat[0]
                                and st["exp_avg_sq"]._array.base is flat[1] for st in states):
        return flat
    m, v = (np.concatenate([st[name]._array.reshape(-1).astype(dtype, copy=False) if name in st
                            else np.zeros(p._array.size, dtype) for p, st in zip(params, states)])
            for name in ("exp_avg", "exp_avg_sq"))
    offset = 0
    for p, st in zip(params, states):
        n = p._array.size
        st.setdefault("step", 0)
        st["exp_avg"] = Tensor._make(m[offset:offset + n].reshape(p._array.shape))
        st["exp_avg_sq"] = Tensor._make(v[offset:offset + n].reshape(p._array.shape))
        offset += n
    optimizer._flat[key] = (m, v)
    return m, v
