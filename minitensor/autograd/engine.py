"""The backward pass: walk the graph from the outputs back to the leaves, calling each node's VJP once.

1. `_count_consumers`: find every node reachable from the outputs and count, for each, how many
   edges lead into it. The walk uses an explicit stack, so a 100 000-op chain needs no recursion.
2. Run nodes in topological order (Kahn's algorithm): a node runs once all its consumers have
   sent their gradient, so it runs once, with the sum of everything that flows into it.
3. `_call_backward`: before a node's VJP runs, every tensor it reads must be as it was in the
   forward pass; an in-place change since then would make its gradient silently wrong. (The node's
   own hooks, if a user registered any, run just before and after the VJP.)
4. `_check_gradient`: each returned gradient must have its input's shape (the dtype is cast like
   PyTorch does); the error names the op, so a buggy VJP is found where it is. (A user's Function
   may return the gradient of a broadcast input unreduced: it is summed to the input's shape, as in PyTorch.)
5. `_release`: unless `retain_graph`, free what each node kept for its backward once it has run.
6. `store_grad` (leaves.py): the leaves' gradients are accumulated into `.grad` (or, for `autograd.grad`, returned).
"""
import contextlib

import numpy as np

from .. import _dtype
from .._fperr import as_the_user_set, silenced
from ..tensor import Tensor
from . import anomaly, grad_mode
from .custom import broadcasts_to, sum_to
from .freeing import release as _release
from .hooks import run_hooks as _run_hooks, run_node_posthooks, run_node_prehooks
from .leaves import store_grad
from .messages import freed_message, modified_message
from .pruning import leads_to, needed_nodes
from .runs import tracked

_as_it_is = contextlib.nullcontext()


def _count_consumers(roots):
    """Every node reachable from `roots`, with the number of graph edges that lead into it."""
    consumers = dict.fromkeys(roots, 0)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for _, child, _, _ in node.edges:
            if isinstance(child, Tensor):
                continue  # a leaf
            if child not in consumers:
                consumers[child] = 0
                stack.append(child)
            consumers[child] += 1
    return consumers


def _call_backward(node, g):
    """Run the node's VJP, once every tensor it reads is checked to be as forward left it; return one
    gradient (or None) per forward argument. When nothing records the backward, an op's numpy twin
    from the speed layer runs instead, if it registered one."""
    if node.inputs is None:
        raise RuntimeError(freed_message(node))
    if "packed" in vars(node):  # saved_tensors_hooks packed what backward reads: unpack it (saved_hooks.py)
        node.packed.unpack(node)
    for t, version in node.versions:
        if t._version != version:
            raise RuntimeError(modified_message(node, "an input", t, version))
    if node.prehooks:  # the node's own hooks (`grad_fn.register_prehook`), after the tensor's
        g = run_node_prehooks(node, g)
    twin = node.fast_backward
    backward = node.backward if twin is None or grad_mode.modes.grad_enabled else twin
    with as_the_user_set() if node.sums_broadcast_gradients else _as_it_is:  # a user's Function: numpy as set
        grads = backward(node, g)
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != len(node.inputs):
        raise RuntimeError(
            f"backward of '{node.name()}' returned {len(grads)} gradients, but forward took "
            f"{len(node.inputs)} arguments (return one per argument, None where there is none)"
        )
    if node.posthooks:  # `grad_fn.register_hook`: may replace the gradients of the inputs
        grads = run_node_posthooks(node, grads, g)
    return grads


def _check_gradient(node, i, shape, dtype, g):
    """The gradient `g` for input `i`: a Tensor of the input's shape and dtype, or an error naming the op."""
    if not isinstance(g, Tensor):
        g = Tensor._make(np.asarray(g))  # a VJP written in numpy may return an ndarray
    if g._array.shape != shape:  # (the array's shape: a Tensor's .shape builds a Size)
        if node.sums_broadcast_gradients and broadcasts_to(shape, g._array.shape):
            g = sum_to(g, shape)  # a user's Function that left broadcasting to the engine, as PyTorch allows
        else:
            hint = " (nor one it broadcasts to, to be summed to it)" if node.sums_broadcast_gradients else ""
            raise RuntimeError(
                f"backward of '{node.name()}' returned a gradient of shape {tuple(g.shape)} for "
                f"input {i}, which has shape {tuple(shape)}{hint}"
            )
    if g._array.dtype != dtype:
        if _dtype.kind(g._array.dtype) != "f":
            raise RuntimeError(
                f"backward of '{node.name()}' returned a gradient of dtype {g.dtype} for input {i} of dtype {dtype}"
            )
        g = g.to(dtype)  # mixed-precision ops: the gradient takes its input's dtype
    return g


def accumulate(pending, key, g):
    """Gradients into one node or leaf are summed: a value used twice gets both contributions."""
    pending[key] = g if key not in pending else pending[key] + g


@tracked  # notes which run is in progress, for register_multi_grad_hook (runs.py)
def run_backward(pending, retain_graph, create_graph, capture=None, visit=None, fill_retained=True,
                 run_captured=False):
    """Backpropagate from `pending`, {node or leaf: gradient of its output} (`api.root_gradients`).
    With `capture` (a list of tensors) return {id(tensor): gradient} for them instead of touching
    the leaves' `.grad` (a non-leaf's `retain_grad()` is still honoured where a gradient passes, as in
    PyTorch, unless `fill_retained` is False). `run_captured`: the node of a non-leaf in `capture` runs too
    (`backward(inputs=...)`, as PyTorch), though only the gradients reaching `capture` are kept.
    `visit(node, g, grads)` is called after each VJP (used by `explain`, which touches no `.grad`)."""
    roots = [key for key in pending if not isinstance(key, Tensor)]
    consumers = _count_consumers(roots)
    ready = [node for node in roots if consumers[node] == 0]
    captured = {}
    capture_nodes = {t.grad_fn: t for t in capture or () if t.grad_fn is not None}
    needed = needed_nodes(roots, capture) if capture else None  # only what leads to the inputs runs (explain: all)
    capture_ids = {id(t) for t in capture or ()}
    modes = grad_mode.modes
    prev = modes.grad_enabled, modes.in_backward
    # record the VJPs only for create_graph, and never inside inference_mode (PyTorch's too)
    modes.grad_enabled, modes.in_backward = bool(create_graph) and not modes.inference, True
    with silenced():  # numpy's warnings off once for every VJP and `.grad` sum, not once per op (see _fperr)
        try:
            while ready:
                node = ready.pop()
                g = pending.pop(node, None)
                if needed is not None and node not in needed:
                    continue  # (and nothing below it is needed either)
                useful = needed is None or (run_captured and node in capture_nodes) or any(
                    leads_to(c, needed, capture_ids) for _, c, _, _ in node.edges)
                grads = (None,) * len(node.needs_input_grad)
                if g is not None:  # (a node nothing flowed into still counts down its inputs)
                    g = _run_hooks(node.hooks, g)
                    if node.retain and fill_retained and node._out() is not None:
                        store_grad(node._out(), g, create_graph)
                    if node in capture_nodes:
                        captured[id(capture_nodes[node])] = g
                if g is not None and useful:
                    grads = _call_backward(node, g) if modes.profiler is None else \
                        modes.profiler.run_backward(node, g, _call_backward)  # (timed, inside a profile)
                    if modes.anomaly_enabled:
                        anomaly.check_backward(node, g, grads)
                    if visit is not None:
                        visit(node, g, grads)
                for i, child, shape, dtype in node.edges:
                    if grads[i] is not None and (needed is None or leads_to(child, needed, capture_ids)):
                        accumulate(pending, child, _check_gradient(node, i, shape, dtype, grads[i]))
                    if not isinstance(child, Tensor):
                        consumers[child] -= 1
                        if consumers[child] == 0:
                            ready.append(child)
                if not retain_graph and useful:
                    _release(node)
        finally:
            modes.grad_enabled, modes.in_backward = prev
        # only leaves are left: every node ran (`.grad += g` may overflow: silently, as in PyTorch)
        for leaf, g in pending.items():
            if needed is not None and id(leaf) not in capture_ids:
                continue  # a leaf that is also an output, not asked for
            g = _run_hooks(leaf._hooks, g)
            if capture is not None:
                captured[id(leaf)] = g
            elif leaf._rg and modes.profiler is not None:  # (timed, inside a profile)
                modes.profiler.run_accumulate(store_grad, leaf, g, create_graph)
            elif leaf._rg:  # (`requires_grad_(False)` since the forward pass: PyTorch then fills no .grad)
                store_grad(leaf, g, create_graph)
    return captured
