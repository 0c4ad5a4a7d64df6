"""Learning-rate schedules against their closed forms, per parameter group, and their state dicts."""
import math
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.optim import SGD, lr_scheduler

BASE = (0.1, 0.3)  # two groups, two base lrs


def optimizer():
    a, b = nn.Parameter(mt.zeros(1)), nn.Parameter(mt.zeros(1))
    return SGD([{"params": [a]}, {"params": [b], "lr": BASE[1]}], lr=BASE[0])


def lrs(make, steps):
    """The lr of each group used at steps 0, 1, ..., steps (scheduler stepped after each optimizer step)."""
    opt = optimizer()
    sched = make(opt)
    out = [[g["lr"] for g in opt.param_groups]]
    assert sched.get_last_lr() == out[0]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
    return np.array(out)


def closed(form, steps):
    return np.array([[form(base, t) for base in BASE] for t in range(steps + 1)])


def test_lambda_lr():
    got = lrs(lambda o: lr_scheduler.LambdaLR(o, lambda t: 1 / (1 + t)), 10)
    np.testing.assert_allclose(got, closed(lambda b, t: b / (1 + t), 10), rtol=1e-15)
    per_group = lrs(lambda o: lr_scheduler.LambdaLR(o, [lambda t: 1.0, lambda t: 0.5 ** t]), 4)
    np.testing.assert_allclose(per_group[:, 1], [BASE[1] * 0.5 ** t for t in range(5)], rtol=1e-15)
    np.testing.assert_allclose(per_group[:, 0], BASE[0])
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        lr_scheduler.LambdaLR(optimizer(), [lambda t: 1.0])


def test_step_lr():
    got = lrs(lambda o: lr_scheduler.StepLR(o, step_size=3, gamma=0.5), 10)
    np.testing.assert_allclose(got, closed(lambda b, t: b * 0.5 ** (t // 3), 10), rtol=1e-14)


def test_exponential_lr():
    got = lrs(lambda o: lr_scheduler.ExponentialLR(o, gamma=0.9), 10)
    np.testing.assert_allclose(got, closed(lambda b, t: b * 0.9 ** t, 10), rtol=1e-13)


def test_cosine_annealing_lr():
    T, lo = 8, 0.01
    got = lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=T, eta_min=lo), 2 * T)
    # Half a cosine down to eta_min by T, and (as PyTorch) back up over the next T steps.
    expected = closed(lambda b, t: lo + (b - lo) * (1 + math.cos(math.pi * t / T)) / 2, 2 * T)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert got[T] == pytest.approx([lo, lo])


def test_linear_lr_warmup():
    got = lrs(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4), 8)
    np.testing.assert_allclose(got, closed(lambda b, t: b * (0.25 + 0.75 * min(t, 4) / 4), 8), rtol=1e-14)
    with pytest.raises(ValueError, match="start_factor"):
        lr_scheduler.LinearLR(optimizer(), start_factor=0)


def test_linear_warmup_helper():
    w, n = 4, 10
    got = lrs(lambda o: lr_scheduler.linear_warmup(o, warmup_steps=w, total_steps=n), 12)

    def factor(t):
        return (t + 1) / w if t < w else max(0.0, (n - t) / (n - w))

    np.testing.assert_allclose(got, closed(lambda b, t: b * factor(t), 12), rtol=1e-15)
    assert got[0, 0] == pytest.approx(BASE[0] / w) and got[w - 1, 0] == pytest.approx(BASE[0])
    flat = lrs(lambda o: lr_scheduler.linear_warmup(o, warmup_steps=3), 6)
    np.testing.assert_allclose(flat[:, 0], [BASE[0] * min(1, (t + 1) / 3) for t in range(7)], rtol=1e-15)


def test_warmup_then_cosine_with_sequential_lr():
    w, T = 3, 6

    def make(o):
        warm = lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=w)
        cos = lr_scheduler.CosineAnnealingLR(o, T_max=T)
        return lr_scheduler.SequentialLR(o, [warm, cos], milestones=[w])

    got = lrs(make, w + T)

    def form(b, t):
        if t < w:
            return b * (0.1 + 0.9 * t / w)
        return b * (1 + math.cos(math.pi * (t - w) / T)) / 2

    np.testing.assert_allclose(got, closed(form, w + T), rtol=1e-12, atol=1e-15)


def test_initial_lr_and_resuming_from_state_dict():
    opt = optimizer()
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    assert [g["initial_lr"] for g in opt.param_groups] == list(BASE)
    for _ in range(3):
        opt.step()
        sched.step()
    sd_opt, sd_sched = opt.state_dict(), sched.state_dict()
    opt2 = optimizer()
    sched2 = lr_scheduler.StepLR(opt2, step_size=2, gamma=0.1)
    opt2.load_state_dict(sd_opt)
    sched2.load_state_dict(sd_sched)
    for _ in range(3):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(optimizer(), step_size=2, last_epoch=5)


def test_scheduler_before_optimizer_warns():
    opt = optimizer()
    sched = lr_scheduler.StepLR(opt, step_size=2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    opt2 = optimizer()
    sched2 = lr_scheduler.StepLR(opt2, step_size=2)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched2.step()


def test_rejects_non_optimizer():
    with pytest.raises(TypeError, match="not an Optimizer"):
        lr_scheduler.StepLR(object(), step_size=1)
