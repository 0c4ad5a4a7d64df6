"""Optimizers and schedulers against PyTorch's own (skipped when PyTorch is not installed)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitensor as mt  # noqa: E402

# a comparison with PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

RNG = np.random.default_rng(7)
INIT = [RNG.standard_normal((4, 3)), RNG.standard_normal(3)]
GRADS = [[RNG.standard_normal(w.shape) for w in INIT] for _ in range(5)]

VARIANTS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.1)),
    ("AdamW", dict(lr=0.1, weight_decay=0.5, amsgrad=True, maximize=True)),
]


def trajectory(lib, name, kw, dtype):
    to = (lambda a: mt.tensor(a, dtype=dtype)) if lib is mt else (lambda a: torch.tensor(a, dtype=dtype))
    params = [lib.nn.Parameter(to(w.copy())) for w in INIT]
    opt = getattr(lib.optim, name)([{"params": params[:1]}, {"params": params[1:], "lr": 0.03}], **kw)
    out = []
    for step in GRADS:
        for p, g in zip(params, step):
            p.grad = to(g)
        opt.step()
        out.append([p.detach().numpy().copy() for p in params])
    return out


@pytest.mark.parametrize("name, kw", VARIANTS, ids=[f"{n}-{kw}" for n, kw in VARIANTS])
def test_updates_equal_pytorchs(name, kw):
    ours = trajectory(mt, name, kw, mt.float64)
    theirs = trajectory(torch, name, kw, torch.float64)
    for a_step, b_step in zip(ours, theirs):
        for a, b in zip(a_step, b_step):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    ours32 = trajectory(mt, name, kw, mt.float32)
    theirs32 = trajectory(torch, name, kw, torch.float32)
    for a, b in zip(ours32[-1], theirs32[-1]):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def lr_sequence(lib, make, steps=30):
    params = [lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))]
    opt = lib.optim.AdamW([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1)
    sched = make(lib.optim.lr_scheduler, opt)
    seq = [[g["lr"] for g in opt.param_groups]]
    for _ in range(steps):
        opt.step()
        sched.step()
        seq.append(list(sched.get_last_lr()))
    return seq


SCHEDULES = {
    "lambda": lambda s, o: s.LambdaLR(o, lambda t: 0.95 ** t),
    "lambda_per_group": lambda s, o: s.LambdaLR(o, [lambda t: 1 / (t + 1), lambda t: 0.5]),
    "step": lambda s, o: s.StepLR(o, step_size=4, gamma=0.5),
    "exponential": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "cosine": lambda s, o: s.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "linear_warmup": lambda s, o: s.LinearLR(o, start_factor=0.1, end_factor=1.0, total_iters=6),
    "linear_decay": lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.2, total_iters=8),
    "warmup_then_cosine": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.01, total_iters=5), s.CosineAnnealingLR(o, T_max=25)], milestones=[5]),
    "three_phases": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.5, total_iters=4), s.ExponentialLR(o, gamma=0.8),
            s.StepLR(o, step_size=3)], milestones=[4, 12]),
}


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
def test_lr_sequences_equal_pytorchs(kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = lr_sequence(mt, SCHEDULES[kind])
        theirs = lr_sequence(torch, SCHEDULES[kind])
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=1e-14, atol=0)


def test_optimizer_state_dict_layout_equals_pytorchs():
    def state(lib):
        params = [lib.nn.Parameter(lib.ones(2, 2)), lib.nn.Parameter(lib.ones(3))]
        opt = lib.optim.Adam([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}], amsgrad=True)
        for p in params:
            p.grad = lib.ones(*p.shape)
        opt.step()
        return opt.state_dict()

    a, b = state(mt), state(torch)
    assert [g["params"] for g in a["param_groups"]] == [g["params"] for g in b["param_groups"]]
    for ga, gb in zip(a["param_groups"], b["param_groups"]):
        for k in ("lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"):
            assert ga[k] == gb[k], k
    assert a["state"].keys() == b["state"].keys()
    for i in a["state"]:
        assert set(a["state"][i]) == set(b["state"][i])
        assert a["state"][i]["step"] == float(b["state"][i]["step"])
        for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
            np.testing.assert_allclose(a["state"][i][k].numpy(force=True), b["state"][i][k].numpy(), rtol=1e-6)
