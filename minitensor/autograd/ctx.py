"""What PyTorch's `ctx` offers beyond saving tensors, and how a node prints: the part of a node a
user's custom Function and a PyTorch tutorial reach for, kept apart from the core of `Function`
(forward, backward, `apply`) so that function.py reads as the idea itself.

A user's Function says, in its forward, which inputs it changed in place (`mark_dirty`), which outputs
get no gradient (`mark_non_differentiable`) and whether a missing output gradient reaches its backward
as zeros or None (`set_materialize_grads`); custom.py acts on them. A node prints as PyTorch's do
(`<MulBackward0 object at 0x...>`) and lists where its gradients go (`next_functions`).
"""
from __future__ import annotations

from typing import Any

from .. import _dtype
from ..tensor import _HookHandle
from .torch_names import torch_node_name


class NodeExtras:
    """PyTorch's `ctx` methods for a user's Function, and a node's PyTorch face (Function's base)."""

    materialize_grads = True  # `set_materialize_grads`
    edges: tuple[tuple[int, Any, tuple[int, ...], Any], ...]  # (set on each node by `Function.apply`)
    # the node's own hooks (`grad_fn.register_prehook`, `grad_fn.register_hook`), run by the engine
    prehooks: list[Any] | None = None
    posthooks: list[Any] | None = None
    _metadata: dict[str, Any] | None = None

    def mark_dirty(self, *tensors: Any) -> None:
        """Say forward changed these inputs in place (and returns them): they become its outputs."""
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        """Say these outputs of forward get no gradient (indices, masks): they won't require grad."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward gets None, not zeros, for an output no gradient reached."""
        self.materialize_grads = bool(value)

    def register_prehook(self, hook: Any) -> _HookHandle:
        """Call `hook(grad_outputs)` before this node's backward runs; a tuple it returns replaces them."""
        if self.prehooks is None:
            self.prehooks = []
        self.prehooks.append(hook)
        return _HookHandle(self.prehooks, hook)

    def register_hook(self, hook: Any) -> _HookHandle:
        """Call `hook(grad_inputs, grad_outputs)` after this node's backward ran (`grad_inputs`: one
        gradient or None per tensor argument of forward); a tuple it returns replaces `grad_inputs`."""
        if self.posthooks is None:
            self.posthooks = []
        self.posthooks.append(hook)
        return _HookHandle(self.posthooks, hook)

    @property
    def metadata(self) -> dict[str, Any]:
        """A dict that stays with this node, for a user's notes (empty at first)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """(node, input index) for each input needing a gradient: a leaf shows as its tensor."""
        return tuple((target, i) for i, target, _, _ in self.edges)

    def torch_name(self) -> str:
        """PyTorch's name of this node (`MulBackward0`, see torch_names.py); `name()` is explain()'s."""
        return torch_node_name(self)

    def __repr__(self) -> str:
        """As PyTorch prints a node: `<MulBackward0 object at 0x7f...>`, a user's Function's with the module
        PyTorch makes its node class in (`<torch.autograd.function.LinearFunctionBackward object at 0x7f...>`)."""
        name = self.torch_name()
        if not type(self).__module__.startswith("minitensor."):
            name = f"{_dtype.shown_as()}.autograd.function.{name}"
        return f"<{name} object at {id(self):#x}>"
