"""The two ways to run the backward pass, as in PyTorch: `backward` fills the leaves' `.grad`
(`loss.backward()` is this function), `grad` returns the gradients and touches no `.grad`.
Both check what they are given, turn it into the gradients the walk starts from
(`root_gradients`), and hand the walk to `engine.run_backward`."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from ..tensor import Tensor
from .engine import accumulate, run_backward
from .gradient_edge import GradientEdge, edge_output, edge_tensor
from .leaves import store_grad


def _tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def root_gradients(outputs, grad_outputs):
    """{node or leaf: d(loss)/d(output)} for the outputs backward starts from."""
    pending = {}
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        t._check_view_is_current("backward")
        if not t._rg:  # (PyTorch's words: a leaf made without requires_grad=True, or computed under no_grad)
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(
                    f"backward: grad can be implicitly created only for scalar outputs; this output has "
                    f"shape {tuple(t.shape)}, so pass gradient= (a tensor of that shape)"
                )
            g = Tensor._make(np.ones_like(t._array))
        elif not isinstance(g, Tensor):
            g = Tensor._make(np.asarray(g, dtype=t._array.dtype))
        elif g._array.dtype != t._array.dtype:  # PyTorch casts the gradient to its output's dtype (an int one too)
            g = Tensor._make(g._array.astype(t._array.dtype))
        if g.shape != t.shape:
            raise RuntimeError(f"backward: gradient has shape {tuple(g.shape)} but the output "
                               f"has shape {tuple(t.shape)}")
        accumulate(pending, t.grad_fn if t.grad_fn is not None else t, g)
    return pending


def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
             retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables: Tensor | Sequence[Tensor | None] | None = None,
             inputs: Tensor | Sequence[Tensor] | None = None) -> None:
    """`minitensor.autograd.backward`: accumulate gradients of `tensors` into the leaves' `.grad`
    (`grad_variables` is PyTorch's deprecated name for `grad_tensors`, taken with its warning)."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("backward: 'grad_tensors' and 'grad_variables' (deprecated) arguments both passed; "
                               "pass only 'grad_tensors'")
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", FutureWarning, stacklevel=2)
        grad_tensors = grad_variables
    tensors = _tuple(tensors)
    grad_tensors = _tuple(grad_tensors) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):  # zip would silently drop the outputs without a gradient
        raise RuntimeError(f"backward: got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        run_backward(root_gradients(tensors, grad_tensors), retain_graph, create_graph)
        return
    inputs = _backward_inputs(inputs)
    for t in inputs:
        if t.grad_fn is not None:  # as PyTorch: a non-leaf input retains its gradient from now on, and its own
            t.retain_grad()        # node runs (so it checks its saved tensors, and is freed without retain_graph)
    grads = run_backward(root_gradients(tensors, grad_tensors), retain_graph, create_graph, capture=list(inputs),
                         run_captured=True)
    for t in inputs:
        if id(t) in grads and t.grad_fn is None:  # (the non-leaves' .grad was filled on the way, by the engine)
            store_grad(t, grads.pop(id(t)), create_graph)  # (pop: an input listed twice gets its gradient once)


def _backward_inputs(inputs):
    """backward's `inputs=`, checked as PyTorch does: Tensors that require grad, at least one."""
    if not isinstance(inputs, (Tensor, list, tuple)):
        raise TypeError(f"backward: inputs must be a Tensor or a sequence of Tensors, got {type(inputs).__name__}")
    inputs = _tuple(inputs)
    if not inputs:
        raise RuntimeError("backward: the inputs argument cannot be empty (pass None to fill every leaf's .grad)")
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward: inputs must be Tensors, but input {i} is a {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"backward: input {i} ({_describe(t)}) does not require grad, so it can't "
                               "have its gradient filled in")
    return inputs


def tensor_backward(self: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None,
                     create_graph: bool = False, inputs: Tensor | Sequence[Tensor] | None = None) -> None:
    """Accumulate d(self)/d(leaf) * gradient into the `.grad` of every leaf that needs one."""
    backward([self], [gradient], retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Any, ...]:
    """Return d(outputs)/d(inputs) weighted by `grad_outputs`, without touching any `.grad`.

    With `create_graph=True` the returned gradients carry a graph of their own, so they can be
    differentiated again (Hessian-vector products, gradient penalties). With `is_grads_batched=True`
    each grad_output has a leading batch dimension and the result has it too: one backward pass per
    batch element, stacked (PyTorch vectorizes this with vmap; the values are the same).
    `only_inputs` is accepted and ignored, as in PyTorch.
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("grad: expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False")
    allow_unused = bool(allow_unused or materialize_grads)
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if not isinstance(inputs, (Tensor, list, tuple)):  # PyTorch: a TypeError (it iterates over them)
        raise TypeError(f"grad: inputs must be a Tensor or a sequence of Tensors, got {type(inputs).__name__}")
    outputs = _tuple(outputs if not isinstance(outputs, GradientEdge) else [outputs])
    inputs_t = _tuple(inputs if not isinstance(inputs, GradientEdge) else [inputs])
    grad_outputs = _tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad: got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    if any(isinstance(t, GradientEdge) for t in outputs + inputs_t):  # graph places instead of tensors
        if materialize_grads and any(isinstance(t, GradientEdge) for t in inputs_t):
            raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
        outputs = tuple(edge_output(t, g) if isinstance(t, GradientEdge) else t for t, g in zip(outputs, grad_outputs))
        inputs_t = tuple(edge_tensor(t) if isinstance(t, GradientEdge) else t for t in inputs_t)
    for i, t in enumerate(inputs_t):
        if not isinstance(t, Tensor):
            raise RuntimeError(f"grad: inputs must be Tensors, but input {i} is a {type(t).__name__} ({t!r})")
        if not t.requires_grad:
            raise RuntimeError(f"grad: input {i} ({_describe(t)}) does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    found = run_backward(root_gradients(outputs, grad_outputs), retain_graph, create_graph, capture=list(inputs_t))
    result = []
    for i, t in enumerate(inputs_t):
        g = found.get(id(t))
        if g is None:
            if materialize_grads:
                g = _zeros_for(t, create_graph)
            elif not allow_unused:
                raise RuntimeError(  # (PyTorch's words, after the function's name)
                    f"grad: The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    return tuple(result)


def _zeros_for(t, create_graph):
    """materialize_grads' gradient of an input no output used: zeros, requiring grad under create_graph
    (PyTorch's, so a second grad of it is allowed)."""
    z = Tensor._make(np.zeros_like(t._array))
    z._rg = bool(create_graph)
    return z


def _describe(t):
    return f"shape {tuple(t.shape)}" if isinstance(t, Tensor) else f"a {type(t).__name__}, not a Tensor"


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """`grad` once per row of the batched `grad_outputs` (keeping the graph until the last), stacked."""
    from ..ops.shape import stack  # (ops are above autograd)
    outputs, grad_outputs = _tuple(outputs), _tuple(grad_outputs)
    if grad_outputs is None or any(g is None for g in grad_outputs):
        raise RuntimeError("grad: is_grads_batched=True needs a batched grad_output for every output")
    sizes = {g.shape[0] if g.ndim else None for g in grad_outputs}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError(f"grad: with is_grads_batched=True every grad_output needs the same leading batch "
                           f"dimension, got shapes {[tuple(g.shape) for g in grad_outputs]}")
    (n,) = sizes
    keep = create_graph if retain_graph is None else retain_graph
    rows = [grad(outputs, inputs, [g[b] for g in grad_outputs], retain_graph=True if b < n - 1 else keep,
                 create_graph=create_graph, allow_unused=allow_unused) for b in range(n)]
    # an unused input's materialized zeros have its own shape, without the batch dimension, as in PyTorch
    return tuple((_zeros_for(t, create_graph) if materialize_grads else None) if rows[0][i] is None
                 else stack([r[i] for r in rows]) for i, t in enumerate(_tuple(inputs)))
