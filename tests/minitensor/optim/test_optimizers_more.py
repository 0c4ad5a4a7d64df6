"""The optimizers beyond SGD/Adam without PyTorch: state keys, exact resumption, LBFGS, option errors."""
import copy

import numpy as np
import pytest

import minitensor as mt
from minitensor import optim

A = np.random.default_rng(0).standard_normal((6, 3))
T = np.random.default_rng(1).standard_normal(6)

KEYS = {
    "RMSprop": ({"momentum": 0.9, "centered": True}, {"step", "square_avg", "momentum_buffer", "grad_avg"}),
    "Adagrad": ({}, {"step", "sum"}),
    "Adadelta": ({}, {"step", "square_avg", "acc_delta"}),
    "Adamax": ({}, {"step", "exp_avg", "exp_inf"}),
    "NAdam": ({}, {"step", "mu_product", "exp_avg", "exp_avg_sq"}),
    "RAdam": ({}, {"step", "exp_avg", "exp_avg_sq"}),
    "ASGD": ({}, {"step", "eta", "mu", "ax"}),
    "Rprop": ({}, {"step", "prev", "step_size"}),
}


def train(opt, w, steps):
    a, t = mt.tensor(A), mt.tensor(T)
    for _ in range(steps):
        opt.zero_grad()
        ((a @ w - t) ** 2).mean().backward()
        opt.step()


@pytest.mark.parametrize("name", sorted(KEYS))
def test_state_keys_and_exact_resumption(name):
    kw, keys = KEYS[name]
    w = mt.nn.Parameter(mt.zeros(3, dtype=mt.float64))
    opt = getattr(optim, name)([w], lr=0.01, **kw)
    train(opt, w, 5)
    sd = opt.state_dict()
    assert set(sd["state"][0]) == keys and sd["state"][0]["step"] == 5
    w2 = mt.nn.Parameter(w.detach().clone())
    opt2 = getattr(optim, name)([w2], lr=0.5, **kw)
    opt2.load_state_dict(copy.deepcopy(sd))
    assert opt2.param_groups[0]["lr"] == 0.01
    train(opt, w, 5)
    train(opt2, w2, 5)
    np.testing.assert_array_equal(w.detach().numpy(), w2.detach().numpy())
    assert w.detach().numpy().any()


def test_bad_state_is_rejected_and_changes_nothing():
    w = mt.nn.Parameter(mt.zeros(3, dtype=mt.float64))
    opt = optim.NAdam([w])
    train(opt, w, 1)
    sd = opt.state_dict()
    sd["state"][0]["mu_product"] = mt.zeros(2)
    before = opt.state_dict()
    with pytest.raises(ValueError, match="mu_product"):
        opt.load_state_dict(sd)
    assert float(opt.state_dict()["state"][0]["mu_product"]) == float(before["state"][0]["mu_product"])


@pytest.mark.parametrize("kw", [{}, {"line_search_fn": "strong_wolfe"}])
def test_lbfgs_solves_least_squares(kw):
    w = mt.nn.Parameter(mt.zeros(3, dtype=mt.float64))
    opt = optim.LBFGS([w], **kw)
    a, t = mt.tensor(A), mt.tensor(T)

    def closure():
        opt.zero_grad()
        loss = ((a @ w - t) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    # (it stops once the loss changes by less than tolerance_change, so a few digits short of exact)
    np.testing.assert_allclose(w.detach().numpy(), np.linalg.lstsq(A, T, rcond=None)[0], rtol=1e-4)
    assert opt.state_dict()["state"][0]["func_evals"] >= 2


def test_lbfgs_rules():
    w = mt.nn.Parameter(mt.zeros(3))
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [w]}, {"params": [mt.nn.Parameter(mt.zeros(1))]}])
    with pytest.raises(RuntimeError, match="closure"):
        optim.LBFGS([w]).step(None)


def test_adagrad_state_exists_from_construction_and_flags():
    w = mt.nn.Parameter(mt.zeros(2))
    opt = optim.Adagrad([w], initial_accumulator_value=0.5)
    assert opt.state[w]["step"] == 0 and opt.state[w]["sum"].tolist() == [0.5, 0.5]
    with pytest.raises(RuntimeError, match="fused"):
        optim.SGD([w], fused=True, foreach=True)
    with pytest.raises(NotImplementedError, match="differentiable"):
        optim.RMSprop([w], differentiable=True)
    assert optim.SGD([w], foreach=False).param_groups[0]["foreach"] is False
