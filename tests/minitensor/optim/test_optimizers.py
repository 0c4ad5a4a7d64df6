"""SGD, Adam and AdamW: three steps against the update equations written out here in numpy."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitensor as mt
import minitensor.nn as nn
from minitensor.optim import SGD, Adam, AdamW

RNG = np.random.default_rng(42)
INIT = [RNG.standard_normal((3, 2)), RNG.standard_normal(4)]
GRADS = [[RNG.standard_normal(w.shape) for w in INIT] for _ in range(3)]  # a different gradient each step


# ---- the update rules, written out ------------------------------------------------------------------
def sgd_reference(w, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    buf = None
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
    return w


def adam_reference(w, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                   maximize=False, decoupled=False):
    b1, b2 = betas
    m = v = vmax = np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        if decoupled:
            w = w * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        vmax = np.maximum(vmax, v)
        m_hat = m / (1 - b1 ** t)
        v_hat = (vmax if amsgrad else v) / (1 - b2 ** t)
        w = w - lr * m_hat / (np.sqrt(v_hat) + eps)
    return w


def adamw_reference(w, grads, lr, weight_decay=1e-2, **kw):
    return adam_reference(w, grads, lr, weight_decay=weight_decay, decoupled=True, **kw)


def make_params(dtype=mt.float64):
    return [nn.Parameter(mt.tensor(w.copy(), dtype=dtype)) for w in INIT]


def run(opt, params, grads=GRADS, dtype=mt.float64):
    for step in grads:
        for p, g in zip(params, step):
            p.grad = mt.tensor(g, dtype=dtype)
        opt.step()
    return [p.numpy(force=True) for p in params]


CASES = [
    (SGD, sgd_reference, dict(lr=0.1)),
    (SGD, sgd_reference, dict(lr=0.1, weight_decay=0.3)),
    (SGD, sgd_reference, dict(lr=0.1, momentum=0.9)),
    (SGD, sgd_reference, dict(lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.1)),
    (SGD, sgd_reference, dict(lr=0.1, momentum=0.8, nesterov=True)),
    (SGD, sgd_reference, dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.2, maximize=True)),
    (Adam, adam_reference, dict(lr=0.01)),
    (Adam, adam_reference, dict(lr=0.01, weight_decay=0.5)),
    (Adam, adam_reference, dict(lr=0.1, betas=(0.5, 0.6), eps=1e-3, amsgrad=True, maximize=True)),
    (AdamW, adamw_reference, dict(lr=0.01)),
    (AdamW, adamw_reference, dict(lr=0.1, weight_decay=0.5, amsgrad=True)),
]


@pytest.mark.parametrize("cls, reference, kw", CASES, ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_three_steps_follow_the_update_equations(cls, reference, kw):
    params = make_params()
    got = run(cls(params, **kw), params)
    for w0, w, i in zip(INIT, got, range(2)):
        expected = reference(w0, [g[i] for g in GRADS], **kw)
        np.testing.assert_allclose(w, expected, rtol=1e-12, atol=1e-14)
        assert not np.allclose(w, w0)  # the step did move the parameter


@pytest.mark.parametrize("cls, reference, kw", CASES[::2], ids=lambda v: str(v) if isinstance(v, dict) else "")
def test_parameter_groups_use_their_own_options(cls, reference, kw):
    params = make_params()
    override = dict(lr=kw["lr"] * 3, weight_decay=0.05)
    if cls is SGD:
        override["momentum"] = 0.5
    else:
        override["betas"] = (0.8, 0.9)
    opt = cls([{"params": [params[0]]}, {"params": [params[1]], **override}], **kw)
    got = run(opt, params)
    np.testing.assert_allclose(got[0], reference(INIT[0], [g[0] for g in GRADS], **kw), rtol=1e-12)
    np.testing.assert_allclose(got[1], reference(INIT[1], [g[1] for g in GRADS], **{**kw, **override}), rtol=1e-12)
    assert opt.param_groups[1]["lr"] == override["lr"] and opt.param_groups[0]["lr"] == kw["lr"]


def test_editing_lr_in_param_groups_takes_effect():
    p = make_params()[:1]
    opt = SGD(p, lr=0.1)
    run(opt, p, GRADS[:1])
    opt.param_groups[0]["lr"] = 0.01
    run(opt, p, GRADS[1:2])
    expected = INIT[0] - 0.1 * GRADS[0][0] - 0.01 * GRADS[1][0]
    np.testing.assert_allclose(p[0].numpy(force=True), expected, rtol=1e-12)


@pytest.mark.parametrize("cls, reference, kw", [CASES[4], CASES[8], CASES[10]], ids=["sgd", "adam", "adamw"])
def test_float32_params_stay_float32_and_track_float64(cls, reference, kw):
    params = make_params(mt.float32)
    opt = cls(params, **kw)
    got = run(opt, params, dtype=mt.float32)
    for w, w0, i in zip(got, INIT, range(2)):
        assert w.dtype == np.float32
        expected = reference(w0, [g[i] for g in GRADS], **kw)
        np.testing.assert_allclose(w, expected, rtol=1e-4, atol=1e-5)
    for state in opt.state.values():
        assert all(v.dtype == np.float32 for v in state.values() if isinstance(v, mt.Tensor))


@given(st.sampled_from(CASES), st.lists(st.integers(1, 3), min_size=0, max_size=3), st.integers(0, 2**16))
def test_any_shape_matches_the_reference(case, shape, seed):
    cls, reference, kw = case
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal(shape)
    grads = [rng.standard_normal(shape) for _ in range(3)]
    p = nn.Parameter(mt.tensor(w0.copy()))
    opt = cls([p], **kw)
    for g in grads:
        p.grad = mt.tensor(g)
        opt.step()
    np.testing.assert_allclose(p.numpy(force=True), reference(w0, grads, **kw), rtol=1e-12, atol=1e-14)


def test_step_is_in_place_outside_the_graph_and_bumps_version():
    lin = nn.Linear(3, 2)
    opt = Adam(lin.parameters(), lr=0.1)
    weight_array, v = lin.weight.numpy(force=True), lin.weight._version
    lin(mt.randn(4, 3)).sum().backward()
    opt.step()
    assert lin.weight.numpy(force=True) is weight_array and lin.weight._version > v
    assert lin.weight.is_leaf and lin.weight.grad_fn is None and lin.weight.requires_grad


def test_parameters_without_grad_are_skipped():
    a, b = make_params()
    opt = Adam([a, b], lr=0.1)
    a.grad = mt.ones(*a.shape, dtype=mt.float64)
    opt.step()
    np.testing.assert_array_equal(b.numpy(force=True), INIT[1])
    assert b not in opt.state and opt.state[a]["step"] == 1


def test_zero_grad():
    a, b = make_params()
    opt = SGD([a, b], lr=0.1)
    a.grad, b.grad = mt.ones(3, 2, dtype=mt.float64), mt.ones(4, dtype=mt.float64)
    g = a.grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is g and not a.grad.numpy(force=True).any()
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_closure_is_called_with_grad_enabled():
    p = nn.Parameter(mt.tensor([2.0], dtype=mt.float64))
    opt = SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with mt.no_grad():
        loss = opt.step(closure)
    assert float(loss) == 4.0 and float(p.numpy(force=True)[0]) == 2.0 - 0.25 * 4.0


def test_bad_options_and_params_are_rejected():
    p = make_params()
    with pytest.raises(ValueError, match="learning rate"):
        SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Nesterov"):
        SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov"):
        SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="epsilon"):
        AdamW(p, eps=-1)
    with pytest.raises(ValueError, match="weight_decay"):
        Adam([{"params": p[:1]}, {"params": p[1:], "weight_decay": -0.1}])
    with pytest.raises(ValueError, match="empty"):
        SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable"):
        SGD(p[0], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        SGD([{"params": p}, {"params": p[:1]}], lr=0.1)
    with pytest.raises(ValueError, match="twice"):
        SGD([p[0], p[0]], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        SGD([p[0] * 2], lr=0.1)
    with pytest.raises(ValueError, match="floating point"):
        SGD([mt.tensor([1, 2])], lr=0.1)


def test_add_param_group_fills_defaults():
    a, b = make_params()
    opt = AdamW([a], lr=0.5)
    opt.add_param_group({"params": b, "lr": 0.1})
    g = opt.param_groups[1]
    assert g["params"] == [b] and g["lr"] == 0.1 and g["betas"] == (0.9, 0.999) and g["weight_decay"] == 1e-2


def test_adam_state_layout():
    p = make_params()[0]
    opt = Adam([p], lr=0.1, amsgrad=True)
    run(opt, [p], [[g[0]] for g in GRADS])
    assert set(opt.state[p]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert opt.state[p]["step"] == 3
    b1 = 0.9
    m = sum((1 - b1) * b1 ** (2 - k) * GRADS[k][0] for k in range(3))  # unrolled EMA of three gradients
    np.testing.assert_allclose(opt.state[p]["exp_avg"].numpy(force=True), m, rtol=1e-12)
    assert "Adam (" in repr(opt) and "lr: 0.1" in repr(opt)
    assert math.isclose(opt.defaults["lr"], 0.1)
