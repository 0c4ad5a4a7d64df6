r"""Full Jacobians for gradcheck: by central differences, and by forward mode (dual tensors).

For the inputs x_d that require grad and the differentiable outputs y_k, both give one matrix per pair,
laid out as PyTorch's gradcheck prints them: J[d][k] has shape (x_d.numel(), y_k.numel()), row j holding
dy_k / dx_d[j].

- numeric: row j = (y_k(x + eps e_j) - y_k(x - eps e_j)) / (2 eps), error O(eps^2) + O(machine eps / eps).
- forward mode: row j = the tangent of y_k when x_d is made a dual with tangent e_j (every other input
  without a tangent), i.e. J e_j, so a user's Function is checked through its `jvp`.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..tensor import Tensor
from . import forward_ad, grad_mode

Outputs = Callable[[Sequence[Any]], Sequence[Tensor]]


def _columns(x: Tensor, outs: Sequence[Tensor], diff: Sequence[int]) -> list[np.ndarray]:
    return [np.zeros((x._array.size, outs[k]._array.size)) for k in diff]


def central_differences(outputs: Outputs, args: list[Any], i: int,
                        eps: float) -> Iterator[tuple[int, list[np.ndarray], list[np.ndarray]]]:
    """For each element j of args[i], which owns C-contiguous memory (perturbed in place, then restored):
    (j, the outputs at x + eps e_j, the outputs at x - eps e_j), as float64 copies (an output may be a view
    of the input that is about to be perturbed again)."""
    flat = args[i]._array.reshape(-1)
    for j in range(flat.size):
        orig = flat[j]
        flat[j] = orig + eps
        plus = [np.array(o._array, dtype=np.float64) for o in outputs(args)]
        flat[j] = orig - eps
        minus = [np.array(o._array, dtype=np.float64) for o in outputs(args)]
        flat[j] = orig
        yield j, plus, minus


def numeric_jacobians(outputs: Outputs, args: list[Any], wanted: Sequence[int], diff: Sequence[int],
                      eps: float) -> list[list[np.ndarray]]:
    """Central-difference Jacobians of the outputs at positions `diff` (of `outputs(args)`) with respect to
    the args at positions `wanted` (see `central_differences`)."""
    result = []
    with grad_mode.no_grad():
        outs = outputs(args)
        for i in wanted:
            jac = _columns(args[i], outs, diff)
            for j, plus, minus in central_differences(outputs, args, i, eps):
                for col, k in zip(jac, diff):
                    col[j] = ((plus[k] - minus[k]) / (2 * eps)).reshape(-1)
            result.append(jac)
    return result


def forward_jacobians(outputs: Outputs, args: list[Any], wanted: Sequence[int],
                      diff: Sequence[int]) -> list[list[np.ndarray]]:
    """Forward-mode Jacobians, one dual input and one unit tangent at a time (a missing `jvp` of a user's
    Function raises here, as it does in PyTorch)."""
    result = []
    for i in wanted:
        x = args[i].detach()
        jac: list[np.ndarray] | None = None
        for j in range(x._array.size):
            e = np.zeros(x._array.size, dtype=x._array.dtype)
            e[j] = 1.0
            # ops are recorded even under no_grad outside: minitensor computes a tangent from the graph
            with forward_ad.dual_level(), grad_mode.enable_grad():
                local = list(args)
                local[i] = forward_ad.make_dual(x, Tensor._make(e.reshape(x._array.shape)))
                outs = outputs(local)
                if jac is None:
                    jac = _columns(x, outs, diff)
                for col, k in zip(jac, diff):
                    t = forward_ad.unpack_dual(outs[k]).tangent
                    if t is not None:
                        col[j] = np.asarray(t._array, dtype=np.float64).reshape(-1)
        result.append(jac if jac is not None else [np.zeros((0, 0)) for _ in diff])
    return result
