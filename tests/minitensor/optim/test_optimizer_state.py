"""Optimizer state dicts: PyTorch's layout, exact resumption, and validation that changes nothing."""
import copy

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.optim import SGD, Adam, AdamW


def model():
    mt.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


X = mt.tensor(np.random.default_rng(0).standard_normal((8, 3)), dtype=mt.float32)
Y = mt.tensor(np.random.default_rng(1).standard_normal((8, 2)), dtype=mt.float32)


def train(net, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        ((net(X) - Y) ** 2).mean().backward()
        opt.step()


def make(cls, net, **kw):
    groups = [{"params": net[0].parameters()}, {"params": net[2].parameters(), "lr": 0.02}]
    return cls(groups, lr=0.05, **kw)


def test_state_dict_layout_matches_pytorch():
    net = model()
    opt = make(Adam, net, amsgrad=True)
    train(net, opt, 2)
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3]]
    assert sd["param_groups"][1]["lr"] == 0.02 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert sorted(sd["state"]) == [0, 1, 2, 3]
    assert set(sd["state"][2]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert sd["state"][2]["exp_avg"].shape == (2, 4) and sd["state"][2]["step"] == 2


def test_state_dict_is_a_snapshot():
    net = model()
    opt = make(SGD, net, momentum=0.9)
    train(net, opt, 1)
    sd = opt.state_dict()
    buf = sd["state"][0]["momentum_buffer"].numpy(force=True).copy()
    train(net, opt, 1)
    np.testing.assert_array_equal(sd["state"][0]["momentum_buffer"].numpy(force=True), buf)


@pytest.mark.parametrize("cls, kw", [(SGD, dict(momentum=0.9, nesterov=True)), (Adam, dict(amsgrad=True)), (AdamW, {})])
def test_resuming_from_a_state_dict_continues_exactly(cls, kw):
    a = model()
    opt_a = make(cls, a, **kw)
    train(a, opt_a, 3)
    b = copy.deepcopy(a)
    opt_b = make(cls, b, **kw)
    opt_b.param_groups[0]["lr"] = 123.0  # overwritten by the load
    opt_b.load_state_dict(opt_a.state_dict())
    assert opt_b.param_groups[0]["lr"] == 0.05
    train(a, opt_a, 2)
    train(b, opt_b, 2)
    for pa, pb in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(pa.numpy(force=True), pb.numpy(force=True))


def snapshot(opt):
    groups = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    state = {id(p): {k: (v.numpy(force=True).copy() if isinstance(v, mt.Tensor) else v) for k, v in s.items()}
             for p, s in opt.state.items()}
    return groups, state


def assert_same(opt, before):
    groups, state = snapshot(opt)
    assert groups == before[0]
    assert state.keys() == before[1].keys()
    for k in state:
        assert state[k].keys() == before[1][k].keys()
        for name in state[k]:
            np.testing.assert_array_equal(state[k][name], before[1][k][name])


def trained_adam():
    net = model()
    opt = make(Adam, net)
    train(net, opt, 2)
    return net, opt


def test_wrong_group_count_is_rejected():
    net, opt = trained_adam()
    sd = opt.state_dict()
    sd["param_groups"] = sd["param_groups"][:1]
    before = snapshot(opt)
    with pytest.raises(ValueError, match="1 parameter group"):
        opt.load_state_dict(sd)
    assert_same(opt, before)


def test_every_problem_is_named_and_nothing_changes():
    net, opt = trained_adam()
    sd = opt.state_dict()
    sd["param_groups"][1]["params"] = [2]  # one parameter short
    sd["param_groups"][0]["lr"] = -1.0
    sd["state"][0]["exp_avg"] = mt.zeros(9, 9)
    del sd["state"][1]["exp_avg_sq"]
    sd["state"][1]["bogus"] = mt.zeros(1)
    sd["state"][7] = {}
    before = snapshot(opt)
    with pytest.raises(ValueError) as err:
        opt.load_state_dict(sd)
    msg = str(err.value)
    for needle in ["param_groups[1] has 1 parameter(s)", "learning rate", "state[0]['exp_avg']", "(9, 9)",
                   "missing ['exp_avg_sq']", "unexpected ['bogus']", "parameter id 7", "nothing was changed"]:
        assert needle in msg, needle
    assert_same(opt, before)


def test_bad_step_values_are_rejected():
    net, opt = trained_adam()
    sd = opt.state_dict()
    sd["state"][0]["step"] = -3
    with pytest.raises(ValueError, match="step count"):
        opt.load_state_dict(sd)
    sd["state"][0]["step"] = mt.tensor(2.0)  # PyTorch keeps the step as a 0-d float tensor
    opt.load_state_dict(sd)
    assert opt.state[net[0].weight]["step"] == 2


def test_state_is_cast_to_the_parameter_dtype():
    net, opt = trained_adam()
    sd = opt.state_dict()
    sd["state"][0]["exp_avg"] = mt.tensor(sd["state"][0]["exp_avg"].numpy(force=True), dtype=mt.float64)
    opt.load_state_dict(sd)
    assert opt.state[net[0].weight]["exp_avg"].dtype == mt.float32


def test_not_a_state_dict():
    net, opt = trained_adam()
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        opt.load_state_dict({"state": {}})
