"""Hooks on the tensors a node keeps for its backward: `saved_tensors_hooks(pack_hook, unpack_hook)`,
`save_on_cpu`, `disable_saved_tensors_hooks`.

Inside `with saved_tensors_hooks(pack, unpack):` every node recorded that reads values in backward
(`Function.saves_values`) hands each tensor PyTorch's node saves (saved_names.py; for an op not there,
its tensor arguments and its output) to `pack(t)` and keeps only what pack returned: the tensor itself
is replaced by a stand-in of its shape and dtype that holds no memory. Just before that node's backward
runs, `unpack(packed)` gives each tensor back, and backward reads that. The innermost `with` wins. As in
PyTorch, a packed tensor is no longer checked for in-place changes (the node no longer holds it), and a
pack hook must not change its input in place. A user's Function packs each `save_for_backward` tensor
(custom.py). `grad_fn._raw_saved_<name>.register_hooks` packs one tensor the same way (saved_attrs.py).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..tensor import Tensor
from . import grad_mode
from .freeing import _stand_in
from .function import Function
from .saved_names import in_table, is_saved, saved_entry

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
        """Replace what the node `ctx` keeps for backward by what pack_hook returns (called by Function.apply):
        the tensors PyTorch's node saves (saved_names.py), in its order; for an op not in that table, every
        tensor argument and the output."""
        if _refusal() is not None:
            raise RuntimeError(_refusal())
        for name, where, transposed in _slots_to_pack(ctx):
            pack_slot(ctx, name, where, transposed, self.pack_hook, self.unpack_hook)

    def _pack(self, t: Tensor) -> Any:
        return call_pack(self.pack_hook, t)


def _slots_to_pack(ctx: Any) -> list[tuple[str, Any, bool]]:
    """(name, argument position or "result", transposed) for each tensor the node hands to pack_hook."""
    entry = saved_entry(ctx) if in_table(ctx) else None
    if entry is not None:
        return [(s.name, s.source, s.transposed) for s in entry.tensors if is_saved(ctx, s)
                and (s.source == "result" or isinstance(ctx.inputs[s.source], Tensor))]
    slots: list[tuple[str, Any, bool]] = [(f"input {i}", i, False) for i, a in enumerate(ctx.inputs)
                                          if isinstance(a, Tensor)]
    if "saved_output" in vars(ctx) and ctx._out() is not None:
        slots.append(("result", "result", False))
    return slots


def pack_slot(ctx: Any, name: str, where: Any, transposed: bool, pack_hook: Callable[[Tensor], Any],
              unpack_hook: Callable[[Any], Tensor], detached: bool = False) -> None:
    """Hand one tensor the node keeps to pack_hook and keep what it returned in its place (a stand-in
    holding no memory takes the tensor's place, and the node no longer checks its version). `detached`:
    pack_hook gets the tensor without its graph (as PyTorch's `register_hooks` on one saved tensor)."""
    packed = vars(ctx).get("packed")
    if packed is None:
        packed = ctx.packed = Packed()
    if where == "result":
        out = ctx._out() if ctx._out() is not None else ctx.saved_output
        value = call_pack(pack_hook, out.detach() if detached else out)
        ctx.saved_output = _stand_in(ctx.saved_output)
        packed.slots[where] = (name, None, value, unpack_hook, False)
    else:
        a = ctx.inputs[where]
        with grad_mode.no_grad():  # (linear's weight: PyTorch's node keeps W^T, a view)
            shown = a.t() if transposed else a
        value = call_pack(pack_hook, shown.detach() if detached else shown)
        packed.slots[where] = (name, _source(a), value, unpack_hook, transposed)
        ctx.inputs = ctx.inputs[:where] + (_stand_in(a),) + ctx.inputs[where + 1:]
        ctx.versions = tuple((t, v) for t, v in ctx.versions if t is not a)  # (what it no longer holds, it can't check)
    ctx.fast_backward = None  # the speed layer's numpy VJP may read arrays forward kept: the op's own reads inputs


def call_pack(pack_hook: Callable[[Tensor], Any], t: Tensor) -> Any:
    """pack_hook(t), recording nothing (as PyTorch), refused if it changed t in place."""
    version, modes = t._version, grad_mode.modes
    prev, modes.grad_enabled = modes.grad_enabled, False
    try:
        result = pack_hook(t)
    finally:
        modes.grad_enabled = prev
    if t._version != version:
        raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors provided as "
                           "input to pack hook cannot be modified by in-place operations as this can lead to "
                           "unexpected side-effects. Please open an issue if you need to perform in-place "
                           "operations on the input to a pack hook.")
    return result


class Packed:
    """What a node keeps under saved_tensors_hooks (or `_raw_saved_<name>.register_hooks`): for each
    packed tensor, by argument position or "result" (a composite op names its node after forward: the
    position stays), PyTorch's name, where its gradient goes, pack_hook's result, the unpack_hook to read it."""

    def __init__(self) -> None:
        # where -> (PyTorch's name, where its gradient goes, packed, unpack_hook, transposed)
        self.slots: dict[Any, tuple[str, Any, Any, Callable[[Any], Tensor], bool]] = {}

    def read(self, where: Any) -> Tensor:
        """unpack_hook's tensor for the packed tensor at `where` (as PyTorch's node shows it)."""
        _, _, value, unpack_hook, _ = self.slots[where]
        return _unpacked(unpack_hook(value))

    def unpack(self, ctx: Any) -> None:
        """Put unpack_hook's tensors where backward reads them (called by the engine before the node's VJP).
        An unpacked argument keeps the argument's place in the graph, so create_graph differentiates through it."""
        inputs = list(ctx.inputs)
        for where, (_, source, _, _, transposed) in self.slots.items():
            t = self.read(where)
            if where == "result":
                ctx.saved_output = t.detach()
                ctx.output_version = ctx.saved_output._version
                continue
            if transposed:
                t = t.t()
            inputs[where] = in_place_of(source, t)
        ctx.inputs = tuple(inputs)


def in_place_of(source: Tensor | None, t: Tensor) -> Tensor:
    """An unpacked tensor `t` where backward reads it: tied to `source` (see `_source`) in the graph, so
    create_graph differentiates through it; `t` itself when there is nothing to tie it to."""
    return t if source is None or t is source else Unpacked.apply(source, t.detach())


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
