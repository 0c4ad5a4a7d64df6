"""`torch.autograd.graph`: the graph's nodes as a type, and the in-place version a node checks.

Every `grad_fn` is a `Node` (`isinstance(y.grad_fn, Node)`): it has `name()`, `next_functions`,
`metadata`, `register_prehook(hook(grad_outputs))` and `register_hook(hook(grad_inputs, grad_outputs))`
(autograd/ctx.py; the engine runs them around the node's backward). `increment_version(t)` tells the
nodes that saved `t` that it changed, when it was changed where autograd cannot see (in numpy, say).

Not here: the hooks on saved tensors (`saved_tensors_hooks`, `save_on_cpu`), since a minitensor node
keeps its inputs themselves with no hook between; `register_multi_grad_hook`, gradient edges and the
CUDA stream switches.
"""
from __future__ import annotations

import abc
from collections.abc import Iterable
from typing import Any

from ..tensor import Tensor
from .ctx import AccumulateGrad
from .function import Function

__all__ = ["Node", "increment_version"]


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
