"""Adafactor, Muon and swap_in_optimizer_params_and_state against PyTorch's: 100 steps, state dicts, errors."""
import contextlib
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import minitensor as mt  # noqa: E402

pytestmark = pytest.mark.slow

RNG = np.random.default_rng(1)
# a tall and a wide matrix (Muon transposes the tall one), a vector and a batch of matrices (Adafactor)
SHAPES = {"Adafactor": [(3, 2), (2,), (2, 2, 3), ()], "Muon": [(3, 2), (2, 4)]}
STARTS = {n: [RNG.standard_normal(s) * 0.5 for s in shapes] for n, shapes in SHAPES.items()}
GRADS = {n: [[RNG.standard_normal(s) for s in shapes] for _ in range(100)] for n, shapes in SHAPES.items()}

CASES = [
    ("Adafactor", {}), ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-4, 1e-2), d=1.5, weight_decay=0.1)),
    ("Adafactor", dict(maximize=True, foreach=False, lr=0.005)),
    ("Muon", {}), ("Muon", dict(lr=0.02, nesterov=False, momentum=0.9, weight_decay=0.01)),
    ("Muon", dict(lr=0.01, adjust_lr_fn="match_rms_adamw", ns_steps=3, eps=1e-5)),
]
IDS = [f"{n}-{kw}" for n, kw in CASES]


@contextlib.contextmanager
def full_precision_newton_schulz():
    """PyTorch's Muon runs Newton-Schulz in bfloat16 (minitensor in the parameter's dtype): with the cast made
    a copy, PyTorch's own code runs at float64 and must then agree to float64 precision."""
    saved = torch.Tensor.bfloat16
    torch.Tensor.bfloat16 = lambda self, *a, **k: self.clone()
    try:
        yield
    finally:
        torch.Tensor.bfloat16 = saved


def run(lib, name, kw, dtype, steps=100):
    ps = [lib.nn.Parameter(lib.tensor(a, dtype=dtype)) for a in STARTS[name]]
    opt = getattr(lib.optim, name)([{"params": ps[:1]}, {"params": ps[1:], "lr": kw.get("lr", 0.01) / 2}], **kw)
    for step in range(steps):
        opt.zero_grad()
        for p, g in zip(ps, GRADS[name][step]):
            p.grad = lib.tensor(g * (1 + 0.01 * step), dtype=dtype)
        opt.step()
    return [p.detach().numpy().copy() for p in ps], opt


def value(v):
    return v.detach().numpy() if isinstance(v, (mt.Tensor, torch.Tensor)) else v


@pytest.mark.parametrize("name, kw", CASES, ids=IDS)
def test_100_steps_and_state_dict_equal_pytorchs(name, kw):
    ours, opt_a = run(mt, name, kw, mt.float64)
    with full_precision_newton_schulz():
        theirs, opt_b = run(torch, name, kw, torch.float64)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    sa, sb = opt_a.state_dict(), opt_b.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert sa["state"].keys() == sb["state"].keys()
    for i in sa["state"]:
        assert sa["state"][i].keys() == sb["state"][i].keys()
        for k in sa["state"][i]:
            a, b = value(sa["state"][i][k]), value(sb["state"][i][k])
            assert np.shape(a) == np.shape(b), k
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=k)
    # the state dict loads back into a fresh optimizer and the next step matches
    opt_c = getattr(mt.optim, name)([{"params": [mt.nn.Parameter(mt.tensor(a)) for a in ours[:1]]},
                                     {"params": [mt.nn.Parameter(mt.tensor(a)) for a in ours[1:]]}], **kw)
    opt_c.load_state_dict(sa)
    assert opt_c.state_dict()["param_groups"] == sa["param_groups"]


@pytest.mark.parametrize("name, kw", [CASES[1], CASES[3]], ids=[IDS[1], IDS[3]])
def test_float32_stays_float32_and_near_pytorchs(name, kw):
    ours, _ = run(mt, name, kw, mt.float32, steps=20)
    theirs, _ = run(torch, name, kw, torch.float32, steps=20)  # Muon: PyTorch's bfloat16 Newton-Schulz
    tol = 2e-3 if name == "Muon" else 1e-5
    for a, b in zip(ours, theirs):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_default_options_equal_pytorchs(name):
    a = getattr(mt.optim, name)([mt.nn.Parameter(mt.ones(2, 2))])
    b = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2, 2))])
    assert a.state_dict() == b.state_dict()
    assert a.defaults == b.defaults


@pytest.mark.parametrize("name, bad", [
    ("Adafactor", dict(lr=-1)), ("Adafactor", dict(beta2_decay=0.5)), ("Adafactor", dict(eps=(-1, 1e-3))),
    ("Adafactor", dict(eps=(None, -1))), ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1)),
    ("Muon", dict(lr=-1)), ("Muon", dict(momentum=-1)), ("Muon", dict(weight_decay=-1)),
    ("Muon", dict(adjust_lr_fn="nope")),
])
def test_invalid_options_raise_like_pytorch(name, bad):
    with pytest.raises(ValueError):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2, 2))], **bad)
    with pytest.raises(ValueError):
        getattr(mt.optim, name)([mt.nn.Parameter(mt.ones(2, 2))], **bad)


@pytest.mark.parametrize("shape", [(2,), (2, 2, 2), ()])
def test_muon_refuses_non_2d_parameters_as_pytorch(shape):
    with pytest.raises(ValueError, match="2D"):
        torch.optim.Muon([torch.nn.Parameter(torch.ones(shape))])
    with pytest.raises(ValueError, match="2D"):
        mt.optim.Muon([mt.nn.Parameter(mt.ones(shape))])


def test_adafactor_load_state_dict_checks_factor_shapes():
    opt = mt.optim.Adafactor([mt.nn.Parameter(mt.ones(3, 2))])
    opt.param_groups[0]["params"][0].grad = mt.ones(3, 2)
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["row_var"] = mt.zeros(3, 2)
    with pytest.raises(ValueError, match="row_var"):
        opt.load_state_dict(sd)


def swap_run(lib, tensor_step):
    """Two live parameters after one Adam step; then a step inside the swap on copies and a saved state."""
    def t(a):
        return lib.tensor(np.asarray(a, dtype=np.float64))

    live = [lib.nn.Parameter(t([1.0, 2.0])), lib.nn.Parameter(t([[0.5, -1.0]]))]
    opt = lib.optim.Adam([{"params": live[:1]}, {"params": live[1:], "lr": 0.5}], lr=0.1)
    for p in live:
        p.grad = t(np.ones(p.shape))
    opt.step()
    osd = copy.deepcopy(opt.state_dict()) if lib is torch else opt.state_dict()
    for entry in osd["state"].values():  # PyTorch's counts are tensors; minitensor's state dict has ints
        entry["step"] = t(float(entry["step"])) if tensor_step or lib is torch else int(entry["step"])
    osd["param_groups"][1]["lr"] = 0.01
    other = {"a": lib.nn.Parameter(t([3.0, 4.0])), "b": lib.nn.Parameter(t([[1.0, 1.0]]))}
    for p in other.values():
        p.grad = t(np.full(p.shape, 0.5))
    before_live = [value(p).copy() for p in live]
    before_state = {k: np.array(value(v)) for k, v in opt.state[live[0]].items()}
    with lib.optim.swap_in_optimizer_params_and_state(opt, other, osd):
        assert opt.param_groups[1]["lr"] == 0.01
        opt.step()
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is live[0]
    for p, b in zip(live, before_live):
        np.testing.assert_array_equal(value(p), b)
    for k, v in opt.state[live[0]].items():
        np.testing.assert_array_equal(value(v), before_state[k])
    return [value(p).copy() for p in other.values()], osd


@pytest.mark.parametrize("tensor_step", [False, True])
def test_swap_in_params_and_state_equals_pytorchs(tensor_step):
    pa, sa = swap_run(mt, tensor_step)
    pb, sb = swap_run(torch, tensor_step)
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for i in sb["state"]:
        assert sa["state"][i].keys() == sb["state"][i].keys()
        assert float(sa["state"][i]["step"]) == (2 if tensor_step else 1)  # an int count does not advance
        for k in set(sb["state"][i]) - {"step"}:
            np.testing.assert_allclose(value(sa["state"][i][k]), value(sb["state"][i][k]), rtol=1e-12, err_msg=k)


@pytest.mark.parametrize("lib", ["torch", "mt"])
def test_swap_in_refuses_what_pytorch_refuses(lib):
    lib = torch if lib == "torch" else mt
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    with pytest.raises(RuntimeError, match="initialized"), lib.optim.swap_in_optimizer_params_and_state(
            opt, {"p": p}, opt.state_dict()):
        pass
    p.grad = lib.ones(2)
    opt.step()
    good = opt.state_dict()
    bad = [
        {"state": good["state"], "param_groups": good["param_groups"] * 2},
        {"state": {**good["state"], 7: {}}, "param_groups": good["param_groups"]},
        {"state": good["state"], "param_groups": [{**good["param_groups"][0], "extra": 1}]},
        {"state": good["state"], "param_groups": [{**good["param_groups"][0], "params": [0, 1]}]},
        [],
    ]
    for sd in bad:
        with pytest.raises(RuntimeError), lib.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, sd):
            pass
    with pytest.raises(RuntimeError), lib.optim.swap_in_optimizer_params_and_state(opt, {}, good):
        pass
