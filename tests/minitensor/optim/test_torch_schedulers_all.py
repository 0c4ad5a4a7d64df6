"""Every lr scheduler against PyTorch's over 100 steps (lrs and momenta), and state dict round trips."""
import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitensor as mt  # noqa: E402

pytestmark = pytest.mark.slow


def momenta(opt):
    return [g["momentum"] if "momentum" in g else g["betas"][0] for g in opt.param_groups]


def make_opt(lib, opt_name):
    params = [lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))]
    kw = dict(momentum=0.9) if opt_name == "SGD" else {}
    return getattr(lib.optim, opt_name)([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=0.1, **kw)


def sequence(lib, make, opt_name="SGD", steps=100, metrics=None, reload_at=None):
    """lrs and momenta after each of `steps` steps; with reload_at, the scheduler is rebuilt there from its
    state dict (and the optimizer's) and carries on."""
    opt = make_opt(lib, opt_name)
    sched = make(lib.optim.lr_scheduler, opt)
    out = [[g["lr"] for g in opt.param_groups] + momenta(opt)]
    for i in range(steps):
        if i == reload_at:
            saved_opt, saved = copy.deepcopy(opt.state_dict()), copy.deepcopy(sched.state_dict())
            opt = make_opt(lib, opt_name)
            opt.load_state_dict(saved_opt)
            sched = make(lib.optim.lr_scheduler, opt)
            sched.load_state_dict(saved)
        opt.step()
        if metrics is not None:
            sched.step(metrics[i])
        else:
            sched.step()
        out.append(list(sched.get_last_lr()) + momenta(opt))
    return np.array(out), sched


SCHEDULES = {
    "multiplicative": lambda s, o: s.MultiplicativeLR(o, lambda t: 0.97),
    "multiplicative_per_group": lambda s, o: s.MultiplicativeLR(o, [lambda t: 0.99, lambda t: 1 - 1 / (t + 10)]),
    "multistep": lambda s, o: s.MultiStepLR(o, [10, 30, 30, 60], gamma=0.5),
    "constant": lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=7),
    "constant_default": lambda s, o: s.ConstantLR(o),
    "linear": lambda s, o: s.LinearLR(o, 0.2, 0.9, 30),
    "polynomial": lambda s, o: s.PolynomialLR(o, total_iters=40, power=2.0),
    "polynomial_default": lambda s, o: s.PolynomialLR(o),
    "cyclic_triangular": lambda s, o: s.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=7, step_size_down=5),
    "cyclic_triangular2": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=6, mode="triangular2"),
    "cyclic_exp_range": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=6, mode="exp_range", gamma=0.97,
                                                base_momentum=0.7),
    "cyclic_scale_fn": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=4, scale_fn=lambda x: 0.9 ** x,
                                               scale_mode="iterations", cycle_momentum=False),
    "onecycle": lambda s, o: s.OneCycleLR(o, 0.5, total_steps=100),
    "onecycle_three_phase_linear": lambda s, o: s.OneCycleLR(o, [0.5, 1.0], epochs=10, steps_per_epoch=10,
                                                             three_phase=True, anneal_strategy="linear"),
    "onecycle_no_momentum": lambda s, o: s.OneCycleLR(o, 0.3, total_steps=120, pct_start=0.1, cycle_momentum=False,
                                                      div_factor=10.0, final_div_factor=100.0),
    "warm_restarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=10, eta_min=0.001),
    "warm_restarts_mult": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    "chained": lambda s, o: s.ChainedScheduler([s.ConstantLR(o, 0.5, 5), s.ExponentialLR(o, 0.97),
                                                s.MultiStepLR(o, [20, 50])]),
    "chained_warmup_cosine": lambda s, o: s.ChainedScheduler([s.LinearLR(o, 0.1, total_iters=10),
                                                              s.CosineAnnealingLR(o, 50)], optimizer=o),
    "sequential": lambda s, o: s.SequentialLR(o, [s.LinearLR(o, 0.1, total_iters=10),
                                                  s.CosineAnnealingWarmRestarts(o, 15), s.PolynomialLR(o, 30)],
                                              milestones=[10, 40]),
    "sequential_constant_multistep": lambda s, o: s.SequentialLR(o, [s.ConstantLR(o, 0.1, 10),
                                                                     s.MultiStepLR(o, [5, 25])], milestones=[12]),
}


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_100_steps_equal_pytorchs(kind, opt_name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, a = sequence(mt, SCHEDULES[kind], opt_name)
        theirs, b = sequence(torch, SCHEDULES[kind], opt_name)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-16)
    assert a.last_epoch == b.last_epoch if hasattr(b, "last_epoch") else True
    assert set(a.state_dict()) == set(b.state_dict())


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
def test_state_dict_round_trip_continues_the_same_schedule(kind):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        straight, _ = sequence(mt, SCHEDULES[kind], "SGD", steps=60)
        resumed, _ = sequence(mt, SCHEDULES[kind], "SGD", steps=60, reload_at=33)
        theirs, _ = sequence(torch, SCHEDULES[kind], "SGD", steps=60, reload_at=33)
    # (rebuilding a scheduler on the loaded optimizer applies its step 0 again, e.g. ConstantLR's factor,
    # before load_state_dict: PyTorch's does the same, so the resumed run is compared with PyTorch's)
    np.testing.assert_allclose(resumed, theirs, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(resumed[:34], straight[:34], rtol=1e-13, atol=1e-16)


METRIC = list(np.concatenate([np.linspace(1, 0.5, 20), np.full(30, 0.5), np.linspace(0.5, 0.4, 10),
                              np.full(40, 0.45)]))
PLATEAU = [
    ({}, METRIC),
    (dict(mode="max", factor=0.5, patience=3, threshold=0.01, threshold_mode="abs", cooldown=2,
          min_lr=[0.01, 0.05]), [-m for m in METRIC]),
    (dict(factor=0.5, patience=0, eps=1e-3, min_lr=0.02), METRIC),
    (dict(mode="max", patience=2, threshold=0.05), list(np.sin(np.arange(100) / 7))),
]


@pytest.mark.parametrize("kw, metric", PLATEAU)
def test_reduce_lr_on_plateau_equals_pytorchs(kw, metric):
    ours, a = sequence(mt, lambda s, o: s.ReduceLROnPlateau(o, **kw), metrics=metric)
    theirs, b = sequence(torch, lambda s, o: s.ReduceLROnPlateau(o, **kw), metrics=metric)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=0)
    assert (a.best, a.num_bad_epochs, a.cooldown_counter, a.last_epoch) == \
        (b.best, b.num_bad_epochs, b.cooldown_counter, b.last_epoch)
    assert set(a.state_dict()) == set(b.state_dict())
    resumed, _ = sequence(mt, lambda s, o: s.ReduceLROnPlateau(o, **kw), metrics=metric, reload_at=41)
    np.testing.assert_allclose(resumed, ours, rtol=1e-14, atol=0)


@pytest.mark.parametrize("kind, epochs", [("multistep", [3, 10, 31, 31, 60]), ("constant", [0, 6, 7, 50]),
                                          ("polynomial", [5, 39, 40, 80]), ("warm_restarts", [0, 2.5, 10, 23]),
                                          ("warm_restarts_mult", [1, 3, 8.5, 21, 50])])
def test_step_with_an_epoch_uses_the_closed_form_as_pytorch(kind, epochs):
    def lrs(lib):
        opt = make_opt(lib, "SGD")
        sched = SCHEDULES[kind](lib.optim.lr_scheduler, opt)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in epochs:
                opt.step()
                sched.step(e)
                out.append(sched.get_last_lr())
        return out

    np.testing.assert_allclose(lrs(mt), lrs(torch), rtol=1e-13)


@pytest.mark.parametrize("make", [
    lambda s, o: s.SequentialLR(o, [s.ReduceLROnPlateau(o)], milestones=[]),
    lambda s, o: s.ChainedScheduler([s.ReduceLROnPlateau(o)]),
    lambda s, o: s.OneCycleLR(o, 0.1),
    lambda s, o: s.OneCycleLR(o, 0.1, total_steps=10, pct_start=1.5),
    lambda s, o: s.OneCycleLR(o, 0.1, total_steps=10, anneal_strategy="square"),
    lambda s, o: s.CyclicLR(o, 0.1, 1.0, mode="sine"),
    lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda s, o: s.ConstantLR(o, factor=2.0),
    lambda s, o: s.ReduceLROnPlateau(o, factor=1.5),
    lambda s, o: s.ReduceLROnPlateau(o, mode="best"),
    lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]),
    lambda s, o: s.MultiplicativeLR(o, [lambda t: 1.0]),
])
def test_bad_arguments_raise_value_errors_as_pytorchs(make):
    with pytest.raises(ValueError):
        make(torch.optim.lr_scheduler, make_opt(torch, "SGD"))
    with pytest.raises(ValueError):
        make(mt.optim.lr_scheduler, make_opt(mt, "SGD"))


def test_onecycle_past_its_total_steps_raises_as_pytorchs():
    for lib in (mt, torch):
        opt = make_opt(lib, "SGD")
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=3)
        for _ in range(3):
            opt.step()
            sched.step()
        with pytest.raises(ValueError, match="Tried to step 4 times"):
            sched.step()


def test_verbose_is_gone_in_both():
    # PyTorch 2.13 removed the deprecated `verbose` argument: both libraries reject it alike
    for lib in (mt, torch):
        with pytest.raises(TypeError):
            lib.optim.lr_scheduler.StepLR(make_opt(lib, "SGD"), 3, verbose=True)
