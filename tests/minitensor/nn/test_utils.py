"""clip_grad_norm_: returns the total norm before clipping and scales all gradients together."""
import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn


def params_with_grads(*grads, dtype=mt.float64):
    ps = []
    for g in grads:
        p = nn.Parameter(mt.zeros(*np.shape(g), dtype=dtype))
        p.grad = mt.tensor(np.asarray(g, dtype=dtype))
        ps.append(p)
    return ps


def test_clip_grad_norm_scales_when_above_max():
    ps = params_with_grads([3.0, 0.0], [[4.0]])  # joint 2-norm 5
    total = nn.utils.clip_grad_norm_(ps, max_norm=1.0)
    assert float(total) == pytest.approx(5.0, rel=1e-12)
    coef = 1.0 / (5.0 + 1e-6)  # PyTorch's max_norm / (total + 1e-6)
    np.testing.assert_allclose(ps[0].grad.numpy(force=True), [3 * coef, 0.0], rtol=1e-12)
    np.testing.assert_allclose(ps[1].grad.numpy(force=True), [[4 * coef]], rtol=1e-12)


def test_clip_grad_norm_leaves_small_gradients_alone():
    ps = params_with_grads([0.3, 0.4])
    total = nn.utils.clip_grad_norm_(ps, max_norm=1.0)
    assert float(total) == pytest.approx(0.5)
    np.testing.assert_array_equal(ps[0].grad.numpy(force=True), [0.3, 0.4])


def test_clip_grad_norm_other_norms_and_no_grads():
    ps = params_with_grads([1.0, -7.0], [2.0])
    assert float(nn.utils.clip_grad_norm_(ps, 100.0, norm_type=math.inf)) == 7.0
    assert float(nn.utils.clip_grad_norm_(ps, 100.0, norm_type=1)) == pytest.approx(10.0)
    p = nn.Parameter(mt.zeros(2))
    assert float(nn.utils.clip_grad_norm_([p], 1.0)) == 0.0 and p.grad is None
    # A single tensor works as well as an iterable.
    assert float(nn.utils.clip_grad_norm_(ps[1], 100.0)) == pytest.approx(2.0)


def test_clip_grad_norm_keeps_float32_and_can_reject_nonfinite():
    ps = params_with_grads([30.0, 40.0], dtype=mt.float32)
    total = nn.utils.clip_grad_norm_(ps, 1.0)
    assert total.dtype == mt.float32 and ps[0].grad.dtype == mt.float32
    assert np.linalg.norm(ps[0].grad.numpy(force=True)) == pytest.approx(1.0, rel=1e-5)
    bad = params_with_grads([np.inf, 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(bad, 1.0, error_if_nonfinite=True)


def test_clip_grad_value_and_vector_round_trip():
    ps = params_with_grads([-3.0, 0.5, 2.0])
    nn.utils.clip_grad_value_(ps, 1.0)
    np.testing.assert_array_equal(ps[0].grad.numpy(force=True), [-1.0, 0.5, 1.0])
    a, b = nn.Parameter(mt.zeros(2, 2)), nn.Parameter(mt.zeros(3))
    nn.utils.vector_to_parameters(mt.arange(7.0), [a, b])
    np.testing.assert_array_equal(nn.utils.parameters_to_vector([a, b]).numpy(force=True), np.arange(7.0))


def test_clip_grad_norm_float32_gradients_too_big_to_square_in_float32():
    p = mt.zeros(3, requires_grad=True)
    p.grad = mt.tensor([3e20, 4e20, 0.0])  # squares overflow float32; the norm itself does not
    total = nn.utils.clip_grad_norm_([p], max_norm=1.0)
    assert float(total) == pytest.approx(5e20, rel=1e-6)
    np.testing.assert_allclose(p.grad.numpy(force=True), [0.6, 0.8, 0.0], rtol=1e-6)
    assert p.grad.dtype == mt.float32
