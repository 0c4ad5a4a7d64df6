"""`grad_fn._saved_<name>` and `grad_fn._raw_saved_<name>`: what PyTorch's node saved, read from
minitensor's node by the table in saved_names.py (properties of NodeExtras, one per name, so nothing is
computed for a node unless asked).

- `_saved_<input>` is the argument itself (`y.grad_fn._saved_self is x`, as in PyTorch); a number
  argument shows as PyTorch's wrapped 0-d tensor (float64, int64 or bool); None where PyTorch's node
  didn't save it (`a * b` keeps `self` only if b requires grad).
- `_saved_result` is a new tensor equal to the output, with the node as its grad_fn (not the output
  object: PyTorch's node can't hold its own output without a cycle, nor can minitensor's).
- under saved_tensors_hooks (or a registered pair), each read calls unpack_hook.
- once backward has freed the graph, a saved tensor raises PyTorch's error.
- `_raw_saved_<name>` is a `SavedTensor`: `register_hooks(pack_hook, unpack_hook)` packs that one tensor now.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tensor import Tensor
from .saved_names import Slot, in_table, is_saved, saved_entry
from .torch_names import torch_node_name

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
         "if you need to access saved tensors after calling backward.")


def saved_attribute(node: Any, attr: str) -> Any:
    """`node._saved_<name>` or `node._raw_saved_<name>`, as PyTorch's node gives it."""
    raw = attr.startswith("_raw_saved_")
    name = attr[len("_raw_saved_"):] if raw else attr[len("_saved_"):]
    missing = AttributeError(f"'{torch_node_name(node)}' object has no attribute '{attr}'")
    if not in_table(node):
        raise missing
    if node.inputs is None:  # backward freed what the node kept (its arguments too: the rule can't be read)
        if raw:
            return SavedTensor(node, name)
        raise RuntimeError(FREED)
    entry = saved_entry(node)
    if entry is None:
        raise missing
    slot = next((s for s in entry.tensors if s.name == name), None)
    if slot is not None:
        return SavedTensor(node, name, slot) if raw else _value(node, slot)
    if name in entry.values and not raw:
        return entry.values[name]
    if name in entry.derived:
        raise AttributeError(f"'{torch_node_name(node)}' object has no attribute '{attr}': PyTorch's node computes "
                             f"this tensor in forward, minitensor's node keeps no such tensor")
    raise missing


def _value(node: Any, slot: Slot) -> Any:
    if not is_saved(node, slot):
        return None
    packed = vars(node).get("packed")
    if packed is not None and slot.source in packed.slots:
        out = packed.read(slot.source).detach()
        if slot.source != "result":  # the unpacked tensor, in the graph as the argument was (as PyTorch shows it)
            source = packed.slots[slot.source][1]
            out.grad_fn, out._rg = (source.grad_fn, True) if source is not None else (None, False)
            return out
    elif slot.source == "result":
        return node.output  # (a new tensor equal to the output, with this node as its grad_fn)
    else:
        a = node.inputs[slot.source]
        if not isinstance(a, Tensor):
            return _wrapped_number(a)
        return a.t() if slot.transposed else a
    out.grad_fn, out._rg = node, True
    return out


def _wrapped_number(v: Any) -> Tensor:
    """A number argument as PyTorch's node keeps it: a 0-d tensor of the number's widest dtype."""
    dtype = np.bool_ if isinstance(v, (bool, np.bool_)) else np.int64 if isinstance(v, (int, np.integer)) \
        else np.complex128 if isinstance(v, complex) else np.float64
    return Tensor._make(np.asarray(v, dtype=dtype))


class SavedTensor:
    """One tensor a node saved (PyTorch's `torch._C._autograd.SavedTensor`): `register_hooks(pack_hook,
    unpack_hook)` hands it to pack_hook now and keeps what it returned; the node's backward (and each read of
    `_saved_<name>`) calls unpack_hook on it."""

    def __init__(self, node: Any, name: str, slot: Slot | None = None) -> None:
        self._node, self._name, self._slot = node, name, slot

    def register_hooks(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]) -> None:
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                            f"arg1: collections.abc.Callable) -> None\n\nInvoked with: {self!r}, {pack_hook!r}, "
                            f"{unpack_hook!r}")
        node, slot = self._node, self._slot
        if node.inputs is None or slot is None:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
                               "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
                               "retain_graph=True if you need to backward through the graph a second time or if you "
                               "need to access saved variables after calling backward.")
        if not is_saved(node, slot) or (slot.source != "result" and not isinstance(node.inputs[slot.source], Tensor)):
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        packed = vars(node).get("packed")
        if packed is not None and slot.source in packed.slots:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. "
                               "Hint: only one pair of hooks is allowed at a time.")
        from .saved_hooks import pack_slot  # (saved_hooks builds on Function, which this module's node is)
        pack_slot(node, slot.name, slot.source, slot.transposed, pack_hook, unpack_hook, detached=True)

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {id(self):#x}>"
