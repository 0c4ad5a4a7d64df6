"""Gradient hooks, run by the engine: a tensor's (`register_hook`) see its gradient, and one that returns a
tensor replaces it. A replacement must be a Tensor of the gradient's shape and dtype, as in PyTorch:
otherwise the error names the hook, not whichever op or `.grad` later meets the misfit.
A node's own (`grad_fn.register_prehook`, `grad_fn.register_hook`) see the tuples of gradients around
its backward: the gradients of its outputs before, and those of its inputs too after."""
import numpy as np

from .._fperr import as_the_user_set
from ..tensor import Tensor
from .torch_names import is_node_input


def run_hooks(hooks, g):
    if not hooks:
        return g
    with as_the_user_set():  # (inside the engine's silenced pass) numpy warns in a hook as the user set it
        return _run(hooks, g)


def _run(hooks, g):
    for hook in hooks:
        new = hook(g)
        if new is None:
            continue
        name = getattr(hook, "__name__", repr(hook))
        if not isinstance(new, Tensor):
            raise TypeError(f"expected Tensor, but hook '{name}' returned '{type(new).__name__}'")
        if new._array.shape != g._array.shape:
            raise RuntimeError(f"hook '{name}' has changed the size of value: it returned a gradient of shape "
                               f"{tuple(new.shape)} for a value of shape {tuple(g.shape)}")
        if new.dtype != g.dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was {g.dtype}, got {new.dtype})")
        g = new
    return g


def run_node_prehooks(node, g):
    """`grad_fn.register_prehook`'s hooks, after the tensor's: each sees grad_outputs, a tuple it
    returns replaces them."""
    outs = g if isinstance(g, tuple) else (g,)
    with as_the_user_set():
        for hook in list(node.prehooks):
            outs = _replaced(hook, hook(outs), outs)
    return outs if isinstance(g, tuple) else outs[0]


def run_node_posthooks(node, grads, g):
    """`grad_fn.register_hook`'s hooks, after the node's backward: each sees (grad_inputs, grad_outputs),
    grad_inputs holding one gradient or None per floating-point tensor argument of forward (an integer
    or bool one, a target or a mask, is no input of PyTorch's node); a tuple it returns replaces
    grad_inputs. Returns `grads`, one per argument, with the replacements in."""
    places = [i for i, a in enumerate(node.inputs) if is_node_input(a)]
    ins = tuple(None if grads[i] is None else grads[i] if isinstance(grads[i], Tensor)
                else Tensor._make(np.asarray(grads[i])) for i in places)  # (a numpy VJP's arrays, as tensors)
    outs = g if isinstance(g, tuple) else (g,)
    with as_the_user_set():
        for hook in list(node.posthooks):
            ins = _replaced(hook, hook(ins, outs), ins)
    grads = list(grads)
    for i, gi in zip(places, ins):
        grads[i] = gi
    return tuple(grads)


def _replaced(hook, new, old):
    """What a node hook returned in place of the tuple `old`: `old` for None, else a tuple of its length."""
    if new is None:
        return old
    name = getattr(hook, "__name__", repr(hook))
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got {len(new)}, but "
                           f"expected {len(old)})")
    return new
