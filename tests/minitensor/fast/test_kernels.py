"""The speed layer's twins of Tanh's and Softmax's backward and of Softmax's forward (minitensor/fast/kernels.py)
against the ops' own: the same graph run with nothing recording (the twin) and under create_graph=True (the
op's Tensor-op backward), float32 and float64, a random upstream weight, NaN and inf included. Bit for bit,
but along a short last dim, where softmax sums its rows as `rows @ ones` (another order: within rounding)."""
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
    ("softmax dim 0", lambda t: t.softmax(0), (3, 2)),
    ("softmax of long rows", lambda t: t.softmax(-1), (2, 70)),
    ("softmax of a 0-d tensor", lambda t: t.softmax(0), ()),
]
SHORT_ROWS = [  # Softmax along a short last dim: row sums by BLAS
    ("softmax dim -1", lambda t: t.softmax(-1), (2, 3, 4)),
    ("softmax of a -inf row", lambda t: t.softmax(-1), "edges"),
]


def _case(shape, dtype):
    rng = np.random.default_rng(0)
    if shape == "edges":
        x = np.array([[0.5, np.inf, -np.inf], [-np.inf, -np.inf, -np.inf], [np.nan, 1.0, -2.0]])
    else:
        x = rng.standard_normal(shape) * 3
    x = x.astype(dtype)
    weight = rng.standard_normal(x.shape).astype(dtype)
    weight.flat[0] = np.inf if x.ndim else weight.flat[0]  # an infinite upstream weight too
    return x, weight


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, fn, shape", CASES, ids=[c[0] for c in CASES])
def test_twin_equals_the_ops_backward(name, fn, shape, dtype):
    twin, plain = _grads_both_ways(fn, *_case(shape, dtype))
    assert twin.dtype == plain.dtype == dtype
    np.testing.assert_array_equal(twin, plain)  # bit for bit (NaN where NaN)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, fn, shape", SHORT_ROWS, ids=[c[0] for c in SHORT_ROWS])
def test_short_row_softmax_twins_equal_the_ops_to_rounding(name, fn, shape, dtype):
    x, weight = _case(shape, dtype)
    twin, plain = _grads_both_ways(fn, x, weight)
    assert twin.dtype == plain.dtype == dtype
    np.testing.assert_allclose(twin, plain, rtol=4 * np.finfo(dtype).eps, atol=4 * np.finfo(dtype).eps)
    ctx = Softmax()
    fast = kernels.softmax_forward(ctx, mt.tensor(x), -1)
    own = Softmax.forward(ctx, mt.tensor(x), -1)
    assert fast.dtype == own.dtype == dtype
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(own))  # a -inf row, a NaN: NaN where the op has it
    np.testing.assert_allclose(fast, own, rtol=4 * np.finfo(dtype).eps, atol=0)


def test_short_row_softmax_forward_takes_the_ops_row_max():
    """The twin's max over a transposed copy is the op's max: a row far from 0 (where a wrong shift would
    overflow exp or lose every digit) gives the op's probabilities."""
    x = np.array([[1e4, 1e4 - 1, 1e4 - 2], [-3e4, -3e4, -3e4 + 5]], dtype=np.float32)
    fast = kernels.softmax_forward(Softmax(), mt.tensor(x), 1)
    np.testing.assert_allclose(fast, Softmax.forward(Softmax(), mt.tensor(x), 1), rtol=1e-6)
    assert np.isfinite(fast).all()


def test_twins_are_registered():
    assert Tanh.fast_backward is not None and Softmax.fast_backward is not None and Softmax.fast_forward is not None
    assert Tanh.fast_backward is kernels.tanh_backward or Tanh.fast_backward.__func__ is kernels.tanh_backward
