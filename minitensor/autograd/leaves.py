"""Step 6 of the backward pass (`engine`): a leaf's gradient accumulated into its `.grad`."""
from .._fperr import as_the_user_set
from ..tensor import Tensor, post_accumulate_hooks
from . import grad_mode


def store_grad(t, g, create_graph):
    """Accumulate `g` into `t.grad`. `.grad` never aliases another tensor (a gradient may be shared
    by two leaves of one add, or be the user's own upstream tensor), so the first one is copied;
    with `create_graph` the copy is recorded, so it keeps its graph."""
    # (`_grad`, not the `.grad` property: `g` passed the engine's shape and dtype checks already)
    if t._grad is not None and not create_graph:
        t._grad._array += g._array  # in place, as PyTorch: `.grad` stays the same tensor across backward calls
    elif t._grad is not None:
        t._grad = t._grad + g  # with create_graph the sum is recorded
    elif create_graph:  # a recorded copy (PyTorch's too): two leaves of one add must not share one .grad
        with grad_mode.set_grad_enabled(True):
            t._grad = g.clone()
    else:
        t._grad = Tensor._make(g._array.copy())
    hooks = post_accumulate_hooks.get(id(t), ())
    if hooks:
        with as_the_user_set():  # (inside the engine's silenced pass) numpy warns in a hook as the user set it
            for hook in hooks:
                hook(t)
