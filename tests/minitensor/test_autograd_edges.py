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


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("hook, error, match", [
    (lambda g: g.sum(), RuntimeError, "changed the size"),
    (lambda g: g[:2], RuntimeError, "changed the size"),
    (lambda g: g.double(), RuntimeError, "changed the type"),
    (lambda g: 5, TypeError, "returned 'int'"),
])
def test_a_hook_may_not_change_the_gradient_shape_or_dtype(leaf, hook, error, match):
    x = mt.tensor(np.ones(3, dtype=np.float32), requires_grad=True)
    y = x * 2
    (x if leaf else y).register_hook(hook)
    with pytest.raises(error, match="hook '<lambda>' .*" + match if error is RuntimeError else match):
        y.sum().backward()
    assert x.grad is None


def test_a_hook_that_keeps_shape_and_dtype_replaces_the_gradient():
    x = _leaf()
    x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [20.0, 20.0, 20.0])


@pytest.mark.parametrize("value, error", [
    (mt.ones(2, dtype=mt.float64), RuntimeError),
    (mt.ones(1, dtype=mt.float64), RuntimeError),
    (mt.ones(3, dtype=mt.float32), RuntimeError),
    (mt.ones(3, dtype=mt.int64), RuntimeError),
    ([1.0, 2.0, 3.0], TypeError),
])
def test_assigning_a_grad_that_does_not_fit_is_refused(value, error):
    x = _leaf()
    with pytest.raises(error):
        x.grad = value
    assert x.grad is None
    x.grad = mt.ones(3, dtype=mt.float64)
    x.grad = None
    assert x.grad is None


def test_grad_runs_only_the_part_of_the_graph_that_reaches_the_inputs():
    a, b = _leaf(), _leaf()
    fired = []
    b.register_hook(lambda g: fired.append("b"))
    h = a.exp()  # ExpBackward saves its output: freed after a backward through it
    h.register_hook(lambda g: fired.append("h"))
    y = h * 2
    y.register_hook(lambda g: fired.append("y"))
    loss = (y * b).sum()
    (gy,) = autograd.grad(loss, y, retain_graph=True)
    np.testing.assert_allclose(gy.numpy(), b.detach().numpy())
    assert fired == ["y"]
    assert a.grad is None and b.grad is None
    loss.backward()  # the nodes below y were not freed by grad
    np.testing.assert_allclose(a.grad.numpy(), 2 * np.exp(a.detach().numpy()) * b.detach().numpy())


def test_grad_of_a_non_tensor_input_is_a_type_error():
    x = _leaf()
    with pytest.raises(TypeError, match="float"):
        autograd.grad((x * 2).sum(), 1.0)
    with pytest.raises(RuntimeError):
        autograd.grad((x * 2).sum(), [x, 1.0])


@pytest.mark.parametrize("dtype", [mt.int64, mt.bool, mt.float32])
def test_backward_casts_the_upstream_gradient_to_the_output_dtype(dtype):
    x = _leaf()
    (x * 2).backward(mt.ones(3, dtype=dtype))
    assert x.grad.dtype == mt.float64
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_a_leaf_that_stopped_requiring_grad_gets_no_grad():
    x, w = _leaf(), _leaf()
    y = (x * w).sum()
    x.requires_grad_(False)
    y.backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), x.numpy())
