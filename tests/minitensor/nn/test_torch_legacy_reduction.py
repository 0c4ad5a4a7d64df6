"""The deprecated `size_average` / `reduce` flags of the losses: the reduction they mean and PyTorch's
warning naming it, from the functions and from the modules alike."""
import warnings

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32)
Y = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], dtype=np.float32)
CLASSES = np.array([2, 0])
FUNCTIONS = {
    "cross_entropy": lambda L, x, y, c, **kw: L.nn.functional.cross_entropy(x, c, **kw),
    "nll_loss": lambda L, x, y, c, **kw: L.nn.functional.nll_loss(x.log_softmax(1), c, **kw),
    "mse_loss": lambda L, x, y, c, **kw: L.nn.functional.mse_loss(x, y, **kw),
    "l1_loss": lambda L, x, y, c, **kw: L.nn.functional.l1_loss(x, y, **kw),
    "bce_with_logits": lambda L, x, y, c, **kw: L.nn.functional.binary_cross_entropy_with_logits(x, y, **kw),
    "soft_margin_loss": lambda L, x, y, c, **kw: L.nn.functional.soft_margin_loss(x, 2 * y - 1, **kw),
    "MSELoss": lambda L, x, y, c, **kw: L.nn.MSELoss(**kw)(x, y),
    "CrossEntropyLoss": lambda L, x, y, c, **kw: L.nn.CrossEntropyLoss(**kw)(x, c),
}
FLAGS = [dict(size_average=False), dict(size_average=True), dict(reduce=False), dict(size_average=False, reduce=True)]


def run(lib, name, flags):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = FUNCTIONS[name](lib, lib.tensor(X), lib.tensor(Y), lib.tensor(CLASSES), **flags)
    return out, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
@pytest.mark.parametrize("name", FUNCTIONS)
def test_legacy_flags_mean_pytorchs_reduction_with_its_warning(name, flags):
    ours, our_warnings = run(mt, name, flags)
    theirs, their_warnings = run(torch, name, flags)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    assert our_warnings == their_warnings and len(our_warnings) == 1
    assert "please use reduction=" in our_warnings[0]


def test_without_the_flags_there_is_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mt.nn.functional.mse_loss(mt.tensor(X), mt.tensor(Y), reduction="sum")
        mt.nn.MSELoss(reduction="none")(mt.tensor(X), mt.tensor(Y))
