"""`GradientEdge`: a place in the graph where a gradient arrives, named without holding the tensor.

`get_gradient_edge(t)` is (the node that made t, which of its outputs t is), a leaf's being its
`AccumulateGrad`; `autograd.grad` takes such edges as inputs (the gradient that reaches the edge) and
as outputs (backward starts there, from the grad_output given), so a backward can be aimed at an
intermediate value after the tensor itself was dropped.

minitensor's node of an output of a Function with several outputs is its own small node (custom.OutputOf);
the edge shows PyTorch's node and output number and keeps that small node as its `ownership_token`, which
is how it is found again. (Ops like `unbind` make one node per output in minitensor, so their edges all
have output_nr 0, where PyTorch's single node numbers them.)
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..tensor import Tensor
from .ctx import AccumulateGrad, _pytorch_edge


class GradientEdge(NamedTuple):
    """(node, output_nr): where the gradient of one output of `node` arrives; `ownership_token`
    is what keeps that place findable (see the module's docstring)."""

    node: Any
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge where `tensor`'s gradient arrives: equivalent as an input of `autograd.grad` to `tensor`."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    target = tensor.grad_fn if tensor.grad_fn is not None else tensor
    node, output_nr = _pytorch_edge(target)
    return GradientEdge(node, output_nr, target if getattr(target, "slot", None) is not None else None)


def edge_tensor(edge: GradientEdge) -> Tensor:
    """A tensor the engine treats as the edge: the leaf itself, the node's output while it lives, or else
    a stand-in holding no data whose `grad_fn` is the node (all the engine looks at for an input)."""
    if isinstance(edge.node, AccumulateGrad):
        return edge.node.variable
    node = edge.ownership_token if getattr(edge.ownership_token, "slot", None) is not None else edge.node
    if node is edge.node and edge.output_nr != 0:
        raise RuntimeError(f"GradientEdge: output {edge.output_nr} of {edge.node!r} is only found through the "
                           "edge get_gradient_edge returned (its ownership_token)")
    out = getattr(node, "_out", _dead)()
    if out is not None and out.grad_fn is node:
        return out
    stand_in = Tensor._make(np.empty(0))
    stand_in.grad_fn, stand_in._rg = node, True
    return stand_in


def edge_output(edge: GradientEdge, grad_output: Any) -> Tensor:
    """An output of `autograd.grad` given as an edge: its tensor, of grad_output's shape (needed, as in PyTorch)."""
    if grad_output is None:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    t = edge_tensor(edge)
    if t._array.shape == (0,) and t.grad_fn is not None and t is not getattr(t.grad_fn, "_out", _dead)():
        zero = np.zeros((), np.asarray(grad_output).dtype)  # a stand-in, given grad_output's shape
        stand_in = Tensor._make(np.broadcast_to(zero, np.shape(grad_output)))
        stand_in.grad_fn, stand_in._rg = t.grad_fn, True
        return stand_in
    return t


def _dead() -> None:
    return None
