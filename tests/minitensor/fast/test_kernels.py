"""The speed layer's twins of Tanh's and Softmax's backward (minitensor/fast/kernels.py) give the ops' own
gradients bit for bit: the same graph run with nothing recording (the twin) and under create_graph=True
(the op's Tensor-op backward), float32 and float64, a random upstream weight, NaN and inf included."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.fast import kernels
from minitensor.ops.softmax import Softmax
from minitensor.ops.unary import Tanh


def _grads_both_ways(fn, x, weight):
    grads = []
    for create_graph in (False, True):
        leaf = mt.tensor(x, requires_grad=True)
        (g,) = mt.autograd.grad(fn(leaf), [leaf], grad_outputs=[mt.tensor(weight)], create_graph=create_graph)
        grads.append(g.numpy(force=True))
    return grads


CASES = [
    ("tanh", lambda t: t.tanh(), (2, 3)),
    ("tanh with inf and nan", lambda t: t.tanh(), "edges"),
    ("softmax dim -1", lambda t: t.softmax(-1), (2, 3, 4)),
    ("softmax dim 0", lambda t: t.softmax(0), (3, 2)),
    ("softmax of a -inf row", lambda t: t.softmax(-1), "edges"),
    ("softmax of a 0-d tensor", lambda t: t.softmax(0), ()),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, fn, shape", CASES, ids=[c[0] for c in CASES])
def test_twin_equals_the_ops_backward(name, fn, shape, dtype):
    rng = np.random.default_rng(0)
    if shape == "edges":
        x = np.array([[0.5, np.inf, -np.inf], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, -2.0]])
    else:
        x = rng.standard_normal(shape) * 3
    x = x.astype(dtype)
    weight = rng.standard_normal(x.shape).astype(dtype)
    weight.flat[0] = np.inf if x.ndim else weight.flat[0]  # an infinite upstream weight too
    twin, plain = _grads_both_ways(fn, x, weight)
    assert twin.dtype == plain.dtype == dtype
    np.testing.assert_array_equal(twin, plain)  # bit for bit (NaN where NaN)


def test_twins_are_registered():
    assert Tanh.fast_backward is not None and Softmax.fast_backward is not None
    assert Tanh.fast_backward is kernels.tanh_backward or Tanh.fast_backward.__func__ is kernels.tanh_backward
