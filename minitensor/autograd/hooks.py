"""Gradient hooks (`register_hook`), run by the engine: each sees the gradient, and one that returns a
tensor replaces it. A replacement must be a Tensor of the gradient's shape and dtype, as in PyTorch:
otherwise the error names the hook, not whichever op or `.grad` later meets the misfit."""
from .._fperr import as_the_user_set
from ..tensor import Tensor


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
