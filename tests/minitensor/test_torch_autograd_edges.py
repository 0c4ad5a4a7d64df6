"""Edge cases of the backward pass (issue 31) compared with PyTorch: the same values, or an error of the same type."""
import numpy as np
import pytest

import minitensor as mt
from minitensor import autograd

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow


def _pair(n=3):
    data = np.arange(1.0, n + 1)
    return mt.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return None


def test_backward_with_fewer_gradients_than_tensors():
    (x, tx) = _pair()
    err = _error(lambda: autograd.backward([(x * 2).sum(), (x * 3).sum()], [mt.tensor(1.0)]))
    terr = _error(lambda: torch.autograd.backward([(tx * 2).sum(), (tx * 3).sum()], [torch.tensor(1.0)]))
    assert err is terr is RuntimeError


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("hook", [lambda g: g.sum(), lambda g: g[:2], lambda g: g.double(), lambda g: 5,
                                  lambda g: g * 3])
def test_hook_results_that_do_not_fit(leaf, hook):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        (x if leaf else y).register_hook(hook)
        err = _error(lambda: y.sum().backward())
        return err, None if x.grad is None else x.grad.tolist()
    assert run(mt) == run(torch)


@pytest.mark.parametrize("make", [lambda lib: lib.ones(2), lambda lib: lib.ones(1), lambda lib: lib.ones(3),
                                  lambda lib: lib.ones(3, dtype=lib.float64), lambda lib: lib.ones(3, dtype=lib.int64),
                                  lambda lib: [1.0, 2.0, 3.0], lambda lib: None])
def test_assigning_grad(make):
    def run(lib):
        x = lib.zeros(3, requires_grad=True)
        err = _error(lambda: setattr(x, "grad", make(lib)))
        return err, None if x.grad is None else (x.grad.tolist(), str(x.grad.dtype).split(".")[-1])
    assert run(mt) == run(torch)


def test_grad_runs_only_what_reaches_its_inputs():
    def run(lib):
        a, b = _pair()[0 if lib is mt else 1], _pair()[0 if lib is mt else 1]
        fired = []
        b.register_hook(lambda g: fired.append("b"))
        h = a.exp()
        h.register_hook(lambda g: fired.append("h"))
        y = h * 2
        loss = (y * b).sum()
        (gy,) = lib.autograd.grad(loss, y, retain_graph=True)
        loss.backward()
        return sorted(fired), gy.tolist(), a.grad.tolist()  # (only which hooks fired: the order may differ)
    assert run(mt) == run(torch)


@pytest.mark.parametrize("inputs", [lambda x: 1.0, lambda x: [x, 1.0]])
def test_grad_of_non_tensor_inputs(inputs):
    x, tx = _pair()
    assert _error(lambda: autograd.grad((x * 2).sum(), inputs(x))) is \
        _error(lambda: torch.autograd.grad((tx * 2).sum(), inputs(tx)))


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_backward_with_a_gradient_of_another_dtype(dtype):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        (x * 2).backward(lib.ones(3, dtype=getattr(lib, dtype)))
        return x.grad.tolist(), str(x.grad.dtype).split(".")[-1]
    assert run(mt) == run(torch)


def test_requires_grad_false_between_forward_and_backward():
    def run(lib):
        x, w = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
        y = (x * w).sum()
        x.requires_grad_(False)
        y.backward()
        return x.grad, w.grad.tolist()
    assert run(mt) == run(torch)
