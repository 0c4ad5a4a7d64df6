"""Every optimizer against PyTorch's over 100 steps: parameters, state dict keys and values, options."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitensor as mt  # noqa: E402

pytestmark = pytest.mark.slow

RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((16, 3)), RNG.standard_normal((16, 2))
W0, B0 = RNG.standard_normal((3, 2)) * 0.5, RNG.standard_normal(2) * 0.1
GRADS = [[RNG.standard_normal((3, 2)), RNG.standard_normal(2)] for _ in range(100)]

CASES = [
    ("RMSprop", {}), ("RMSprop", dict(momentum=0.9, centered=True, weight_decay=0.1, lr=0.003)),
    ("RMSprop", dict(alpha=0.9, maximize=True, foreach=False)),
    ("Adagrad", {}), ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.05)),
    ("Adadelta", {}), ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", {}), ("Adamax", dict(lr=0.004, weight_decay=0.1, betas=(0.8, 0.9))),
    ("NAdam", {}), ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01, maximize=True)),
    ("RAdam", {}), ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, betas=(0.8, 0.9))),
    ("RAdam", dict(weight_decay=0.1)),
    ("ASGD", {}), ("ASGD", dict(lr=0.05, lambd=0.01, t0=10, weight_decay=0.01, alpha=0.5)),
    ("Rprop", {}), ("Rprop", dict(lr=0.001, etas=(0.3, 1.5), step_sizes=(1e-4, 0.1), maximize=True)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01, foreach=False)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.2, maximize=True, fused=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, foreach=False, capturable=False)),
    ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True, fused=None)),
]
IDS = [f"{n}-{kw}" for n, kw in CASES]


def run(lib, name, kw, dtype, fixed_grads):
    """100 steps from the same start: on a least-squares problem each library differentiates itself, or
    (fixed_grads) on a set sequence of gradients."""
    def to(a):
        return lib.tensor(a, dtype=dtype)

    w, b = lib.nn.Parameter(to(W0)), lib.nn.Parameter(to(B0))
    opt = getattr(lib.optim, name)([{"params": [w]}, {"params": [b], "lr": kw.get("lr", 0.01) / 2}], **kw)
    x, y = to(X), to(Y)
    for step in range(100):
        opt.zero_grad()
        if fixed_grads:
            w.grad, b.grad = to(GRADS[step][0]), to(GRADS[step][1])
        else:
            (((x @ w + b) - y) ** 2).mean().backward()
        opt.step()
    return [w.detach().numpy().copy(), b.detach().numpy().copy()], opt


def value(v):
    if isinstance(v, (mt.Tensor, torch.Tensor)):
        return v.detach().numpy() if isinstance(v, torch.Tensor) else v.numpy()
    return v


@pytest.mark.parametrize("name, kw", CASES, ids=IDS)
@pytest.mark.parametrize("fixed_grads", [False, True])
def test_100_steps_equal_pytorchs(name, kw, fixed_grads):
    ours, opt_a = run(mt, name, kw, mt.float64, fixed_grads)
    theirs, opt_b = run(torch, name, kw, torch.float64, fixed_grads)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    sa, sb = opt_a.state_dict(), opt_b.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert sa["state"].keys() == sb["state"].keys()
    for i in sa["state"]:
        assert sa["state"][i].keys() == sb["state"][i].keys()
        for k in sa["state"][i]:
            np.testing.assert_allclose(value(sa["state"][i][k]), value(sb["state"][i][k]), rtol=1e-9, atol=1e-12,
                                       err_msg=k)


@pytest.mark.parametrize("name, kw", CASES[::3], ids=IDS[::3])
def test_float32_stays_float32_and_near_pytorchs(name, kw):
    ours, _ = run(mt, name, kw, mt.float32, True)
    theirs, _ = run(torch, name, kw, torch.float32, True)
    for a, b in zip(ours, theirs):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted({n for n, _ in CASES} - {"SGD"}))
def test_default_options_equal_pytorchs(name):
    a = getattr(mt.optim, name)([mt.nn.Parameter(mt.ones(2))])
    b = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))])
    assert a.state_dict() == {"state": {}, "param_groups": b.state_dict()["param_groups"]} or name == "Adagrad"
    assert a.param_groups[0].keys() == b.param_groups[0].keys()
    assert {k: v for k, v in a.defaults.items()} == b.defaults


@pytest.mark.parametrize("name, bad", [
    ("RMSprop", dict(alpha=-1)), ("Adagrad", dict(lr_decay=-1)), ("Adadelta", dict(rho=2)),
    ("Adamax", dict(betas=(1.0, 0.9))), ("NAdam", dict(momentum_decay=-1)), ("RAdam", dict(eps=-1)),
    ("Rprop", dict(etas=(1.5, 1.2))), ("ASGD", dict(lr=-1)), ("LBFGS", dict(lr=-1)),
])
def test_invalid_options_raise_like_pytorch(name, bad):
    with pytest.raises(ValueError):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], **bad)
    with pytest.raises(ValueError):
        getattr(mt.optim, name)([mt.nn.Parameter(mt.ones(2))], **bad)


def rosenbrock(lib, kw, steps=4):
    x = lib.nn.Parameter(lib.tensor([-1.5, 2.0, 0.5, -0.3], dtype=lib.float64))
    opt = lib.optim.LBFGS([x], **kw)

    def closure():
        opt.zero_grad()
        loss = (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return x.detach().numpy().copy(), losses, opt.state_dict()


def quadratic(lib, kw, steps=3):
    a = lib.tensor(np.diag([1.0, 3.0, 10.0]) + 0.1, dtype=lib.float64)
    x = lib.nn.Parameter(lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64))
    opt = lib.optim.LBFGS([x], **kw)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x @ (a @ x)) - x.sum()
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return x.detach().numpy().copy(), losses, opt.state_dict()


@pytest.mark.parametrize("problem", [rosenbrock, quadratic])
@pytest.mark.parametrize("kw", [{}, dict(line_search_fn="strong_wolfe"), dict(history_size=3, max_iter=7, lr=0.5),
                                dict(line_search_fn="strong_wolfe", history_size=2, max_iter=10, max_eval=12)])
def test_lbfgs_with_its_closure_equals_pytorchs(problem, kw):
    xa, la, sa = problem(mt, kw)
    xb, lb, sb = problem(torch, kw)
    np.testing.assert_allclose(xa, xb, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(la, lb, rtol=1e-9, atol=1e-12)
    assert sa["param_groups"] == sb["param_groups"]
    a, b = sa["state"][0], sb["state"][0]
    assert a.keys() == b.keys()
    assert (a["func_evals"], a["n_iter"]) == (b["func_evals"], b["n_iter"])
    assert len(a["old_dirs"]) == len(b["old_dirs"])
    np.testing.assert_allclose(value(a["d"]), value(b["d"]), rtol=1e-6, atol=1e-9)
