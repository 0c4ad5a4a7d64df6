"""The backward pass: walk the graph from the outputs back to the leaves, calling each node's VJP once.

1. Collect every node reachable from the outputs and count, for each, how many edges lead into it
   (its consumers). The walk uses an explicit stack, so a 100 000-op chain needs no recursion.
2. Run nodes in topological order (Kahn's algorithm): a node runs once all its consumers have
   sent their gradient, so it runs once, with the sum of everything that flows into it.
3. Check each returned gradient against its input (same shape; dtype cast like PyTorch does) and
   name the op when it is wrong, so a buggy VJP is found where it is, not three ops later.
4. Unless `retain_graph`, free each node's saved tensors (and whatever forward kept on ctx) once
   it has run.
"""
import sys

import numpy as np

from . import grad_mode
from . import function as _function
from .function import _freed_message
from .. import _anomaly


def _as_tensor(x):
    Tensor = _function._Tensor
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))


def _root_grad(t, g):
    Tensor = _function._Tensor
    if g is None:
        if t.data.size != 1:
            raise RuntimeError(
                f"backward: grad can be implicitly created only for scalar outputs; this output has "
                f"shape {tuple(t.shape)}, so pass gradient= (a tensor of that shape)"
            )
        return Tensor._make(np.ones_like(t.data))
    g = g if isinstance(g, Tensor) else Tensor._make(np.asarray(g, dtype=t.dtype))
    if g.data.shape != t.data.shape:
        raise RuntimeError(
            f"backward: gradient has shape {tuple(g.shape)} but the output has shape {tuple(t.shape)}"
        )
    return g


def _check_grad(node, i, inp, g):
    g = _as_tensor(g)  # a VJP may return an ndarray, whose own `.data` is a memoryview: wrap it
    if g.data.shape != inp.data.shape:
        raise RuntimeError(
            f"backward of '{node.name()}' returned a gradient of shape {tuple(g.data.shape)} for "
            f"input {i}, which has shape {tuple(inp.data.shape)}"
        )
    if g.data.dtype != inp.data.dtype:
        if g.data.dtype.kind != "f":
            raise RuntimeError(
                f"backward of '{node.name()}' returned a gradient of dtype {g.dtype} for input {i} of dtype {inp.dtype}"
            )
        g = g.to(inp.data.dtype)  # mixed-precision ops: the gradient takes its input's dtype
    return g


def _collect(roots):
    """Nodes reachable from `roots` and, for each, the number of graph edges that lead into it
    (0 for a root that no other root's graph reaches)."""
    consumers = dict.fromkeys(roots, 0)  # a node is walked when first found: the roots are found already
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.inputs is None:
            raise RuntimeError(_freed_message(node))
        for _, t in node.edges:
            child = t.grad_fn
            if child is not None:
                n = consumers.get(child)
                if n is None:
                    consumers[child] = 1
                    stack.append(child)
                else:
                    consumers[child] = n + 1
    return consumers


def run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=None, visit=None):
    """Backpropagate. With `capture` (a list of tensors) return their gradients instead of touching `.grad`.

    `visit(node, g, grads)` is called after each node's VJP (used by `explain`).
    """
    Tensor = _function._Tensor
    # the gradient so far of every node and leaf waiting for one: nodes until they run, leaves to
    # the end (one dict for both: a node and a tensor are both keyed by identity)
    pending = {}
    for t, g in zip(outputs, grad_outputs):
        if not t._rg:
            raise RuntimeError(
                f"backward: element of shape {tuple(t.shape)} does not require grad and has no grad_fn "
                "(did you forget requires_grad=True, or compute it under no_grad?)"
            )
        if type(g) is not Tensor or g.data.shape != t.data.shape:
            g = _root_grad(t, g)
        key = t if t.grad_fn is None else t.grad_fn
        prev_g = pending.get(key)  # the same output twice: both gradients
        pending[key] = g if prev_g is None else prev_g + g
    if len(pending) == 1:  # one root, the usual case: no other root's graph can lead into it
        ready = [] if isinstance(key, Tensor) else [key]
        consumers = _collect(ready)
    else:
        roots = [key for key in pending if not isinstance(key, Tensor)]
        consumers = _collect(roots)
        ready = [n for n in roots if not consumers[n]]  # roots no other root's graph leads into
    captured = {}
    capture_nodes = {t.grad_fn: t for t in capture if t.grad_fn is not None} if capture else None
    prev = grad_mode._enabled
    grad_mode._enabled = bool(create_graph)
    try:
        while ready:
            node = ready.pop()
            g = pending.pop(node, None)
            edges = node.edges
            if g is not None:
                if node.hooks:
                    g = _run_hooks(node.hooks, g)
                if node.retain and capture is None:  # not `node.output`: storing .grad reads no value, so no version check
                    out = node._out()
                    if out is not None:
                        _store_grad(out, g, create_graph)
                if capture_nodes and node in capture_nodes:
                    captured[id(capture_nodes[node])] = g
                for (_, t), v in zip(edges, node.versions):
                    if t._version != v:
                        raise RuntimeError(
                            f"backward of '{node.name()}': one of its input tensors (shape {tuple(t.shape)}) "
                            "was modified by an in-place operation after it was used; its backward would be wrong"
                        )
                grads = node.backward(node, g)
                if type(grads) is not tuple:
                    grads = (grads,)
                if len(grads) != len(node.inputs):
                    raise RuntimeError(
                        f"backward of '{node.name()}' returned {len(grads)} gradients, but forward took "
                        f"{len(node.inputs)} arguments (return one per argument, None where there is none)"
                    )
                if _anomaly.enabled:
                    _anomaly.check_backward(node, g, grads)
                if visit is not None:
                    visit(node, g, grads)
            else:  # nothing reached this node: its inputs get nothing from it, but are still counted down
                grads = (None,) * len(node.inputs)
            for i, t in edges:
                gi = grads[i]
                child = t.grad_fn
                if gi is not None:
                    if type(gi) is not Tensor or (d := gi.data).shape != (td := t.data).shape or d.dtype is not td.dtype:
                        gi = _check_grad(node, i, t, gi)  # the slow path: wrap, explain or cast
                    # a node's gradients are summed until it runs, a leaf's until the end
                    key = t if child is None else child
                    prev_g = pending.get(key)
                    pending[key] = gi if prev_g is None else prev_g + gi
                if child is None:
                    continue
                n = consumers[child] - 1
                consumers[child] = n
                if n == 0:
                    ready.append(child)
            if not retain_graph:
                node.inputs = None
                node.saved = ()
                kept = node.__dict__  # what forward kept on ctx for the backward (e.g. LayerNorm's xhat)
                if kept:
                    retain = kept.get("retain", False)
                    kept.clear()
                    if retain:  # `retains_grad` stays true, as in PyTorch
                        node.retain = True
    finally:
        grad_mode._enabled = prev
    grads = gi = g = d = prev_g = None  # the loop's last references: a gradient nobody else holds can become .grad as it is
    # only leaves are left (every node ran); popped, so that the engine's variable is a gradient's only reference here
    if capture is not None:
        while pending:
            t, g = pending.popitem()
            captured[id(t)] = _run_hooks(t._hooks, g) if t._hooks else g
        return captured
    while pending:
        t, g = pending.popitem()
        if t._hooks:
            g = _run_hooks(t._hooks, g)
        _store_grad(t, g, create_graph)
    return captured


def _run_hooks(hooks, g):
    """Each hook sees the gradient; one that returns a tensor replaces it."""
    for hook in hooks or ():
        new = hook(g)
        g = g if new is None else _as_tensor(new)
    return g


# The counts below hold for CPython up to 3.13; 3.14 may borrow references on the stack, which
# changes them, so there (and on other interpreters) a gradient is always copied: `id` stands in
# for the count, and an address is never 3.
_getrefcount = sys.getrefcount if sys.implementation.name == "cpython" and sys.version_info < (3, 14) else id


def _store_grad(t, g, create_graph):
    """Accumulate `g` into `t.grad`. Without create_graph .grad never aliases another tensor: `g`
    is copied unless only the engine holds the Tensor `g` and its array, which owns its memory
    (then taking it is the same, minus a copy).

    References to `g`: the caller's variable, this parameter and getrefcount's argument make 3;
    to its array: `g`'s `.data` slot, the local `arr` and the argument make 3. Any other holder
    (the user's upstream gradient, a hook, a view, a second leaf given the same tensor) raises a
    count, and the gradient is copied. Without reference counts: always copied.
    """
    if t.grad is not None:
        t.grad = t.grad + g  # a new tensor either way
        return
    if not create_graph:
        arr = g.data
        if (_getrefcount(g) != 3 or _getrefcount(arr) != 3 or arr.base is not None
                or type(g) is not _function._Tensor or not ((flags := arr.flags).owndata and flags.writeable)):
            g = _function._Tensor._make(arr.copy())
    t.grad = g


def _tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """`minitensor.autograd.backward`: accumulate gradients of `tensors` into the leaves' `.grad`."""
    tensors = _tuple(tensors)
    grad_tensors = _tuple(grad_tensors) or (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _tuple(inputs)
        grads = run_backward(tensors, grad_tensors, retain_graph, create_graph, capture=list(inputs))
        for t in inputs:
            g = grads.get(id(t))
            if g is not None:
                _store_grad(t, g, create_graph)
        return
    run_backward(tensors, grad_tensors, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False,
         materialize_grads=False):
    """Return d(outputs)/d(inputs) weighted by `grad_outputs`, without touching any `.grad`.

    With `create_graph=True` the returned gradients carry a graph of their own, so they can be
    differentiated again (Hessian-vector products, gradient penalties).
    """
    outputs = _tuple(outputs)
    inputs_t = _tuple(inputs)
    grad_outputs = _tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad: got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    for i, t in enumerate(inputs_t):
        if not t.requires_grad:
            raise RuntimeError(f"grad: input {i} (shape {tuple(t.shape)}) does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    found = run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=list(inputs_t))
    result = []
    for i, t in enumerate(inputs_t):
        g = found.get(id(t))
        if g is None:
            if materialize_grads:
                g = _as_tensor(np.zeros_like(t.data))
            elif not allow_unused:
                raise RuntimeError(
                    f"grad: input {i} (shape {tuple(t.shape)}) was not used to compute the outputs; "
                    "pass allow_unused=True if this is expected"
                )
        result.append(g)
    return tuple(result)
