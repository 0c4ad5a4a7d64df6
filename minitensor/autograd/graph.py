"""`torch.autograd.graph`: the graph's nodes as a type, and the in-place version a node checks.

Every `grad_fn` is a `Node` (`isinstance(y.grad_fn, Node)`): it has `name()`, `next_functions`,
`metadata`, `register_prehook(hook(grad_outputs))` and `register_hook(hook(grad_inputs, grad_outputs))`
(autograd/ctx.py; the engine runs them around the node's backward). `increment_version(t)` tells the
nodes that saved `t` that it changed, when it was changed where autograd cannot see (in numpy, say).

`GradientEdge`/`get_gradient_edge` (gradient_edge.py) name a place in the graph for `autograd.grad`;
`register_multi_grad_hook` (multi_grad_hook.py) hooks several tensors' gradients at once;
`saved_tensors_hooks`, `save_on_cpu`, `disable_saved_tensors_hooks` (saved_hooks.py) hook what nodes keep. The two CUDA
stream switches are accepted and do nothing (minitensor has no streams), and
`region_activation_memory_budget` refuses, as PyTorch does outside `torch.compile`.
"""
from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import Any

from ..tensor import Tensor
from .ctx import AccumulateGrad
from .function import Function
from .gradient_edge import GradientEdge, get_gradient_edge
from .multi_grad_hook import register_multi_grad_hook
from .saved_hooks import disable_saved_tensors_hooks, save_on_cpu, saved_tensors_hooks

__all__ = ["Node", "increment_version", "GradientEdge", "get_gradient_edge", "register_multi_grad_hook",
           "region_activation_memory_budget", "set_warn_on_accumulate_grad_stream_mismatch",
           "set_override_stale_capture_stream", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]


class Node(abc.ABC):
    """The type of every node of the graph (a tensor's `grad_fn`); minitensor's are `Function`s."""

    @abc.abstractmethod
    def name(self) -> str: ...

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple[tuple[Any, int], ...]: ...

    @property
    @abc.abstractmethod
    def metadata(self) -> dict[str, Any]: ...

    @abc.abstractmethod
    def register_hook(self, fn: Any) -> Any: ...

    @abc.abstractmethod
    def register_prehook(self, fn: Any) -> Any: ...


Node.register(Function)
Node.register(AccumulateGrad)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Count one in-place change of `tensor` (or of each tensor in an iterable): a node that saved it
    then refuses to run its backward, as after any in-place op."""
    tensors = [tensor] if isinstance(tensor, Tensor) else tensor
    if not isinstance(tensors, Iterable):
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
        t._bump_version()


def region_activation_memory_budget(budget: float) -> Any:
    """PyTorch's budget for what `torch.compile`'s partitioner recomputes: checked as PyTorch checks it,
    then refused, since it acts only inside a compiled region (as PyTorch refuses it in eager mode)."""
    name = "torch.autograd.graph.region_activation_memory_budget"
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError(f"{name}: expects a float, got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError(f"{name}: must be in [0, 1], got {budget}")
    raise RuntimeError(f"{name} can only be used inside a torch.compile region; it has no effect in eager mode.")


def set_warn_on_accumulate_grad_stream_mismatch(enabled: bool) -> None:
    """Accepted and ignored: a CUDA stream switch, and minitensor runs on the CPU alone."""


def set_override_stale_capture_stream(enabled: bool) -> None:
    """Accepted and ignored: a switch for CUDA graph capture, which minitensor has not."""
