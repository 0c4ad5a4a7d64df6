"""The two ways to run the backward pass, as in PyTorch: `backward` fills the leaves' `.grad`
(`loss.backward()` is this function), `grad` returns the gradients and touches no `.grad`.
Both hand the work to `engine.run_backward`."""
import numpy as np

from .engine import run_backward, store_grad
from ..tensor import Tensor, tensor_method


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
    if inputs is None:
        run_backward(tensors, grad_tensors, retain_graph, create_graph)
        return
    inputs = _tuple(inputs)
    grads = run_backward(tensors, grad_tensors, retain_graph, create_graph, capture=list(inputs))
    for t in inputs:
        if id(t) in grads:
            store_grad(t, grads[id(t)], create_graph)


@tensor_method("backward")
def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) * gradient into the `.grad` of every leaf that needs one."""
    backward([self], [gradient], retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)


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
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"grad: input {i} ({_describe(t)}) does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    found = run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=list(inputs_t))
    result = []
    for i, t in enumerate(inputs_t):
        g = found.get(id(t))
        if g is None:
            if materialize_grads:
                g = Tensor._make(np.zeros_like(t._array))
            elif not allow_unused:
                raise RuntimeError(
                    f"grad: input {i} (shape {tuple(t.shape)}) was not used to compute the outputs; "
                    "pass allow_unused=True if this is expected"
                )
        result.append(g)
    return tuple(result)


def _describe(t):
    return f"shape {tuple(t.shape)}" if isinstance(t, Tensor) else f"a {type(t).__name__}, not a Tensor"
