"""A user's `Function` as PyTorch runs one: several outputs, in-place changes, views, and the ctx flags.

`Function.apply` hands over here when forward returned a Tensor or a tuple (minitensor's own ops return
one ndarray and never come here). What PyTorch does, and how it is done on a graph whose nodes have
one output each:

- Several outputs. `forward` returns a tuple; backward gets one gradient per element (zeros for an
  output no gradient reached, or None after `ctx.set_materialize_grads(False)`; None for a non-tensor).
  The node's own output is a hidden flat tensor `P` holding no memory, one slot per differentiable
  output; each output's `grad_fn` is an `OutputOf` node that puts its gradient in its slot of `P`'s.
  (A difference from PyTorch: there `out[0].grad_fn is out[1].grad_fn`, the Function's node; here
  each output has its own `OutputOf` node whose only edge leads to it.)
- `ctx.mark_non_differentiable(t)`: that output doesn't require grad; backward gets zeros for it.
- `ctx.mark_dirty(x)`: forward changed input `x` in place and returns it. The output *is* `x`, its
  version bumped and its history now this node, as an in-place op's; a leaf that requires grad is refused.
- forward returned an input, or a view of one (not dirty): the output is a new tensor sharing that
  input's memory *and its version counter*, so an in-place change of either is seen by every node.
- An output forward passed to `save_for_backward` comes back in backward carrying this node as its
  `grad_fn`, so a backward that reads it (exp's) is differentiable again under `create_graph`.
- `once_differentiable`: the backward runs without recording; differentiating its result raises.
- `ctx.save_for_forward(*tensors)`: what the `jvp` staticmethod reads as `ctx.saved_tensors` (forward_ad.py
  calls it); an output among them is the one the user got, so a tangent computed from it has a graph.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import anomaly, grad_mode
from .function import Function
from .messages import freed_message


def forward_then_setup_context(ctx, *args):
    """The forward step of a Function in PyTorch 2's style: `forward(*args)`, then `setup_context(ctx, args, out)`."""
    op = type(ctx)
    out = op.forward(*args)
    op.setup_context(ctx, args, out)
    return out


def wrap_outputs(op, ctx, args, raw):
    """The outputs of a user's Function (forward returned `raw`, a Tensor or a tuple), with its node attached."""
    modes = grad_mode.modes
    outs = raw if isinstance(raw, tuple) else (raw,)
    dirty = getattr(ctx, "dirty", ())
    for t in dirty:
        if not any(t is o for o in outs):
            raise RuntimeError(f"{op.__name__}: some tensors given to ctx.mark_dirty were not returned by forward; "
                               "the inputs changed in place must all be outputs of the Function")
    non_diff = getattr(ctx, "non_differentiable", ())
    results = [_output_tensor(op, ctx, args, o, dirty) for o in outs]
    if modes.anomaly_enabled:
        for r in results:
            if isinstance(r, Tensor):
                anomaly.check_forward(ctx, r)
    # which outputs a gradient flows back from: float tensors not marked non-differentiable
    slots = [j for j, (o, r) in enumerate(zip(outs, results)) if isinstance(r, Tensor) and _dtype.kind(r.dtype) == "f"
             and not any(o is t for t in non_diff)]
    if ctx.edges and slots:
        ctx.backward = _backward_of_outputs  # what the engine calls: unpacks, then the user's backward
        ctx.out_meta = tuple((r.shape, r.dtype, j in slots) if isinstance(r, Tensor) else None
                             for j, r in enumerate(results))
        # an output forward saved comes back with its graph in backward (`_resolve_saved`)
        ctx.saved = tuple(_SavedOutput(j) if j in slots else s for s in ctx.saved for j in [_index_of(s, outs)])
        if not isinstance(raw, tuple):
            _attach(ctx, results[0])
            ctx.kept_outputs = (results[0].detach(),)
        else:
            _attach_several(ctx, results, slots)
        if modes.saved_hooks is not None:  # saved_tensors_hooks: each saved tensor is packed, one by one
            _pack_saved(ctx, modes.saved_hooks, results)
    if ctx.saved_for_forward is not None:  # an output saved for jvp is read there as the user has it: with its graph
        ctx.saved_for_forward = tuple(s if j < 0 else results[j] for s in ctx.saved_for_forward
                                      for j in [_index_of(s, outs)])
    # what backward reads (inputs, saved tensors), at its version as forward left it (it may change an input)
    ctx.versions = tuple((t, t._version) for t, _ in ctx.versions)
    if modes.recorder is not None:  # the speed layer's Replay
        if isinstance(raw, tuple) or dirty:
            raise RuntimeError(f"Replay: can't record {op.__name__}, a Function with several outputs or in-place ones")
        modes.recorder.append((op, ctx, args, results[0]))
    return tuple(results) if isinstance(raw, tuple) else results[0]


def _index_of(s, outs):
    return next((j for j, o in enumerate(outs) if s is o), -1)


def _output_tensor(op, ctx, args, o, dirty):
    """The tensor the user gets for forward's output `o` (a non-tensor passes through; an ndarray is wrapped)."""
    if isinstance(o, np.ndarray):
        o = Tensor._make(o)
    if not isinstance(o, Tensor):
        return o
    if any(o is t for t in dirty):  # the input itself, changed in place
        if o._rg and o.grad_fn is None and grad_mode.modes.grad_enabled:
            raise RuntimeError(f"{op.__name__}: a leaf Variable that requires grad has been used in an in-place "
                               "operation (ctx.mark_dirty); change a copy, or do it under no_grad()")
        o._bump_version()
        return o
    out = Tensor._make(o._array)  # never attach a node to an object forward may have kept
    for a in args:
        if isinstance(a, Tensor) and np.may_share_memory(o._array, a._array):
            out._share_storage_of(a)  # an input, or a view of one: one memory, one version counter
            return out
    out._version_counter = o._version_counter  # forward may have saved o: an in-place change of out is seen
    return out


def _attach(node, out):
    """Make `node` the `grad_fn` of `out`, as `Function.apply` does."""
    node._out, node.output_version = weakref.ref(out), out._version
    if node.saves_values:
        node.saved_output = out.detach()
    if grad_mode.modes.anomaly_enabled:
        anomaly.remember_origin(node)
    out.grad_fn, out._rg = node, True


class OutputOf(Function):
    r"""One output of a Function with several: its gradient goes to its slot of the node's flat output P.

    forward: out = P[a:b].reshape(shape)   (P holds no memory: out was made by the Function)
    VJP:     gP = [0 ... 0, g.flatten(), 0 ... 0]
    """

    saves_values = False
    slot: int  # which output of the Function this node stands for (set by wrap_outputs)

    def name(self) -> str:
        return f"{self.edges[0][1].name()}[output {self.slot}]"

    def torch_name(self) -> str:
        return self.edges[0][1].torch_name()  # PyTorch's outputs share the Function's node: they print as it

    def __repr__(self) -> str:
        return repr(self.edges[0][1])

    @staticmethod
    def backward(ctx, g):
        node, (a, b) = ctx.edges[0][1], ctx.span
        if node.inputs is None:
            raise RuntimeError(freed_message(node))
        node.reached = node.reached | {ctx.slot}
        total, flat = ctx.edges[0][2][0], g.reshape(-1)
        parts = [flat.new_zeros(a)] if a else []
        parts += [flat] + ([flat.new_zeros(total - b)] if b < total else [])
        return parts[0] if len(parts) == 1 else _cat(parts)


def _cat(parts):
    from ..ops.shape import cat  # (ops are above autograd: imported when first needed)
    return cat(parts)


def _selector(node, P, slot, span):
    sel = OutputOf()
    sel.inputs, sel.saved, sel.versions = (P,), (), ()
    sel.edges, sel.needs_input_grad = ((0, node, P._array.shape, P.dtype),), (True,)
    sel.slot, sel.span = slot, span
    return sel


def _attach_several(ctx, results, slots):
    """The node's output is P, a flat stand-in with a slot per differentiable output; each such output gets
    an `OutputOf` node leading to its slot."""
    dtype = np.result_type(*[results[j].dtype for j in slots])
    spans, start = {}, 0
    for j in slots:
        spans[j] = (start, start + results[j].numel())
        start += results[j].numel()
    P = Tensor._make(np.ndarray((start,), dtype, np.zeros(1, dtype), 0, (0,)))
    _attach(ctx, P)
    ctx.spans, ctx.reached = spans, frozenset()
    ctx.kept_outputs = tuple(r.detach() if isinstance(r, Tensor) else None for r in results)
    for j in slots:
        _attach(_selector(ctx, P, j, spans[j]), results[j])
    ctx.P = weakref.ref(P)


class _SavedOutput:
    """In `ctx.saved`: output j of forward, given back in backward with its graph (`_resolve_saved`)."""

    def __init__(self, j):
        self.j = j


class _PackedSaved:
    """In `ctx.saved`: what pack_hook returned for a saved tensor; unpacked when backward reads `saved_tensors`."""

    def __init__(self, value, unpack_hook, source, output):
        self.value, self.unpack_hook, self.source, self.output = value, unpack_hook, source, output


def _pack_saved(ctx, hooks, results):
    """Hand each tensor given to save_for_backward to the pack hook (an output as the user got it); the node
    keeps what it returned, and no longer checks those tensors' versions."""
    from .saved_hooks import _source, call_pack
    packed, kept = [], []
    for s in ctx.saved:
        if isinstance(s, _SavedOutput):
            packed.append(_PackedSaved(call_pack(hooks.pack_hook, results[s.j]), hooks.unpack_hook, None, s))
        elif isinstance(s, Tensor):
            packed.append(_PackedSaved(call_pack(hooks.pack_hook, s), hooks.unpack_hook, _source(s), None))
            kept.append(s)
        else:
            packed.append(s)
    ctx.saved = tuple(packed)
    ctx.versions = tuple((t, v) for t, v in ctx.versions if not any(t is k for k in kept))
    ctx.fast_backward = None


def _unpack_saved(ctx, s):
    from .saved_hooks import _unpacked, in_place_of
    t = _unpacked(s.unpack_hook(s.value))
    if s.output is not None:  # an output: with this node as its grad_fn, as `_resolve_saved` gives it
        ctx.kept_outputs = ctx.kept_outputs[:s.output.j] + (t.detach(),) + ctx.kept_outputs[s.output.j + 1:]
        return _resolve_saved(ctx, s.output)
    return in_place_of(s.source, t)


def _resolve_saved(ctx, s):
    if isinstance(s, _PackedSaved):
        return _unpack_saved(ctx, s)
    if not isinstance(s, _SavedOutput):
        return s
    out = ctx.kept_outputs[s.j].detach()
    if not hasattr(ctx, "spans"):
        out.grad_fn, out._rg = ctx, True
    else:  # a fresh OutputOf node: the node keeps none of them (no reference cycle)
        P = ctx.P()
        if P is None:  # every output is gone: nothing can differentiate through it again
            return out
        out.grad_fn, out._rg = _selector(ctx, P, s.j, ctx.spans[s.j]), True
    return out


def _backward_of_outputs(ctx, g):
    """What the engine calls for a user's Function: one gradient per output, the user's backward, and its
    gradients checked against the inputs (extra ones must be None, as in PyTorch)."""
    op = type(ctx)
    grads = _output_grads(ctx, g)
    keep, ctx.saved = ctx.saved, tuple(_resolve_saved(ctx, s) for s in ctx.saved)
    try:
        result = op.backward(ctx, *grads)
    finally:
        ctx.saved = keep
    result = result if isinstance(result, tuple) else (result,)
    n = len(ctx.inputs)
    if len(result) > n and all(r is None for r in result[n:]):
        result = result[:n]
    if len(result) != n:
        raise RuntimeError(f"function {ctx.name()} returned an incorrect number of gradients "
                           f"(expected {n}, got {len(result)})")
    return result


def _output_grads(ctx, g):
    """The gradient of each of forward's outputs, from the gradient `g` of the node's own output."""
    meta = ctx.out_meta
    if not hasattr(ctx, "spans"):
        return (g,)
    grads = []
    for j, m in enumerate(meta):
        if m is None:
            grads.append(None)
        elif m[2] and j in ctx.reached:
            a, b = ctx.spans[j]
            piece = g[a:b].reshape(m[0])
            grads.append(piece if piece.dtype == m[1] else piece.to(m[1]))
        elif ctx.materialize_grads:
            grads.append(Tensor._make(np.zeros(m[0], m[1])))
        else:
            grads.append(None)
    ctx.reached = frozenset()
    return tuple(grads)


class DelayedError(Function):
    r"""Stands for the result of a `once_differentiable` backward: differentiating it raises.

    forward: out = x   (the result, computed without recording; its inputs are the gradients it came from)
    VJP:     raises: the backward it came from can't be differentiated
    """

    saves_values = False

    @staticmethod
    def forward(ctx, x, *grads):
        return x._array

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for a Function's backward that is not written in differentiable Tensor ops (numpy, say).

    It runs without recording; under `create_graph`, its results carry a node that raises if a second
    backward reaches it, instead of silently giving a wrong second derivative."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with grad_mode.no_grad():
            result = backward(ctx, *grads)
        tracked = [g for g in grads if isinstance(g, Tensor) and g._rg]
        if not grad_mode.modes.grad_enabled or not tracked:
            return result
        def wrap(r):
            r = Tensor._make(r) if isinstance(r, np.ndarray) else r
            return DelayedError.apply(r, *tracked) if isinstance(r, Tensor) and _dtype.kind(r.dtype) == "f" else r
        return tuple(wrap(r) for r in result) if isinstance(result, tuple) else wrap(result)
    return wrapper


def broadcasts_to(shape, target):
    """(The engine's, for a user's Function that returns a broadcast gradient unreduced.) Whether an
    array of `shape` broadcasts to `target` (so a gradient of `target`'s shape sums back to it)."""
    if len(shape) > len(target):
        return False
    return all(n == m or n == 1 for n, m in zip(shape[::-1], target[::-1]))


def sum_to(g, shape):
    """`g` summed over the dimensions that broadcasting `shape` to g's shape added or stretched."""
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + d for d, n in enumerate(shape) if n == 1 and g._array.shape[lead + d] != 1)
    if dims:
        g = g.sum(dim=dims, keepdim=True)  # (Tensor ops: recorded under create_graph like the VJP itself)
    return g.reshape(shape)
