"""A convolution's output is a row-major tensor of its own, as PyTorch's: `.view(n, -1)` works on it, and an
in-place activation after it (DCGAN's nn.LeakyReLU(0.2, inplace=True) after a bias-free Conv2d) records and
gives the out-of-place gradients, where a view of the im2col matmul's result refused both."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

CASES = {
    "conv2d no bias": (lambda: nn.Conv2d(1, 4, 4, 2, 1, bias=False), (2, 1, 8, 8)),
    "conv2d bias": (lambda: nn.Conv2d(2, 3, 3), (2, 2, 5, 5)),
    "conv2d one out channel": (lambda: nn.Conv2d(3, 1, 3, bias=False), (2, 3, 5, 5)),
    "conv2d groups": (lambda: nn.Conv2d(2, 4, 3, groups=2, bias=False), (1, 2, 4, 4)),
    "conv1d no bias": (lambda: nn.Conv1d(2, 3, 3, bias=False), (2, 2, 7)),
    "conv3d no bias": (lambda: nn.Conv3d(1, 2, 2, bias=False), (1, 1, 3, 3, 3)),
    "conv_transpose2d no bias": (lambda: nn.ConvTranspose2d(4, 2, 4, 2, 1, bias=False), (2, 4, 3, 3)),
}


@pytest.mark.parametrize("name", CASES)
def test_conv_output_owns_row_major_memory_and_takes_in_place_activations(name):
    make, shape = CASES[name]
    mt.manual_seed(0)
    conv = make().double()
    x = mt.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)
    y = conv(x)
    assert y.is_contiguous() and y.view(y.shape[0], -1).shape == (y.shape[0], y[0].numel())
    w = mt.tensor(np.random.default_rng(1).standard_normal(y.shape))
    grads = []
    for inplace in (False, True):
        x.grad = None
        for p in conv.parameters():
            p.grad = None
        out = F.leaky_relu(conv(x), 0.2, inplace=inplace)
        (out * w).sum().backward()
        grads.append([x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in conv.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12)
