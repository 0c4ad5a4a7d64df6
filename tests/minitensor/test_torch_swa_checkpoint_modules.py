"""torch.optim.swa_utils, torch.utils.checkpoint, torch.cuda.amp, torch.testing and torch.nn.modules.loss's bases
against PyTorch: the same numbers, gradients, warnings and errors."""
import importlib
import warnings

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

LIBS = {"torch": torch, "minitensor": mt}


def _swa_run(lib, kind, strategy):
    """A tiny model trained 4 epochs with SGD; averaged from epoch 1 on; BatchNorm statistics refreshed."""
    t = LIBS[lib]
    su = importlib.import_module(f"{lib}.optim.swa_utils")
    rng = np.random.default_rng(0)
    model = t.nn.Sequential(t.nn.Linear(3, 4), t.nn.BatchNorm1d(4), t.nn.Linear(4, 2))
    with t.no_grad():
        for p in model.parameters():
            p.copy_(t.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    x = t.tensor(rng.standard_normal((6, 3)).astype(np.float32))
    averaging = {"swa": {}, "swa_multi": {"multi_avg_fn": su.get_swa_multi_avg_fn()},
                 "ema_multi_buffers": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9), "use_buffers": True},
                 "ema_single": {"avg_fn": su.get_ema_avg_fn(0.8)}, "swa_single": {"avg_fn": su.get_swa_avg_fn()}}
    avg = su.AveragedModel(model, **averaging[kind])
    opt = t.optim.SGD([{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.2}], lr=0.1)
    sched = su.SWALR(opt, swa_lr=[0.05, 0.02], anneal_epochs=2, anneal_strategy=strategy)
    lrs = []
    for _ in range(4):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        avg.update_parameters(model)
        sched.step()
        lrs.append(sched.get_last_lr())
    su.update_bn([x[:3], (x[3:],)], avg)
    state = {k: v.detach().numpy().astype(np.float64) for k, v in avg.state_dict().items()}
    return avg(x).detach().numpy(), lrs, state, avg.n_averaged.item()


@pytest.mark.parametrize("kind, strategy", [("swa", "cos"), ("swa_multi", "linear"), ("ema_multi_buffers", "cos"),
                                            ("ema_single", "linear"), ("swa_single", "cos")])
def test_averaged_model_swalr_and_update_bn_give_pytorchs_numbers(kind, strategy):
    ours, theirs = _swa_run("minitensor", kind, strategy), _swa_run("torch", kind, strategy)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    assert list(ours[2]) == list(theirs[2]) and ours[3] == theirs[3]
    for k in ours[2]:
        np.testing.assert_allclose(ours[2][k], theirs[2][k], rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("call, error", [
    (lambda su, m, o: su.AveragedModel(m, avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn()),
     AssertionError),
    (lambda su, m, o: su.get_ema_multi_avg_fn(1.5), ValueError),
    (lambda su, m, o: su.get_ema_avg_fn(-0.1), ValueError),
    (lambda su, m, o: su.SWALR(o, swa_lr=0.1, anneal_strategy="step"), ValueError),
    (lambda su, m, o: su.SWALR(o, swa_lr=0.1, anneal_epochs=-1), ValueError),
    (lambda su, m, o: su.SWALR(o, swa_lr=[0.1, 0.2]), ValueError),
])
def test_swa_utils_refuse_what_pytorch_refuses(call, error):
    for lib, t in LIBS.items():
        su = importlib.import_module(f"{lib}.optim.swa_utils")
        model = t.nn.Linear(2, 2)
        with pytest.raises(error):
            call(su, model, t.optim.SGD(model.parameters(), lr=0.1))


def _ckpt_grads(lib, use_reentrant, sequential):
    t = LIBS[lib]
    cp = importlib.import_module(f"{lib}.utils.checkpoint")
    block = t.nn.Sequential(t.nn.Linear(3, 4), t.nn.Tanh(), t.nn.Linear(4, 4), t.nn.Tanh(), t.nn.Linear(4, 2))
    with t.no_grad():
        for i, p in enumerate(block.parameters()):
            p.copy_(t.sin(t.arange(p.numel(), dtype=t.float64) + i).reshape(p.shape).to(p.dtype))
    x = t.tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32), requires_grad=True)
    w = t.tensor([[0.3, -1.2], [2.0, 0.7]])
    out = (cp.checkpoint_sequential(block, 2, x, use_reentrant=use_reentrant) if sequential
           else cp.checkpoint(block, x, use_reentrant=use_reentrant))
    (out * w).sum().backward()
    return [a.detach().numpy().copy() for a in (out, x.grad, *[p.grad for p in block.parameters()])]


@pytest.mark.parametrize("use_reentrant, sequential", [(False, False), (True, False), (False, True), (True, True)])
def test_checkpoint_values_and_gradients_are_pytorchs(use_reentrant, sequential):
    ours, theirs = _ckpt_grads("minitensor", use_reentrant, sequential), _ckpt_grads("torch", use_reentrant, sequential)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _warned_and_raised(lib, call):
    cp = importlib.import_module(f"{lib}.utils.checkpoint")
    t = LIBS[lib]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call(cp, t)
            error = None
        except Exception as e:
            result, error = None, (type(e), str(e))
    return sorted({str(w.message) for w in caught}), error, result


@pytest.mark.parametrize("call", [
    lambda cp, t: cp.checkpoint(t.nn.Linear(2, 2), t.ones(1, 2)).requires_grad,  # no use_reentrant: reentrant
    lambda cp, t: cp.checkpoint(t.nn.Linear(2, 2), t.ones(1, 2), use_reentrant=False).requires_grad,
    lambda cp, t: cp.checkpoint(lambda a, b=1: a * b, t.ones(2), use_reentrant=True, b=2),
    lambda cp, t: cp.checkpoint(lambda a: a, t.ones(2), use_reentrant=True, debug=True),
    lambda cp, t: cp.checkpoint(lambda a: a, t.ones(2), use_reentrant=False, determinism_check="full"),
    lambda cp, t: cp.checkpoint_sequential([t.nn.Tanh()], 1, t.ones(2), use_reentrant=False, bad=1),
    lambda cp, t: cp.detach_variable([t.ones(2)]),
    lambda cp, t: cp.create_selective_checkpoint_contexts(3),
    lambda cp, t: [p.name for p in cp.CheckpointPolicy],
    lambda cp, t: cp.DefaultDeviceType.get_device_type(),
])
def test_checkpoint_warns_and_refuses_as_pytorch(call):
    (our_warnings, our_error, ours), (their_warnings, their_error, theirs) = (
        _warned_and_raised("minitensor", call), _warned_and_raised("torch", call))
    assert our_warnings == their_warnings
    assert ours == theirs
    assert (our_error is None) == (their_error is None)
    if our_error:
        assert our_error[0] is their_error[0] and our_error[1] == their_error[1]


def _amp_and_loss_facts(lib):
    t = LIBS[lib]
    amp = importlib.import_module("torch.cuda.amp" if lib == "torch" else "minitensor.cuda_amp")
    loss_mod = importlib.import_module("torch.nn.modules.loss" if lib == "torch" else "minitensor.nn.modules.loss")
    facts = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for enabled in (True, False):
            with amp.autocast(enabled=enabled):
                facts.append(float((t.ones(2, 2) @ t.ones(2, 2)).sum()))
            scaler = amp.GradScaler(enabled=enabled)
            facts += [scaler.is_enabled(), float(scaler.scale(t.tensor(3.0)))]
        facts.append(amp.amp_definitely_not_available())

        class Custom(loss_mod._Loss):
            def forward(self, a, b):
                d = (a - b).abs()
                return d.sum() if self.reduction == "sum" else d.mean() if self.reduction == "mean" else d

        for kwargs in ({}, {"reduction": "sum"}, {"size_average": False}, {"reduce": False}):
            c = Custom(**kwargs)
            facts += [c.reduction, c(t.tensor([1.0, 4.0]), t.zeros(2)).tolist()]
        weighted = loss_mod._WeightedLoss(weight=t.ones(3))
        facts += [list(weighted.state_dict()), loss_mod._WeightedLoss().weight is None]
        facts += [issubclass(t.nn.CrossEntropyLoss, loss_mod._WeightedLoss),
                  issubclass(t.nn.NLLLoss, loss_mod._WeightedLoss),
                  issubclass(t.nn.MSELoss, loss_mod._Loss), issubclass(t.nn.L1Loss, loss_mod._Loss),
                  list(t.nn.CrossEntropyLoss(weight=t.ones(2)).state_dict())]
    return facts, sorted({str(w.message) for w in caught})


def test_cuda_amp_and_the_loss_bases_behave_and_warn_as_pytorch():
    assert _amp_and_loss_facts("minitensor") == _amp_and_loss_facts("torch")


@pytest.mark.parametrize("kwargs, error", [
    ({"dtype": "int64", "requires_grad": True}, ValueError),
    ({"dtype": "float32", "low": 3, "high": 2}, ValueError),
    ({"dtype": "float32", "low": float("nan")}, ValueError),
    ({"dtype": "int64", "low": -3, "high": 3, "exclude_zero": True}, None),
    ({"dtype": "float64", "low": 0.5, "high": 0.75, "noncontiguous": True}, None),
    ({"dtype": "bool"}, None),
])
def test_make_tensor_follows_pytorchs_rules(kwargs, error):
    for t in (torch, mt):
        kw = dict(kwargs, dtype=getattr(t, kwargs["dtype"]))
        if error is not None:
            with pytest.raises(error):
                t.testing.make_tensor(2, 3, device="cpu", **kw) if t is torch else _mt_testing().make_tensor(
                    2, 3, device="cpu", **kw)
            continue
        maker = torch.testing.make_tensor if t is torch else _mt_testing().make_tensor
        x = maker((2, 3), device="cpu", **kw)
        assert tuple(x.shape) == (2, 3) and str(x.dtype).split(".")[-1] == kwargs["dtype"]
        a = x.numpy()
        assert x.is_contiguous() == (not kwargs.get("noncontiguous", False))
        if "low" in kwargs:
            assert (a >= kwargs["low"]).all() and (a < kwargs["high"]).all()
        if kwargs.get("exclude_zero"):
            assert (a != 0).all()


def _mt_testing():
    return importlib.import_module("minitensor.testing")


def test_assert_allclose_and_assert_close_keywords_as_pytorch():
    for lib in ("torch", "minitensor"):
        testing = importlib.import_module(f"{lib}.testing")
        t = LIBS[lib]
        with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated since 1.12"):
            testing.assert_allclose(t.tensor([1.0, float("nan")]), [1.00005, float("nan")])
        with pytest.warns(FutureWarning), pytest.raises(AssertionError):
            testing.assert_allclose(t.tensor([1.0]), [1.01])
        testing.assert_close(t.ones(2), t.ones(2), allow_subclasses=True, check_device=True, check_layout=True)
        with pytest.raises(AssertionError):
            testing.assert_close(t.ones(2, 2).t(), t.ones(2, 2), check_stride=True)
