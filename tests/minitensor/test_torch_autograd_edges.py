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
