r"""Exercise: the backward of an embedding lookup, where an index may repeat.

Forward (done for you): for an int64 tensor of indices (any shape) and a table weight (V, D),
every index picks one row:

    out[..., :] = weight[indices[...], :]            out: indices.shape + (D,)

Your task: `backward(ctx, g)` gets g = dL/dout (shape indices.shape + (D,)) and returns
(None for the indices, dL/dweight of shape (V, D)). A token that appears twice in a sentence
looks its row up twice: what does that row's gradient get?

Grade it:   attention-grade embedding embedding.py        (more hints: attention-grade --hint 2 embedding)
"""
import numpy as np

from minitensor import from_numpy
from minitensor.autograd import Function


class Embedding(Function):
    @staticmethod
    def forward(ctx, indices, weight):
        return weight.detach().numpy()[indices.numpy()]  # forward computes on the numpy arrays

    @staticmethod
    def backward(ctx, g):
        indices, weight = ctx.inputs  # indices: an int64 Tensor; weight: the (V, D) table
        # BEGIN SOLUTION
        table_grad = np.zeros(weight.shape)
        # np.add.at adds once per occurrence: a row looked up k times gets the sum of k rows of g
        # (table_grad[idx] += rows would add a repeated row's gradient only once)
        np.add.at(table_grad, indices.numpy(), g.numpy())
        return None, from_numpy(table_grad)
        # END SOLUTION


def embedding(indices, weight):
    """The rows of `weight` (V, D) at the integer `indices`."""
    return Embedding.apply(indices, weight)
