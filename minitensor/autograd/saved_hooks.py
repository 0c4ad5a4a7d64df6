"""Hooks on the tensors a node keeps for its backward: `saved_tensors_hooks(pack_hook, unpack_hook)`,
`save_on_cpu`, `disable_saved_tensors_hooks`.

Inside `with saved_tensors_hooks(pack, unpack):` every node recorded that reads values in backward
(`Function.saves_values`) hands each tensor it keeps (its tensor arguments and its output) to
`pack(t)` and keeps only what pack returned: the tensor itself is replaced by a stand-in of its shape
and dtype that holds no memory. Just before that node's backward runs, `unpack(packed)` gives each
tensor back, and backward reads that. The innermost `with` wins. As in PyTorch, a kept tensor is no
longer checked for in-place changes (the node no longer holds it), and a pack hook must not change
its input in place.

Differences from PyTorch: PyTorch's node keeps only what its derivative formula reads (`a * b`
packs a and b, `exp` its result), minitensor's keeps every tensor argument and its output, so the
hooks are called for more tensors on many ops (see docs/pytorch_compatibility.md). A user's Function
keeps what it gave `save_for_backward`, as in PyTorch; this first version does not pack those.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..tensor import Tensor
from . import grad_mode
from .freeing import _stand_in
from .function import Function

_disabled = threading.local()  # .message: why saved tensors hooks are refused here (None: they are allowed)


def _refusal() -> str | None:
    return getattr(_disabled, "message", None)


class saved_tensors_hooks:
    """Context manager: nodes recorded inside keep `pack_hook(t)` for each tensor t their backward reads,
    and their backward reads `unpack_hook(packed)`."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _refusal() is not None:
            raise RuntimeError(_refusal())
        modes = grad_mode.modes
        self._prev, modes.saved_hooks = modes.saved_hooks, self
        return self

    def __exit__(self, *exc: object) -> None:
        grad_mode.modes.saved_hooks = self._prev

    def pack_node(self, ctx: Any) -> None:
        """Replace what the node `ctx` keeps for backward by what pack_hook returns (called by Function.apply)."""
        if _refusal() is not None:
            raise RuntimeError(_refusal())
        packed = Packed(self.unpack_hook)
        inputs = list(ctx.inputs)
        for i, a in enumerate(inputs):
            if isinstance(a, Tensor):
                packed.inputs.append((i, _source(a), self._pack(a)))
                inputs[i] = _stand_in(a)
        out = ctx._out()
        if "saved_output" in vars(ctx) and out is not None:
            packed.output = self._pack(out)
            ctx.saved_output = _stand_in(ctx.saved_output)
        ctx.inputs, ctx.versions = tuple(inputs), ()  # (what the node no longer holds, it can't check)
        ctx.fast_backward = None  # the speed layer's numpy VJP may read arrays forward kept: the op's own reads inputs
        ctx.packed = packed

    def _pack(self, t: Tensor) -> Any:
        version, modes = t._version, grad_mode.modes
        prev, modes.grad_enabled = modes.grad_enabled, False  # (as PyTorch: what pack computes records nothing)
        try:
            result = self.pack_hook(t)
        finally:
            modes.grad_enabled = prev
        if t._version != version:
            raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors provided as "
                               "input to pack hook cannot be modified by in-place operations as this can lead to "
                               "unexpected side-effects. Please open an issue if you need to perform in-place "
                               "operations on the input to a pack hook.")
        return result


class Packed:
    """What a node keeps under saved_tensors_hooks: pack_hook's results, and unpack_hook to read them."""

    def __init__(self, unpack_hook: Callable[[Any], Tensor]) -> None:
        self.unpack_hook = unpack_hook
        self.inputs: list[tuple[int, Any, Any]] = []  # (argument index, where its gradient goes, packed)
        self.output: Any = None

    def unpack(self, ctx: Any) -> None:
        """Put unpack_hook's tensors where backward reads them (called by the engine before the node's VJP).
        An unpacked argument keeps the argument's place in the graph, so create_graph differentiates through it."""
        inputs = list(ctx.inputs)
        for i, source, value in self.inputs:
            t = _unpacked(self.unpack_hook(value))
            inputs[i] = t if source is None or t is source else Unpacked.apply(source, t.detach())
        ctx.inputs = tuple(inputs)
        if self.output is not None:
            ctx.saved_output = _unpacked(self.unpack_hook(self.output)).detach()
            ctx.output_version = ctx.saved_output._version


def _source(a: Tensor) -> Tensor | None:
    """What an unpacked argument is tied to in the graph: the leaf itself (the node's edge holds it anyway),
    or a stand-in holding no memory with the argument's grad_fn; None for a tensor needing no gradient."""
    if not a._rg or a.grad_fn is None:
        return a if a._rg else None
    s = _stand_in(a).detach()
    s.grad_fn, s._rg = a.grad_fn, True
    return s


class Unpacked(Function):
    r"""An unpacked tensor in the argument's place in the graph, for create_graph:
    out = value;   VJP: g_source = g (the argument's own gradient), g_value = None"""

    saves_values = False

    @staticmethod
    def forward(ctx: Any, source: Tensor, value: Tensor) -> Any:
        return value._array

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return g, None


def _unpacked(t: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(t).__name__}")
    return t


class save_on_cpu(saved_tensors_hooks):
    """saved_tensors_hooks that keep a copy of each saved tensor on the CPU and give it back on its device.
    minitensor's tensors are all on the CPU already: the copy is what the node keeps; `pin_memory` is accepted."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        self.pin_memory, self.device_type = pin_memory, device_type
        super().__init__(_copy, _same)


def _copy(t: Tensor) -> Tensor:
    return t.detach().clone()


def _same(t: Tensor) -> Tensor:
    return t


class disable_saved_tensors_hooks:
    """Context manager: inside, entering saved_tensors_hooks (or recording a node under hooks entered
    outside) raises RuntimeError(error_message)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self._prev, _disabled.message = _refusal(), self.error_message

    def __exit__(self, *exc: object) -> None:
        _disabled.message = self._prev
