"""test_issue31_edges.py's cases against PyTorch itself: grad mode nested in inference mode, and a user's
Function whose backward leaves a broadcast gradient unreduced (summed, or refused when it can't be)."""
import numpy as np
import pytest

import minitensor as mt

from .test_issue31_edges import BROADCASTS, NESTINGS, SWEEP_FOUND, _broadcasting_function, nested_state, outcome

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("switches, expected", NESTINGS, ids=[" > ".join(c[0]) for c in NESTINGS])
def test_grad_mode_inside_inference_mode_as_pytorch(switches, expected):
    assert nested_state(torch, switches) == nested_state(mt, switches) == expected


@pytest.mark.parametrize("a_shape, b_shape", BROADCASTS, ids=str)
@pytest.mark.parametrize("reduce_by_hand", [False, True])
def test_unreduced_broadcast_gradients_as_pytorch(a_shape, b_shape, reduce_by_hand):
    if reduce_by_hand and len(a_shape) != 1:
        pytest.skip("g.sum(0) is a's gradient only for a of shape (n,)")
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=a_shape), rng.normal(size=b_shape)]
    w = rng.normal(size=np.broadcast_shapes(a_shape, b_shape))
    grads = []
    for lib in (mt, torch):
        a, b = (lib.tensor(v, requires_grad=True) for v in arrays)
        (_broadcasting_function(lib, reduce_by_hand).apply(a, b) * lib.tensor(w)).sum().backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*grads):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("a_shape, grad_shape", [((3,), (4,)), ((3,), ()), ((2, 3), (3,)), ((3,), (3, 2))], ids=str)
def test_a_gradient_that_cannot_be_summed_is_refused_as_in_pytorch(a_shape, grad_shape):
    for lib in (mt, torch):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return lib.ones(grad_shape, dtype=g.dtype)

        with pytest.raises(RuntimeError, match="BadBackward"):
            Bad.apply(lib.ones(a_shape, requires_grad=True)).sum().backward()


@pytest.mark.parametrize("name, fn, expected", SWEEP_FOUND, ids=[c[0] for c in SWEEP_FOUND])
def test_what_the_autograd_sweep_found_as_pytorch(name, fn, expected):
    assert outcome(torch, fn) == outcome(mt, fn) == expected
