"""Edge cases of the backward pass (issue 31), each with PyTorch's result or error; the torch
comparisons are in test_torch_autograd_edges.py."""
import numpy as np
import pytest

import minitensor as mt
from minitensor import autograd


def _leaf(n=3):
    return mt.tensor(np.arange(1.0, n + 1), requires_grad=True)


def test_backward_needs_one_gradient_per_tensor():
    x = _leaf()
    y1, y2 = (x * 2).sum(), (x * 3).sum()
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        autograd.backward([y1, y2], [mt.tensor(1.0)])
    assert x.grad is None
