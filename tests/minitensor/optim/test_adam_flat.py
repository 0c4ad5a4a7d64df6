"""Adam's one-pass update of a whole group (flat moments) equals its per-parameter loop, bit for bit."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.optim import Adam, AdamW


def _params(seed, dtype=mt.float32):
    rng = np.random.default_rng(seed)
    shapes = [(3, 4), (4,), (2, 2, 3), ()]
    return [mt.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True) for s in shapes]


def _run(opt_cls, kwargs, flat, monkeypatch, grads_missing=(), steps=4, seed=0, reload_at=None):
    if not flat:
        monkeypatch.setattr(Adam, "fast_update_group", None)  # the plain loop
    else:
        monkeypatch.undo()
    params = _params(seed)
    opt = opt_cls(params, **kwargs)
    rng = np.random.default_rng(seed + 1)
    for step in range(steps):
        for i, p in enumerate(params):
            g = rng.standard_normal(p.shape).astype(np.float32)
            p.grad = None if (step, i) in grads_missing else mt.tensor(g)
        opt.step()
        if reload_at == step:
            opt.load_state_dict(opt.state_dict())
    if flat:
        eligible = not kwargs.get("amsgrad") and (opt_cls is AdamW or not kwargs.get("weight_decay"))
        assert bool(getattr(opt, "_flat", None)) == eligible  # the path under test was the one taken
    return [p.numpy(force=True).copy() for p in params], opt.state_dict()


@pytest.mark.parametrize("opt_cls, kwargs", [
    (AdamW, dict(lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1)),
    (Adam, dict(lr=1e-2)),
    (Adam, dict(lr=1e-2, weight_decay=0.1)),            # L2 decay: the loop
    (Adam, dict(lr=1e-2, amsgrad=True)),                # the loop
])
@pytest.mark.parametrize("case", [dict(), dict(grads_missing={(1, 2)}), dict(reload_at=1)])
def test_flat_update_equals_the_loop(monkeypatch, opt_cls, kwargs, case):
    want, want_sd = _run(opt_cls, kwargs, False, monkeypatch, **case)
    got, got_sd = _run(opt_cls, kwargs, True, monkeypatch, **case)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert got_sd["state"].keys() == want_sd["state"].keys()
    for i in want_sd["state"]:
        for k, v in want_sd["state"][i].items():
            w = got_sd["state"][i][k]
            if isinstance(v, mt.Tensor):
                np.testing.assert_array_equal(w.numpy(force=True), v.numpy(force=True))
                assert w.shape == v.shape and w.dtype == v.dtype
            else:
                assert w == v


def test_flat_state_is_per_parameter_views_and_the_snapshot_is_a_copy():
    params = _params(3)
    opt = AdamW(params, lr=1e-2)
    for p in params:
        p.grad = mt.ones_like(p)
    opt.step()
    m0 = opt.state[params[0]]["exp_avg"]
    assert m0.shape == params[0].shape and m0.numpy(force=True).base is not None  # a view into the flat moments
    snapshot = opt.state_dict()["state"][0]["exp_avg"].numpy(force=True).copy()
    opt.step()
    np.testing.assert_array_equal(opt.state_dict()["state"][0]["exp_avg"].numpy(force=True).shape, snapshot.shape)
    # moved on; the snapshot did not
    assert not np.array_equal(opt.state[params[0]]["exp_avg"].numpy(force=True), snapshot)
