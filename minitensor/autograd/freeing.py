"""Step 5 of the backward pass (`engine`): once a node's VJP has run, free what it kept for it."""
import functools

import numpy as np

from ..tensor import Tensor


def release(node):
    """Free what the node kept for backward. A node that read no values may run again: its tensor
    inputs become stand-ins of the same shape and dtype that hold no memory."""
    if node.saves_values:
        for name in vars(node).keys() - _NODE_FIELDS:
            delattr(node, name)  # whatever forward kept on ctx for backward (LayerNorm's xhat ...)
        node.inputs = None
    else:
        node.inputs = tuple([_stand_in(a) if isinstance(a, Tensor) else a for a in node.inputs])
    node.saved, node.versions = (), ()


# what every node has (set by Function.apply and the engine); anything else on ctx was kept by forward
_NODE_FIELDS = {"inputs", "saved", "versions", "edges", "needs_input_grad", "_out", "output_version",
                "hooks", "retain", "origin", "_step_name",  # _step_name: autograd.step names it for pictures
                "shown_as",  # PyTorch's name of a composite's last node (torch_names.shown_as)
                "prehooks", "posthooks", "_metadata",  # the user's own on the node (grad_fn.register_hook ...)
                "composite_edges", "_weight_t", "_log_softmax"}  # the graph as PyTorch shows it (ctx.next_functions)


def _stand_in(t):
    """A tensor of t's shape and dtype that holds no memory: every element is one shared zero (all strides 0).
    One per shape and dtype serves every node: nothing can write into it, nor into its version."""
    return _empty_like(t._array.shape, t._array.dtype)


@functools.lru_cache(maxsize=256)
def _empty_like(shape, dtype):
    arr = np.ndarray(shape, dtype, np.zeros(1, dtype), 0, (0,) * len(shape))
    arr.flags.writeable = False
    return Tensor._make(arr)
