"""What PyTorch's `ctx` offers beyond saving tensors, and how a node prints: the part of a node a
user's custom Function and a PyTorch tutorial reach for, kept apart from the core of `Function`
(forward, backward, `apply`) so that function.py reads as the idea itself.

A user's Function says, in its forward, which inputs it changed in place (`mark_dirty`), which outputs
get no gradient (`mark_non_differentiable`) and whether a missing output gradient reaches its backward
as zeros or None (`set_materialize_grads`); custom.py acts on them. A node prints as PyTorch's do
(`<MulBackward0 object at 0x...>`) and lists where its gradients go (`next_functions`).
"""
from __future__ import annotations

import weakref
from typing import Any

from .. import _dtype
from ..tensor import Tensor, _HookHandle
from .saved_attrs import saved_attribute
from .saved_names import NAMES as _SAVED_NAMES
from .torch_names import is_node_input, torch_node_name


class NodeExtras:
    """PyTorch's `ctx` methods for a user's Function, and a node's PyTorch face (Function's base)."""

    materialize_grads = True  # `set_materialize_grads`
    edges: tuple[tuple[int, Any, tuple[int, ...], Any], ...]  # (set on each node by `Function.apply`)
    inputs: tuple[Any, ...] | None
    needs_input_grad: tuple[bool, ...]
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
        gradient or None per floating-point tensor argument of forward); a tuple it returns replaces
        `grad_inputs`."""
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
    def gradient_edges(self) -> tuple[tuple[Any, int], ...]:
        """Where this node's gradients go, minitensor's way: (child, i) for each input i of forward that
        needs a gradient, `child` being the node that made that input, or the input itself when it is a
        leaf tensor. (The engine walks these; `next_functions` shows the same graph as PyTorch does.)"""
        return tuple((target, i) for i, target, _, _ in self.edges)

    @property
    def next_functions(self) -> tuple[tuple[Any, int], ...]:
        """PyTorch's view of where the gradients go: (node, output number) for each tensor input of
        forward, the node being the one that made it, a leaf's `AccumulateGrad`, or None for an input
        that needs no gradient. (Once backward has freed a node that kept values, the inputs that
        needed no gradient are no longer known, and only the others are listed.)"""
        composite = self.__dict__.get("composite_edges")  # a composite op shown as PyTorch's one node
        if composite is not None:
            return tuple((None, 0) if t is None else _pytorch_edge(t) for t in composite)
        targets = {i: target for i, target, _, _ in self.edges}
        places = (range(len(self.needs_input_grad)) if self.inputs is None else  # (freed: the edges only)
                  [i for i, a in enumerate(self.inputs) if is_node_input(a)])
        edges = {i: _pytorch_edge(targets[i]) if i in targets else (None, 0)
                 for i in places if self.inputs is not None or i in targets}
        op = type(self).__name__ if type(self).__module__.startswith("minitensor.") else None  # (not a user's)
        if op == "Linear" and self.torch_name() in ("AddmmBackward0", "MmBackward0"):
            return self._as_addmm(edges)
        if op == "LayerNorm" and self.inputs is not None:  # (x, k, weight, bias, eps): a missing weight or
            return tuple(edges.get(i, (None, 0)) for i in (0, 2, 3))  # bias is an undefined input of PyTorch's
        if op == "CrossEntropy":  # PyTorch's cross_entropy is nll_loss(log_softmax(x)): two nodes
            return ((self._shown("_log_softmax", "LogSoftmaxBackward0", (edges.get(0, (None, 0)),)), 0),)
        if op in ("Add", "Sub", "Mul", "Div") and self.inputs is not None and len(edges) == 1 and \
                not (op == "Sub" and not isinstance(self.inputs[0], Tensor)):
            return tuple(edges.values()) + ((None, 0),)  # a number operand: PyTorch's wrapped tensor (not rsub's)
        return tuple(edges.values())

    def _shown(self, slot: str, torch_name: str, next_functions: tuple[tuple[Any, int], ...]) -> ShownNode:
        """The ShownNode kept in `slot` of this node (made once: PyTorch's graph has one such node)."""
        shown = self.__dict__.get(slot)
        if shown is None:
            shown = ShownNode(torch_name, next_functions)
            setattr(self, slot, shown)
        return shown

    def _as_addmm(self, edges: dict[int, tuple[Any, int]]) -> tuple[tuple[Any, int], ...]:
        """Linear's edges in the order of PyTorch's node for a matrix input, addmm(bias, x, W^T) (or
        mm(x, W^T)): the bias first, the weight through a transpose node of its own."""
        weight = edges.get(1, (None, 0))
        if weight[0] is not None:
            weight = (self._shown("_weight_t", "TBackward0", (weight,)), 0)
        bias = (edges[2],) if 2 in edges else ()
        return bias + (edges.get(0, (None, 0)), weight)

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


def _saved_property(attr: str) -> property:
    return property(lambda node: saved_attribute(node, attr),
                    doc=f"PyTorch's `grad_fn.{attr}`: what its node saved (saved_attrs.py), read only when asked")


# PyTorch's `grad_fn._saved_<name>` and `_raw_saved_<name>`, for every name of saved_names.py's table
for _name in _SAVED_NAMES:
    for _attr in ("_saved_" + _name, "_raw_saved_" + _name):
        setattr(NodeExtras, _attr, _saved_property(_attr))


def _pytorch_edge(target: Any) -> tuple[Any, int]:
    """An edge's target as PyTorch names it: a leaf's AccumulateGrad, or (node, which of its outputs)."""
    if isinstance(target, Tensor):
        return accumulate_grad_of(target), 0
    slot = getattr(target, "slot", None)  # one output of a Function with several (custom.OutputOf)
    if slot is not None:
        return target.edges[0][1], slot
    return target, 0


class ShownNode:
    """A node of PyTorch's graph that minitensor's op has no node for (the transpose inside PyTorch's
    linear): shown by `next_functions`, with its name and its own edges; it computes nothing."""

    def __init__(self, torch_name: str, next_functions: tuple[tuple[Any, int], ...]) -> None:
        self._name, self.next_functions = torch_name, next_functions
        self.metadata: dict[str, Any] = {}

    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<{self._name} object at {id(self):#x}>"


class AccumulateGrad:
    """PyTorch's node at a leaf, shown by `next_functions`: `variable` is the leaf whose `.grad` the
    gradient goes into. (minitensor's engine accumulates into the leaf directly; this node is only
    the graph's face, the same object for a leaf as long as someone holds it.)"""

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.metadata: dict[str, Any] = {}

    next_functions: tuple[tuple[Any, int], ...] = ()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def register_hook(self, hook: Any) -> Any:
        raise NotImplementedError("register_hook on a leaf's AccumulateGrad node: use "
                                  "tensor.register_post_accumulate_grad_hook (or tensor.register_hook)")

    register_prehook = register_hook

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


# id(leaf) -> its AccumulateGrad while someone holds that node (which holds the leaf, so the id is not reused)
_accumulators: weakref.WeakValueDictionary[int, AccumulateGrad] = weakref.WeakValueDictionary()


def accumulate_grad_of(leaf: Tensor) -> AccumulateGrad:
    node = _accumulators.get(id(leaf))
    if node is None or node.variable is not leaf:
        node = _accumulators[id(leaf)] = AccumulateGrad(leaf)
    return node
