"""saved_tensors_hooks, save_on_cpu and disable_saved_tensors_hooks (torch.autograd.graph), against PyTorch:
values and gradients under identity, scaling, save_on_cpu and save-to-disk hooks, create_graph and retain_graph
through unpacked tensors, and PyTorch's errors. Pack/unpack counts per op: test_torch_saved_attributes.py."""
import os
import uuid

import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import grad_mode

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
Y = np.array([[1.0, 2.0, -0.5], [0.3, -1.2, 0.8]])
W = np.random.default_rng(1).standard_normal((2, 3))


def _model(lib, x, y):
    return ((lib.tanh(x * y) * lib.exp(x) + lib.sin(y) @ lib.tensor(W.T @ W)).sum(-1) ** 2).sum()


def _hooks(lib, kind, tmp):
    g = lib.autograd.graph
    if kind == "identity":
        return g.saved_tensors_hooks(lambda t: t, lambda t: t)
    if kind == "scale":
        return g.saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4)
    if kind == "cpu":
        return g.save_on_cpu(pin_memory=True)

    def pack(t):
        name = os.path.join(tmp, str(uuid.uuid4()))
        lib.save(t, name)
        return name
    return g.saved_tensors_hooks(pack, lambda name: lib.load(name))


def _grads(lib, kind, tmp, create_graph=False):
    x = lib.tensor(X, requires_grad=True)
    y = lib.tensor(Y, requires_grad=True)
    with _hooks(lib, kind, tmp):
        loss = _model(lib, x, y)
    gx, gy = lib.autograd.grad(loss, [x, y], create_graph=create_graph)
    if create_graph:
        gx, gy = lib.autograd.grad((gx * lib.tensor(W)).sum() + (gy * lib.tensor(Y)).sum(), [x, y])
    return loss.item(), gx.detach().numpy(), gy.detach().numpy()


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("kind", ["identity", "scale", "cpu", "disk"])
def test_gradients_through_hooks_as_pytorchs(kind, create_graph, tmp_path):
    plain = _grads(mt, "identity", str(tmp_path), create_graph)
    ours = _grads(mt, kind, str(tmp_path), create_graph)
    np.testing.assert_allclose(ours[1], plain[1], rtol=1e-12)
    torch = pytest.importorskip("torch")
    theirs = _grads(torch, kind, str(tmp_path), create_graph)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-10)


def test_the_node_keeps_only_what_pack_returned():
    x = mt.tensor(X, requires_grad=True)
    with mt.autograd.graph.save_on_cpu():
        y = x * x
    kept = [a for a in y.grad_fn.inputs]
    assert all(a is not x and a._array.strides == (0, 0) for a in kept)  # stand-ins that hold no memory


def _counts(lib, retain):
    log = []
    a = lib.tensor(X, requires_grad=True)
    b = lib.tensor(Y, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                                  lambda t: log.append("unpack") or t):
        y = a * b
    if retain:
        (y * lib.tensor(W)).sum().backward(retain_graph=True)
    (y * lib.tensor(W)).sum().backward()
    return log, a.grad.numpy()


@pytest.mark.parametrize("retain", [False, True])
def test_pack_and_unpack_counts_against_pytorchs(retain):
    """a * b: PyTorch's node packs b and a (what its formula reads), so does minitensor's."""
    ours = _counts(mt, retain)
    assert ours[0] == ["pack"] * 2 + ["unpack"] * (4 if retain else 2)
    torch = pytest.importorskip("torch")
    theirs = _counts(torch, retain)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def _behaviour(lib):
    g = lib.autograd.graph
    out = []

    def attempt(fn):
        try:
            out.append(fn())
        except Exception as e:  # noqa: BLE001  (compared with PyTorch's type and words)
            out.append((type(e).__name__, str(e)[:60]))
    x = lib.tensor(X[0], requires_grad=True)

    def nested():
        log = []
        with g.saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t):
            with g.saved_tensors_hooks(lambda t: log.append("inner") or t, lambda t: t):
                x.exp()
            x.sin()
        return sorted(set(log))  # (how many: minitensor packs more, see the module's docstring)
    attempt(nested)

    def disabled():
        with g.disable_saved_tensors_hooks("no hooks here"):
            with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    attempt(disabled)

    def disabled_inside():
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            with g.disable_saved_tensors_hooks("not in here"):
                x * x
    attempt(disabled_inside)

    def in_place_pack():
        a = x * 1
        with g.saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
            a * a
    attempt(in_place_pack)

    def raising(where):
        def bad(t):
            raise ValueError(f"{where} failed")
        pack, unpack = (bad, lambda t: t) if where == "pack" else (lambda t: t, bad)
        with g.saved_tensors_hooks(pack, unpack):
            y = x * x
        y.sum().backward()
    attempt(lambda: raising("pack"))
    attempt(lambda: raising("unpack"))

    def not_a_tensor():
        with g.saved_tensors_hooks(lambda t: t, lambda t: 5):
            y = x * x
        y.sum().backward()
    attempt(not_a_tensor)

    def freed():
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x * x
        y.sum().backward()
        y.sum().backward()
    attempt(lambda: freed() and None)
    out[-1] = out[-1][0]  # (the words differ: minitensor names the node)

    def modified_after_packing():
        a = x * 1
        with g.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = a * a
        with lib.no_grad():
            a.add_(1)  # not seen: the node kept a copy, as PyTorch's
        return lib.autograd.grad(y.sum(), x)[0].tolist()
    attempt(modified_after_packing)
    return out


def test_nesting_disabling_and_errors_as_pytorchs():
    ours = _behaviour(mt)
    assert ours[0] == ["inner", "outer"] and ours[1] == ("RuntimeError", "no hooks here")
    torch = pytest.importorskip("torch")
    assert ours == _behaviour(torch)


def test_the_speed_layers_twin_is_not_used_while_hooks_hold_the_values():
    x = mt.tensor(X, requires_grad=True)
    with mt.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 0 + 1):  # unpack changes the values
        y = x * mt.tensor(Y)
    assert y.grad_fn.fast_backward is None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(X))  # the op's backward read what unpack gave


def test_the_switch_is_restored():
    with mt.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass
    assert grad_mode.modes.saved_hooks is None


def test_a_compiled_model_runs_eagerly_under_hooks_and_a_replay_refuses_them():
    """A replayed node keeps its own tensors, not what pack returned: compile's callable runs the model
    eagerly inside the hooks (pack sees every call), and Replay refuses to run there."""
    from minitensor.fast.replay import Replay
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.Tanh(), mt.nn.Linear(4, 1)).double()
    compiled = mt.compile(model)
    x = mt.tensor(X)
    for _ in range(3):  # recorded, checked, replayed
        compiled(x).sum().backward()
    packed = []
    with mt.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        inside = compiled(x)
    assert packed and inside.grad_fn is not None
    np.testing.assert_array_equal(inside.detach().numpy(), model(x).detach().numpy())
    step = Replay(lambda a: model(mt.from_numpy(a)).sum())
    with mt.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="saved_tensors_hooks"):
            step(X)
