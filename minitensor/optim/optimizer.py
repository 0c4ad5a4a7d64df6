"""`Optimizer`: parameter groups, per-parameter state, zero_grad and state dicts (PyTorch's layout).

An optimizer holds `param_groups`, a list of plain dicts (`{'params': [...], 'lr': 0.01, ...}`) that
users and schedulers may edit between steps, and `state`, a dict from each parameter to its
buffers (momentum, Adam's moments). `step()` reads `p.grad` and updates `p._array` in place with
numpy, outside any graph, bumping `p._version`. Buffers have their parameter's dtype, so float32
models train in float32 and float64 ones in float64.
"""
from __future__ import annotations

import collections
import collections.abc
import functools
import itertools
import math
from typing import Any, Callable, Iterable, Mapping, Union

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.profiler import record_function
from ..nn._module_hooks import RemovableHandle, add_hook
from ..tensor import Tensor

ParamsT = Union[Iterable[Tensor], Iterable[dict[str, Any]]]
"""What an optimizer takes: tensors (`model.parameters()`), or dicts each holding a group's
`'params'` and the options that differ from the defaults."""


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


# hooks around every optimizer's step (`register_optimizer_step_pre_hook`): id -> hook(optimizer, args, kwargs)
_global_step_pre_hooks: dict[int, Callable[..., Any]] = {}
_global_step_post_hooks: dict[int, Callable[..., Any]] = {}


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Call `hook(optimizer, args, kwargs)` before every optimizer's step (before its own pre-hooks); it may
    return (new_args, new_kwargs) for the step."""
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Call `hook(optimizer, args, kwargs)` after every optimizer's step (after its own post-hooks)."""
    return add_hook(_global_step_post_hooks, hook)


class Optimizer:
    """Base class: subclasses set `defaults`, implement `_update_group(group)` and `_state_spec(group)`."""

    # each parameter's buffers (momentum, Adam's moments), and the groups with their options
    state: collections.defaultdict[Tensor, dict[str, Any]]
    param_groups: list[dict[str, Any]]

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        self._optimizer_step_pre_hooks: dict[int, Callable[..., Any]] = {}
        self._optimizer_step_post_hooks: dict[int, Callable[..., Any]] = {}
        self._optimizer_state_dict_pre_hooks: dict[int, Callable[..., Any]] = {}
        self._optimizer_state_dict_post_hooks: dict[int, Callable[..., Any]] = {}
        self._optimizer_load_state_dict_pre_hooks: dict[int, Callable[..., Any]] = {}
        self._optimizer_load_state_dict_post_hooks: dict[int, Callable[..., Any]] = {}
        self._patch_step_function()
        if isinstance(params, Tensor) or isinstance(params, (set, frozenset)):
            raise TypeError(
                f"{type(self).__name__}: params should be an iterable of Tensors or dicts (in a fixed order), "
                f"got {type(params).__name__}"
            )
        groups: list[Any] = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    # ---- groups ------------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options; options it leaves out take the defaults."""
        if not isinstance(param_group, dict):
            raise TypeError(f"add_param_group: a param group must be a dict, got {type(param_group).__name__}")
        group = dict(param_group)
        params = group.get("params")
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("add_param_group: params must be an ordered iterable (a list), not a set")
        elif params is None:
            raise ValueError("add_param_group: the group has no 'params' entry")
        params = list(params)
        seen = set()
        name = type(self).__name__
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{name} can only optimize Tensors, but params[{i}] is a {type(p).__name__}")
            if p.grad_fn is not None:
                raise ValueError(f"{name}: can't optimize a non-leaf Tensor (params[{i}], shape {tuple(p.shape)})")
            if _dtype.kind(p.dtype) != "f":
                raise ValueError(
                    f"{name}: params[{i}] has dtype {p.dtype}; only floating point tensors can be optimized"
                )
            if id(p) in seen:
                raise ValueError(f"{name}: params[{i}] appears twice in the same parameter group")
            seen.add(id(p))
        group["params"] = params
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {k}")
            group.setdefault(k, v)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if existing & seen:
            raise ValueError("some parameters appear in more than one parameter group")
        self._check_group(group)
        self.param_groups.append(group)

    def _check_group(self, group):
        """Raise ValueError for an invalid option in `group` (and normalise it, e.g. betas to a tuple)."""
        if not any(c is not Optimizer and c.__module__.startswith("minitensor.") for c in type(self).__mro__):
            return  # a user's own Optimizer (not built on Adam, SGD ...) checks its own options, as in PyTorch
        if not float(group["lr"]) >= 0.0:
            raise ValueError(f"Invalid learning rate: {group['lr']}")
        if not float(group.get("weight_decay", 0.0)) >= 0.0:
            raise ValueError(f"Invalid weight_decay value: {group['weight_decay']}")

    # ---- gradients and steps -----------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's `.grad`: to None (the default, as PyTorch) or to zeros in place."""
        from ..nn.module import _zero_grad

        with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):  # (a profile's range)
            for group in self.param_groups:
                for p in group["params"]:
                    _zero_grad(p, set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; `closure` (re)computes and returns the loss."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        self._opt_called = True
        with grad_mode.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        return loss

    # ---- hooks around the step (PyTorch's: every class's `step`, a user's subclass's too, is wrapped once
    # by `profile_hook_step`, which runs the hooks and names the step's range in a profile) ----------------
    @staticmethod
    def profile_hook_step(func: Callable[..., Any]) -> Callable[..., Any]:
        """`func` (a `step`) inside a profiler range `Optimizer.step#<class>.step`, with the step hooks
        around it: pre-hooks (global ones first) may replace its arguments, post-hooks see them."""
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self = args[0]
            with record_function(f"Optimizer.step#{type(self).__name__}.step"):
                for pre_hook in itertools.chain(_global_step_pre_hooks.values(),
                                                self._optimizer_step_pre_hooks.values()):
                    result = pre_hook(self, args, kwargs)
                    if result is not None:
                        if not (isinstance(result, tuple) and len(result) == 2):
                            raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), "
                                               f"but got {result}.")
                        args, kwargs = result
                out = func(*args, **kwargs)
                self._optimizer_step_code()
                for post_hook in itertools.chain(self._optimizer_step_post_hooks.values(),
                                                 _global_step_post_hooks.values()):
                    post_hook(self, args, kwargs)
                return out
        wrapper.hooked = True  # type: ignore[attr-defined]
        return wrapper

    def _patch_step_function(self) -> None:
        if not getattr(type(self).step, "hooked", False):
            type(self).step = self.profile_hook_step(type(self).step)  # type: ignore[method-assign]

    def _optimizer_step_code(self) -> None:
        """Runs after each step, inside its range: an empty entry point for profilers and debuggers (PyTorch's)."""

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call `hook(optimizer, args, kwargs)` before each step; it may return (new_args, new_kwargs)."""
        return add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call `hook(optimizer, args, kwargs)` after each step."""
        return add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call `hook(optimizer)` before `state_dict()` builds the dict."""
        return add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call `hook(optimizer, state_dict)` on the dict `state_dict()` built; a dict it returns is returned
        instead."""
        return add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call `hook(optimizer, state_dict)` before `load_state_dict` loads; a dict it returns is loaded
        instead."""
        return add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call `hook(optimizer)` after `load_state_dict` has loaded."""
        return add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    def _update_group(self, group):
        raise NotImplementedError

    @staticmethod
    def _scalar_dtype():
        """The dtype of scalar state (NAdam's mu_product, ASGD's eta and mu): float64 when the default dtype
        is float64, else float32, as PyTorch's, so their rounding (and so the updates) equal PyTorch's."""
        return np.float64 if _dtype.get_default_dtype() == _dtype.float64 else np.float32

    @staticmethod
    def _grad(p, maximize):
        """p's gradient as an ndarray of p's dtype and shape (negated when maximizing)."""
        g = p.grad._array
        if g.shape != p._array.shape:
            raise RuntimeError(f"optimizer step: gradient of shape {g.shape} for a parameter of shape {p._array.shape}")
        if g.dtype != p._array.dtype:
            g = g.astype(p._array.dtype)
        return -g if maximize else g

    # ---- state dicts -------------------------------------------------------------------------
    def _state_spec(self, group):
        """key -> 'array' | 'array_or_none' | 'step' | 'scalar' | 'any' for the per-parameter state under these
        options ('scalar': a 0-dim tensor; 'any': kept as given, e.g. LBFGS's history lists)."""
        return {}

    def _param_state_spec(self, group, p):
        """The spec of one parameter's state: the group's, unless the buffers depend on the parameter
        (Adafactor's row and column factors; a kind may then be ('array', shape) for a buffer whose shape
        is not its parameter's)."""
        return self._state_spec(group)

    def state_dict(self) -> dict[str, Any]:
        """{'state': {index: {name: value}}, 'param_groups': [{option: value, 'params': [index, ...]}]}.

        Parameters are numbered 0, 1, ... across the groups in order, as in PyTorch. Unlike PyTorch's,
        the state tensors are copies: the dict is a snapshot that later steps do not change.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        index: dict[int, int] = {}
        groups = []
        for g in self.param_groups:
            packed = {k: (tuple(v) if isinstance(v, list) else v) for k, v in g.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in g["params"]]
            groups.append(packed)
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                if p in self.state and self.state[p]:
                    state[index[id(p)]] = {k: _snapshot(v) for k, v in self.state[p].items()}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            returned = post_hook(self, state_dict)
            state_dict = state_dict if returned is None else returned
        return state_dict

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore options and state. Everything is validated first; on any problem nothing changes.

        Checked: the number of groups and of parameters in each, the options, and for every state
        entry its parameter index, its keys, and each buffer's shape (buffers are cast to their
        parameter's dtype). The error lists every problem found.
        """
        name = type(self).__name__
        problems = []
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            returned = pre_hook(self, state_dict)
            state_dict = state_dict if returned is None else returned
        if not isinstance(state_dict, collections.abc.Mapping) or not {"state", "param_groups"} <= set(state_dict):
            raise ValueError(f"{name}.load_state_dict: expected a dict with keys 'state' and 'param_groups'")
        saved_groups = list(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: loaded state dict has {len(saved_groups)} parameter group(s), "
                f"the optimizer has {len(self.param_groups)} (nothing was changed)"
            )
        new_groups, id_map = [], {}
        for gi, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if not isinstance(saved, collections.abc.Mapping) or "params" not in saved:
                problems.append(f"param_groups[{gi}] is not a dict with a 'params' list")
                continue
            ids = list(saved["params"])
            if len(ids) != len(group["params"]):
                problems.append(
                    f"param_groups[{gi}] has {len(ids)} parameter(s) in the loaded state dict but "
                    f"{len(group['params'])} in the optimizer"
                )
                continue
            for i, p in zip(ids, group["params"]):
                key = _as_index(i)
                if key is None or key in id_map:
                    problems.append(f"param_groups[{gi}] lists parameter id {i!r} (not an int, or listed twice)")
                else:
                    id_map[key] = p
            new = {k: v for k, v in group.items()}
            new.update({k: v for k, v in saved.items() if k != "params"})
            new["params"] = group["params"]
            try:
                self._check_group(new)
            except (ValueError, TypeError, KeyError) as e:
                problems.append(f"param_groups[{gi}]: {e}")
            new_groups.append(new)
        group_of = {id(p): g for g in new_groups for p in g["params"]}
        new_state: collections.defaultdict[Tensor, dict[str, Any]] = collections.defaultdict(dict)
        saved_state = state_dict["state"]
        if not isinstance(saved_state, collections.abc.Mapping):
            problems.append(
                f"'state' must be a dict from parameter id to a dict of buffers, got {type(saved_state).__name__}"
            )
            saved_state = {}
        for raw_key, entry in saved_state.items():
            key = _as_index(raw_key)
            p = id_map.get(key)
            if p is None:
                problems.append(f"state for parameter id {raw_key!r}, which no param group lists")
                continue
            if not isinstance(entry, collections.abc.Mapping):
                problems.append(f"state[{raw_key!r}] is a {type(entry).__name__}, expected a dict")
                continue
            spec = self._param_state_spec(group_of[id(p)], p) if id(p) in group_of else {}
            if spec is None:  # free-form state (LBFGS): every entry is kept as given
                spec = {k: "any" for k in entry}
            missing = [k for k in spec if k not in entry]
            extra = [k for k in entry if k not in spec]
            if missing or extra:
                problems.append(
                    f"state[{raw_key!r}] (parameter of shape {tuple(p.shape)}): "
                    + (f"missing {missing}" if missing else "")
                    + ("; " if missing and extra else "")
                    + (f"unexpected {extra}" if extra else "")
                )
                continue
            converted = {}
            for k, kind in spec.items():
                value, err = _convert_state(entry[k], kind, p)
                if err:
                    problems.append(f"state[{raw_key!r}][{k!r}]: {err}")
                converted[k] = value
            new_state[p] = converted
        if problems:
            raise ValueError(
                f"Error(s) in loading state_dict for {name} (nothing was changed):\n\t" + "\n\t".join(problems)
            )
        for group, new in zip(self.param_groups, new_groups):
            # Update the dicts in place: code holding a group (a scheduler, a user) sees the new values.
            group.clear()
            group.update(new)
        self.state = new_state
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(group):
                if k != "params":
                    lines.append(f"    {k}: {group[k]}")
        lines.append(")")
        return "\n".join(lines)


def _check_fused_foreach(fused, foreach):
    """PyTorch's one rule on its kernel-choice flags (which choose nothing here: numpy updates are one path)."""
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_not_differentiable(name, differentiable):
    if differentiable:
        raise NotImplementedError(
            f"{name}: differentiable=True is not supported (minitensor's updates run outside the graph)"
        )


def _snapshot(value):
    """A copy of one state value that later steps do not change (tensors copied, lists copied item by item)."""
    if isinstance(value, Tensor):
        return Tensor._make(np.array(value._array, copy=True))
    if isinstance(value, list):
        return [_snapshot(v) for v in value]
    return value


def _lerp_(a, b, weight):
    """a += weight * (b - a) in place, by the two formulas PyTorch's lerp uses (the second for weight >= 0.5),
    so moving averages round as PyTorch's do."""
    if weight < 0.5:
        a += weight * (b - a)
    else:
        a[...] = b - (b - a) * (1 - weight)
    return a


def _as_index(key):
    if isinstance(key, (bool, np.bool_)):
        return None
    if isinstance(key, (int, np.integer)):
        return int(key)
    if isinstance(key, str) and key.isdigit():
        return int(key)
    return None


def _convert_state(value, kind, p):
    """(converted value, error message or None) for one saved state entry of parameter p."""
    if kind == "step":
        raw = value._array if isinstance(value, Tensor) else value
        try:
            arr = np.asarray(raw)
            step = float(arr) if arr.size == 1 and _dtype.kind(arr.dtype) in "iuf" else math.nan
        except (TypeError, ValueError):
            step = math.nan
        whole = math.isfinite(step) and step >= 0 and step == int(step)
        if not whole:
            return None, f"expected a non-negative whole step count, got {value!r}"
        return int(step), None
    if kind == "any":
        return _snapshot(value), None
    if kind == "scalar":
        raw = value._array if isinstance(value, Tensor) else value
        try:
            arr = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError):
            return None, f"expected a number, got {type(value).__name__}"
        if arr.size != 1:
            return None, f"expected a single number, got an array of shape {arr.shape}"
        return Tensor._make(np.array(arr.reshape(()), dtype=Optimizer._scalar_dtype())), None
    if value is None and kind == "array_or_none":
        return None, None
    shape = p._array.shape
    if isinstance(kind, tuple):
        kind, shape = kind
    raw = value._array if isinstance(value, Tensor) else value
    try:
        arr = np.asarray(raw)
    except (TypeError, ValueError):
        return None, f"expected an array, got {type(value).__name__}"
    if _dtype.kind(arr.dtype) not in "fiu":
        return None, f"expected a numeric array, got dtype {arr.dtype}"
    if arr.shape != shape:
        if shape != p._array.shape:
            return None, f"shape {arr.shape} is not {shape} (for its parameter of shape {p._array.shape})"
        return None, f"shape {arr.shape} does not match its parameter's shape {p._array.shape}"
    return Tensor._make(np.array(arr, dtype=p._array.dtype, copy=True)), None
