"""nn.Module's hook API and methods against PyTorch: the same script run on both libraries gives the
same log (hook call order, the shapes/None pattern of grad_input and grad_output, the gradients after a
hook replaced them), the same reprs, the same errors. Tiny shapes, one table of scenarios."""
import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

W = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]])  # a Linear(3, 2)'s weight in both libraries
X = np.array([[1.0, -2.0, 0.5]])
UP = np.array([[0.3, -1.7]])  # the random-looking upstream weight (never only .sum())


def shapes(gs):
    return [None if g is None else tuple(g.shape) for g in gs]


def linear(lib):
    lin = lib.nn.Linear(3, 2)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(W, dtype=lib.float32))
        lin.bias.zero_()
    return lin


def arr(t):
    return None if t is None else np.asarray(t.detach().numpy(), dtype=np.float64)


def backward_order(lib, log):
    lin = linear(lib)
    for i in range(2):
        lin.register_full_backward_hook(lambda m, gi, go, i=i: log.append((f"full{i}", shapes(gi), shapes(go))))
        lin.register_full_backward_pre_hook(lambda m, go, i=i: log.append((f"pre{i}", shapes(go))))
    lin.register_full_backward_hook(lambda m, gi, go: log.append("full-first"), prepend=True)
    lin.register_full_backward_pre_hook(lambda m, go: log.append("pre-first"), prepend=True)
    lin.register_forward_pre_hook(lambda m, a: log.append(("fwd-pre", shapes(a))))
    lin.register_forward_hook(lambda m, a, o: log.append(("fwd", tuple(o.shape))))
    x = lib.tensor(X, dtype=lib.float32, requires_grad=True)
    (lin(x) * lib.tensor(UP, dtype=lib.float32)).sum().backward()
    log.append(arr(x.grad))


def replacements(lib, log):
    lin = linear(lib)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
    x = lib.tensor(X, dtype=lib.float32, requires_grad=True)
    (lin(x) * lib.tensor(UP, dtype=lib.float32)).sum().backward()
    log += [arr(x.grad), arr(lin.weight.grad)]


def several_outputs(lib, log):
    class Two(lib.nn.Module):
        def forward(self, x, scale, y):
            return x * scale, (x + y).sum(), 3

    m = Two()
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", shapes(gi), shapes(go))))
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", shapes(go))))
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    a, _, three = m(x, 2.0, y)
    (a * lib.tensor(X, dtype=lib.float64)).sum().backward()
    log += [three, arr(x.grad), arr(y.grad)]


def no_input_grad(lib, log):
    lin = linear(lib)
    lin.register_full_backward_hook(lambda m, gi, go: log.append((gi, shapes(go))))
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        (lin(lib.tensor(X, dtype=lib.float32)) * lib.tensor(UP, dtype=lib.float32)).sum().backward()
    log.append(arr(lin.weight.grad))


def bad_hook_results(lib, log):
    for register, hook in [("register_full_backward_hook", lambda m, gi, go: (gi[0], gi[0])),
                           ("register_full_backward_pre_hook", lambda m, go: (go[0], go[0]))]:
        lin = linear(lib)
        getattr(lin, register)(hook)
        with pytest.raises(RuntimeError) as err:
            lin(lib.tensor(X, dtype=lib.float32, requires_grad=True)).sum().backward()
        log.append(str(err.value).split(",")[0])


def forward_hook_options(lib, log):
    lin = linear(lib)
    lin.register_forward_pre_hook(lambda m, a, kw: log.append(("pre-kw", sorted(kw))), with_kwargs=True)
    lin.register_forward_pre_hook(lambda m, a: log.append("pre-first"), prepend=True)
    lin.register_forward_hook(lambda m, a, kw, out: log.append(("fwd-kw", sorted(kw))), with_kwargs=True)
    h = lin.register_forward_hook(lambda m, a, out: out * 0)
    log.append(arr(lin(lib.tensor(X, dtype=lib.float32))))
    h.remove()
    log.append(arr(lin(lib.tensor(X, dtype=lib.float32))))

    class Fails(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    f = Fails()
    f.register_forward_hook(lambda m, a, out: log.append(("always", out)), always_call=True)
    f.register_forward_hook(lambda m, a, out: log.append("not called"))
    with pytest.raises(ValueError):
        f(1)
    g = linear(lib)
    g.register_forward_pre_hook(lambda m, a, kw: 3, with_kwargs=True)
    with pytest.raises(RuntimeError) as err:
        g(lib.tensor(X, dtype=lib.float32))
    log.append(str(err.value).split(",")[0])


def global_hooks(lib, log):
    mm = lib.nn.modules.module if lib is torch else lib.nn.module  # (the runner maps one to the other)
    handles = [mm.register_module_forward_pre_hook(lambda m, a: log.append(("g-pre", type(m).__name__))),
               mm.register_module_forward_hook(lambda m, a, o: log.append(("g-fwd", type(m).__name__))),
               mm.register_module_full_backward_hook(lambda m, gi, go: log.append(("g-full", type(m).__name__)))]
    try:
        net = lib.nn.Sequential(linear(lib), lib.nn.Tanh())
        net[0].register_forward_hook(lambda m, a, o: log.append("own"))
        x = lib.tensor(X, dtype=lib.float32, requires_grad=True)
        (net(x) * lib.tensor(UP, dtype=lib.float32)).sum().backward()
    finally:
        for h in handles:
            h.remove()
    net(x)  # removed: nothing logged
    log.append(arr(x.grad))


def lookups(lib, log):
    net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    log.append(tuple(net.get_parameter("0.weight").shape))
    log.append(tuple(net.get_buffer("1.running_mean").shape))
    log.append(type(net.get_submodule("1")).__name__)
    for call in (lambda: net.get_submodule("0.weight"), lambda: net.get_submodule("2"),
                 lambda: net.get_parameter("1.running_mean"), lambda: net.get_buffer("0.weight"),
                 lambda: net.get_parameter("0.nope"), lambda: net.set_submodule("", lib.nn.ReLU()),
                 lambda: net.set_submodule("0", 3), lambda: net.set_submodule("0.weight", lib.nn.ReLU()),
                 lambda: net.set_submodule("0.new", lib.nn.ReLU(), strict=True)):
        with pytest.raises((AttributeError, ValueError)) as err:
            call()
        log.append((type(err.value).__name__, str(err.value).replace("torch.", "").replace("minitensor.", "")))
    net.set_submodule("0", lib.nn.Tanh())
    log.append(repr(net[0]))


def state_dict_hooks(lib, log):
    lin = linear(lib)
    lin.register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("sd-pre", prefix, keep_vars)))
    lin.register_state_dict_post_hook(lambda m, sd, prefix, meta: log.append(("sd-post", list(sd), prefix)))
    net = lib.nn.Sequential(lin)
    log.append(list(net.state_dict(prefix="model.")))

    def rename(m, sd, prefix, meta, strict, missing, unexpected, errors):
        if prefix + "w" in sd:
            sd[prefix + "weight"] = sd.pop(prefix + "w")

    lin.register_load_state_dict_pre_hook(rename)
    lin.register_load_state_dict_post_hook(lambda m, keys: log.append(("post", list(keys.missing_keys))))
    keys = net.load_state_dict({"0.w": lib.zeros(2, 3, dtype=lib.int64), "0.bias": lib.ones(2)}, strict=False)
    log += [list(keys.missing_keys), list(keys.unexpected_keys), arr(lin.weight)[0, 0], str(lin.weight.dtype)[-7:]]


def container_reprs(lib, log):
    P = lib.nn.Parameter
    log.append(repr(lib.nn.ParameterList([P(lib.ones(3, 4)), P(lib.ones(2, dtype=lib.float64))])))
    log.append(repr(lib.nn.ParameterList([P(lib.ones(3))])))
    log.append(repr(lib.nn.ParameterList()))
    log.append(repr(lib.nn.ParameterDict({"a": P(lib.ones(3, 4)), "b": lib.ones(1)})))


def conversions(lib, log):
    lin = linear(lib)
    w = lin.weight
    assert lin.half() is lin and lin.weight is w
    log.append(str(lin.weight.dtype).split(".")[-1])
    lin.type(lib.float64)
    log.append((str(lin.weight.dtype).split(".")[-1], lin.weight is w))
    lin.to_empty(device="cpu")
    log.append((tuple(lin.weight.shape), lin.weight is w))
    log.append(lin.share_memory() is lin)
    if lib is mt:  # (PyTorch's compile takes seconds to set up: only ours is run)
        assert lin.compile() is None
    log.append(repr(lin.requires_grad_(False).weight.requires_grad))


SCENARIOS = [backward_order, replacements, several_outputs, no_input_grad, bad_hook_results, forward_hook_options,
             global_hooks, lookups, state_dict_hooks, container_reprs, conversions]


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.allclose(a, b, rtol=1e-5, atol=1e-6)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str):
        return a.replace("minitensor.", "torch.") == b
    return a == b


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_same_log_as_torch(scenario):
    ours, theirs = [], []
    scenario(mt, ours)
    scenario(torch, theirs)
    assert len(ours) == len(theirs), (ours, theirs)
    for a, b in zip(ours, theirs):
        assert _same(a, b), (a, b)


def test_module_has_torchs_public_methods():
    missing = sorted(n for n in dir(torch.nn.Module) if not n.startswith("_") and not hasattr(mt.nn.Module, n))
    assert missing == []


def test_load_state_dict_errors_are_pytorchs_text():  # (h-tut2: the warmstarting recipe prints them)
    messages = []
    for lib in (mt, torch):
        net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Linear(3, 1))
        bad = {"0.weight": lib.zeros(4, 5), "0.bias": lib.zeros(3), "extra": lib.zeros(1), "other": lib.zeros(1)}
        for strict in (True, False):
            with pytest.raises(RuntimeError) as err:
                net.load_state_dict(bad, strict=strict)
            messages.append(str(err.value).replace("minitensor.Size", "torch.Size"))
        result = net.load_state_dict({k: v for k, v in net.state_dict().items() if k != "1.bias"}, strict=False)
        messages.append(repr(result))
    assert messages[:3] == messages[3:]
    assert messages[0].endswith('"extra", "other". \n\tsize mismatch for 0.weight: copying a param with shape '
                                "torch.Size([4, 5]) from checkpoint, the shape in current model is torch.Size([3, 2]).")
