"""`swap_in_optimizer_params_and_state`: run an optimizer for a while on other parameters and other state."""
from __future__ import annotations

import collections
import contextlib
from typing import Any, Iterator, Mapping

import numpy as np

from ..tensor import Tensor
from .optimizer import Optimizer

_NAME = "swap_in_optimizer_params_and_state"


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer, swapin_parameters: Mapping[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Inside the `with` block, `optimizer` works on `swapin_parameters` and `swapin_optim_state` instead of
    its own parameters, state and group options; on leaving, its own are back, untouched.

    `swapin_parameters`: tensors in the order of the optimizer's parameters (a dict, e.g. from
    `dict(model.named_parameters())`: only its values' order counts). `swapin_optim_state`: a dict shaped
    as `optimizer.state_dict()`'s, whose per-parameter buffers the block updates in place (so a
    `step()` inside advances them); replacing an entry inside the block does not reach the dict.
    A tensor 'step' count is advanced in place too, as PyTorch's tensor counts are; a plain int is not.

    The optimizer must already have state (have taken a step), as in PyTorch, whose use for this is
    tracing a step on stand-in tensors.
    """
    swap_state, plan = _prepare(optimizer, swapin_parameters, swapin_optim_state)
    live_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    pairs = []  # (the dict's per-parameter state, the copy the optimizer uses in the block)
    try:
        new_state: collections.defaultdict[Tensor, dict[str, Any]] = collections.defaultdict(dict)
        for group, saved, params in plan:
            group["params"] = params
            group.update({k: v for k, v in saved.items() if k != "params"})
            for p, pid in zip(params, saved["params"]):
                given = swap_state.get(pid, {})
                entry = dict(given)
                if isinstance(entry.get("step"), Tensor):
                    entry["step"] = int(entry["step"]._array)  # the optimizers count steps in a Python int
                pairs.append((given, entry))
                new_state[p] = entry
        optimizer.state = new_state
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
        _write_back(pairs)


def _write_back(pairs):
    """Copy the block's new values into the dict's own tensors, in place (an optimizer may have swapped a buffer
    for another, e.g. Adam's speed layer for a view into one flat array): the caller's dict sees the step as
    PyTorch's in-place updates make it see it."""
    for given, entry in pairs:
        for k, tensor in given.items():
            new = entry.get(k)
            if isinstance(tensor, Tensor) and new is not tensor and new is not None:
                value = new._array if isinstance(new, Tensor) else np.asarray(new)
                if value.shape == tensor._array.shape:
                    tensor._array[...] = value


def _prepare(optimizer, swapin_parameters, swapin_optim_state):
    """Check the swap-in dicts against the optimizer: (state by id, [(live group, saved group, its tensors)])."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state (take a step first)")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME}: swapin_optim_state must be a dict shaped as optimizer.state_dict(), "
                           f"got {type(swapin_optim_state).__name__}")
    state = swapin_optim_state.get("state")
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME}: swapin_optim_state['state'] must be a dict from parameter ids to dicts, "
                           f"got {type(state).__name__}")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME}: swapin_optim_state['state'] must be keyed by parameter ids (ints), "
                           "as optimizer.state_dict()'s is, not by tensors")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME}: each parameter's state must be a dict")
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME}: swapin_optim_state['param_groups'] must be a list of dicts, "
                           f"got {type(groups).__name__}")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError(f"{_NAME}: swapin_optim_state has {len(groups)} parameter group(s), the optimizer "
                           f"has {len(optimizer.param_groups)}")
    tensors = list(swapin_parameters.values())
    plan, seen, offset = [], set(), 0
    for i, (live, saved) in enumerate(zip(optimizer.param_groups, groups)):
        if not isinstance(saved, dict):
            raise RuntimeError(f"{_NAME}: param_groups[{i}] must be a dict, got {type(saved).__name__}")
        ids = saved.get("params")
        if not isinstance(ids, list) or not all(isinstance(j, int) for j in ids):
            raise RuntimeError(f"{_NAME}: param_groups[{i}]['params'] must be a list of parameter ids (ints)")
        if len(ids) != len(live["params"]):
            raise RuntimeError(f"{_NAME}: param_groups[{i}] has {len(ids)} parameter(s), the optimizer's group "
                               f"has {len(live['params'])}")
        only_saved = [k for k in saved if k not in live]
        only_live = [k for k in live if k not in saved]
        if only_saved or only_live:
            raise RuntimeError(f"{_NAME}: param_groups[{i}]'s keys differ from the optimizer's group: "
                               f"only in the swap-in group {only_saved}, only in the optimizer's {only_live}")
        if offset + len(ids) > len(tensors):
            raise RuntimeError(f"{_NAME}: {len(tensors)} swap-in parameter(s) for an optimizer with more "
                               "(they must follow the optimizer's parameters one for one, in order)")
        plan.append((live, saved, tensors[offset:offset + len(ids)]))
        offset += len(ids)
        seen.update(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME}: swapin_optim_state['state'] has ids no param group lists: {extra!r}")
    return state, plan
