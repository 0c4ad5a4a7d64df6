"""An optimizer's hooks, as PyTorch runs them: around each step (its own and every optimizer's), around
`state_dict` and `load_state_dict`, and on a user's own Optimizer subclass with its own `step`."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.optim import optimizer as mt_optimizer


def _setup(lib):
    p = lib.nn.Parameter(lib.tensor(np.array([1.0, -2.0, 3.0])))
    p.grad = lib.tensor(np.array([0.5, 0.25, -1.0]))
    return p, lib.optim.SGD([p], lr=0.1, momentum=0.9)


def _step_hooks_log(lib, module):
    p, opt = _setup(lib)
    log = []
    handles = [
        module.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("global pre", len(a), dict(k)))),
        module.register_optimizer_step_post_hook(lambda o, a, k: log.append(("global post", len(a), dict(k)))),
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", o is opt, len(a), dict(k)))),
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", o is opt, len(a), dict(k)))),
    ]
    try:
        opt.step()
        handles[2].remove()
        opt.step(closure=None)
    finally:
        for h in handles:
            h.remove()
    opt.step()  # no hook left
    return log, p.detach().numpy().tolist()


def test_step_hooks_run_in_pytorchs_order_with_the_steps_arguments():
    torch = pytest.importorskip("torch")
    import torch.optim.optimizer as torch_optimizer
    ours = _step_hooks_log(mt, mt_optimizer)
    assert ours[0][:4] == [("global pre", 1, {}), ("pre", True, 1, {}), ("post", True, 1, {}), ("global post", 1, {})]
    theirs = _step_hooks_log(torch, torch_optimizer)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-15)


def test_a_pre_hook_may_replace_the_arguments_and_must_return_a_pair():
    for lib in (mt, pytest.importorskip("torch")):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.5)
        calls = []

        def closure():
            calls.append("closure")
            return lib.tensor(0.0)
        handle = opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": closure}))
        p.grad = lib.ones(2)
        opt.step()
        assert calls == ["closure"], lib
        handle.remove()
        opt.register_step_pre_hook(lambda o, args, kwargs: "not a pair")
        with pytest.raises(RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\)"):
            opt.step()


def _state_dict_hooks_log(lib):
    p, opt = _setup(lib)
    opt.step()
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("sd pre"))
    opt.register_state_dict_pre_hook(lambda o: log.append("sd pre, prepended"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: log.append(("sd post", sorted(sd))))

    def add_note(o, sd):
        sd = dict(sd)
        sd["note"] = "kept"
        return sd
    opt.register_state_dict_post_hook(add_note)
    saved = opt.state_dict()
    log.append(("saved", sorted(saved)))

    def drop_note(o, sd):
        log.append(("load pre", sorted(sd)))
        return {k: v for k, v in sd.items() if k != "note"}
    opt.register_load_state_dict_pre_hook(drop_note)
    opt.register_load_state_dict_post_hook(lambda o: log.append("load post"))
    opt.load_state_dict(saved)
    return log


def test_state_dict_hooks_run_as_pytorchs():
    ours = _state_dict_hooks_log(mt)
    assert ours[0] == "sd pre, prepended" and ours[-1] == "load post"
    torch = pytest.importorskip("torch")
    assert ours == _state_dict_hooks_log(torch)


def test_a_users_own_optimizer_gets_the_hooks_and_the_profilers_range():
    def run(lib):
        class Halve(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {})

            def step(self, closure=None):
                with lib.no_grad():
                    for group in self.param_groups:
                        for q in group["params"]:
                            q.mul_(0.5)

        p = lib.nn.Parameter(lib.ones(2))
        opt = Halve([p])
        seen = []
        opt.register_step_post_hook(lambda o, a, k: seen.append(p.detach().numpy().tolist()))
        with lib.profiler.profile() as prof:
            opt.step()
        Halve([p])  # a second instance does not wrap the step twice
        opt.step()
        return seen, [e.name for e in prof.events() if e.name.startswith("Optimizer.")]

    ours = run(mt)
    assert ours == ([[0.5, 0.5], [0.25, 0.25]], ["Optimizer.step#Halve.step"])
    torch = pytest.importorskip("torch")
    assert ours == run(torch)


def test_a_subclass_of_a_built_in_optimizer_still_has_its_options_checked():
    class MyAdam(mt.optim.Adam):
        pass
    with pytest.raises(ValueError, match="Invalid learning rate"):
        MyAdam([mt.nn.Parameter(mt.ones(2))], lr=-1.0)
    torch = pytest.importorskip("torch")

    class TheirAdam(torch.optim.Adam):
        pass
    with pytest.raises(ValueError, match="Invalid learning rate"):
        TheirAdam([torch.nn.Parameter(torch.ones(2))], lr=-1.0)
