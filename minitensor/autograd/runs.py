"""Which backward run is in progress, and what it will execute: asked by `register_multi_grad_hook`,
whose hook must know, at the first gradient it sees, how many of its tensors will get one in this run.

The engine's `run_backward` is wrapped by `tracked`, which only notes the run's roots and inputs; the
part of the graph the run executes is worked out from them when (and if) a hook asks.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from ..tensor import Tensor
from .pruning import needed_nodes


class Run:
    """One call of the engine: its roots (nodes or leaves backward starts from) and `capture`, the
    inputs of `autograd.grad` / `backward(inputs=...)` (None: every leaf). `for_grad`: autograd.grad's."""

    def __init__(self, roots: list[Any], capture: list[Tensor] | None, for_grad: bool) -> None:
        self.roots, self.capture, self.for_grad = roots, capture, for_grad
        self._executes: tuple[set[Any], set[int]] | None = None

    def executes(self, t: Tensor) -> bool:
        """Whether this run reaches `t`'s node (a leaf: its accumulation), PyTorch's "will execute"."""
        if self._executes is None:
            self._executes = self._plan()
        nodes, leaves = self._executes
        return t.grad_fn in nodes if t.grad_fn is not None else id(t) in leaves

    def _plan(self) -> tuple[set[Any], set[int]]:
        nodes = [r for r in self.roots if not isinstance(r, Tensor)]
        leaves = {id(r) for r in self.roots if isinstance(r, Tensor)}
        seen, stack = set(nodes), list(nodes)
        while stack:
            for _, child, _, _ in stack.pop().edges:
                if isinstance(child, Tensor):
                    leaves.add(id(child))
                elif child not in seen:
                    seen.add(child)
                    stack.append(child)
        if self.capture:  # only what leads to the inputs runs, and only the inputs among the leaves
            seen &= needed_nodes(nodes, self.capture)
            leaves &= {id(t) for t in self.capture}
        return seen, leaves


_current = threading.local()


def current() -> Run | None:
    """The innermost backward run of this thread, or None outside backward."""
    return getattr(_current, "run", None)


def tracked(run_backward: Callable[..., Any]) -> Callable[..., Any]:
    """`run_backward`, noting its run (`current()`) while it runs, including the leaves' hooks at its end."""
    @functools.wraps(run_backward)
    def wrapper(pending, retain_graph, create_graph, capture=None, visit=None, fill_retained=True,
                run_captured=False):
        prev = current()
        _current.run = Run(list(pending), capture, capture is not None and not run_captured)
        try:
            return run_backward(pending, retain_graph, create_graph, capture, visit, fill_retained, run_captured)
        finally:
            _current.run = prev
    return wrapper
