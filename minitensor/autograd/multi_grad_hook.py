"""`register_multi_grad_hook(tensors, fn, mode=...)`: one hook over the gradients of several tensors.

mode "all": once per backward run, `fn(grads)` gets one gradient per tensor, None for each tensor the
run does not reach (it is called as soon as the last tensor the run reaches has its gradient).
mode "any": once per backward run, `fn(grad)` gets the first of the tensors' gradients computed.
Both are built from ordinary tensor hooks (`register_hook`), which see each gradient; which tensors a
run reaches is asked of the run itself (runs.py).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..tensor import Tensor, _HookHandle
from . import runs


class MultiHandle:
    """What `register_multi_grad_hook` returns: `remove()` takes every tensor's part of the hook away."""

    def __init__(self, handles: tuple[_HookHandle, ...]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self) -> MultiHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable[[Any], None], *, mode: str = "all") -> MultiHandle:
    """Call `fn` once per backward run with the gradients of `tensors` (mode "all") or the first of them ("any")."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    for t in tensors:
        if not (isinstance(t, Tensor) and t.requires_grad):
            raise AssertionError("Expected gradient function to be set")
    state: dict[str, Any] = {"run": None}
    make = _any_hook if mode == "any" else _all_hook
    return MultiHandle(tuple(t.register_hook(make(state, tensors, i, fn)) for i, t in enumerate(tensors)))


def _fresh(state: dict[str, Any]) -> bool:
    """Start this hook's record of the current run if it has none yet; whether it was started now."""
    run = runs.current()
    if state["run"] is run:
        return False
    state["run"], state["grads"], state["expected"] = run, {}, None
    return True


def _any_hook(state: dict[str, Any], tensors: tuple[Tensor, ...], i: int, fn: Callable[[Any], None]) -> Any:
    def hook(g: Tensor) -> None:
        if _fresh(state):
            fn(g)
    return hook


def _all_hook(state: dict[str, Any], tensors: tuple[Tensor, ...], i: int, fn: Callable[[Any], None]) -> Any:
    def hook(g: Tensor) -> None:
        _fresh(state)
        run = state["run"]
        if state["expected"] is None:
            if run is not None and run.for_grad and any(t.grad_fn is None for t in tensors):
                raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently "
                                   "running autograd.grad(). This is currently not supported.")
            state["expected"] = sum(run is None or run.executes(t) for t in tensors)
        state["grads"][i] = g
        if len(state["grads"]) == state["expected"]:
            grads = [state["grads"].get(j) for j in range(len(tensors))]
            state["grads"] = {}
            fn(grads)
    return hook
