"""torch.utils.hooks against PyTorch: RemovableHandle on hook dicts, unserializable_hook, warn_if_has_hooks's
warnings for leaf and non-leaf tensors, and BackwardHook used by hand as Module.__call__ uses it (what the hooks
see and what they change, float64, random upstream weight). Skipped where PyTorch is not installed."""
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import minitensor as mt
from minitensor import run as runner
from minitensor.utils import hooks as mhooks

torch = pytest.importorskip("torch")
thooks = torch.utils.hooks

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("hooks", [mhooks, thooks], ids=["mt", "torch"])
def test_removable_handle(hooks):
    store, extra, extra2 = OrderedDict(), OrderedDict(), OrderedDict()
    h1 = hooks.RemovableHandle(store)
    h2 = hooks.RemovableHandle(store, extra_dict=[extra, extra2])
    assert h2.id > h1.id
    store[h1.id], store[h2.id] = "a", "b"
    extra[h2.id] = extra2[h2.id] = True
    h2.remove()
    assert list(store.values()) == ["a"] and not extra and not extra2
    h2.remove()  # a second remove is harmless
    with hooks.RemovableHandle(store, extra_dict=extra) as h3:
        store[h3.id] = extra[h3.id] = "c"
    assert list(store.values()) == ["a"] and not extra


def test_unserializable_hook_marks_and_returns_the_function():
    def f(grad):
        return grad

    def g(grad):
        return grad

    assert mhooks.unserializable_hook(f) is f and thooks.unserializable_hook(g) is g
    assert f.__torch_unserializable__ is True and g.__torch_unserializable__ is True


def _hook(grad):
    return None


@mhooks.unserializable_hook
def _quiet(grad):
    return None


def _warnings(lib, leaf, hooks_):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    t = x if leaf else x * 2
    for h in hooks_:
        t.register_hook(h)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (mhooks if lib is mt else thooks).warn_if_has_hooks(t)
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("hooks_", [[], [_hook], [_hook, _quiet, _hook], [_quiet]], ids=["none", "one", "mixed",
                                                                                         "quiet"])
def test_warn_if_has_hooks_matches_pytorch(leaf, hooks_):
    got, want = _warnings(mt, leaf, hooks_), _warnings(torch, leaf, hooks_)
    assert got == want
    assert len(got) == sum(h is _hook for h in hooks_)


def _run_backward_hook(lib, hooks, x, w, inputs_need_grad=True, replace=False):
    """A Linear's forward wrapped by hand in a BackwardHook; the hooks record what they see."""
    lin = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 7))
        lin.bias.copy_(lib.tensor([0.5, -0.25]))
    seen = []

    def full(module, grad_input, grad_output):
        seen.append(("full", [None if g is None else g.detach().numpy().copy() for g in grad_input],
                     [None if g is None else g.detach().numpy().copy() for g in grad_output]))
        return tuple(None if g is None else g * 3 for g in grad_input) if replace else None

    def pre(module, grad_output):
        seen.append(("pre", [None if g is None else g.detach().numpy().copy() for g in grad_output]))
        return tuple(g * 2 for g in grad_output) if replace else None

    bw = hooks.BackwardHook(lin, [full], [pre])
    assert bw.user_hooks == [full] and bw.user_pre_hooks == [pre] and bw.module is lin
    xt = lib.tensor(x, requires_grad=inputs_need_grad)
    args = bw.setup_input_hook((xt, 4))
    out = bw.setup_output_hook(lin.forward(args[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's note that the full hooks fire without input gradients)
        (out * lib.tensor(w)).sum().backward()
    return seen, (xt.grad.numpy() if inputs_need_grad else None), lin.weight.grad.numpy(), out.detach().numpy()


def _same(a, b):
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
    else:
        assert a == b


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("inputs_need_grad", [True, False])
def test_backward_hook_by_hand_matches_pytorch(replace, inputs_need_grad):
    x, w = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 2))
    got = _run_backward_hook(mt, mhooks, x, w, inputs_need_grad, replace)
    want = _run_backward_hook(torch, thooks, x, w, inputs_need_grad, replace)
    _same(list(got), list(want))


@pytest.mark.parametrize("hooks", [mhooks, thooks], ids=["mt", "torch"])
def test_backward_hook_without_grad_mode_passes_values_through(hooks):
    lib = mt if hooks is mhooks else torch
    lin = lib.nn.Linear(2, 2)
    bw = hooks.BackwardHook(lin, [lambda *a: None], [])
    x = lib.ones(1, 2, requires_grad=True)
    with lib.no_grad():
        args = bw.setup_input_hook((x,))
        assert args[0] is x
        out = lin(args[0])
        assert bw.setup_output_hook(out) is out


def test_namespace_and_runner():
    assert mhooks.__all__ == thooks.__all__
    assert mt.utils.hooks is mhooks
    with runner.torch_is_minitensor():
        import torch as shadow  # noqa: F811  (minitensor, under the runner)
        from torch.utils.hooks import BackwardHook, RemovableHandle

        assert BackwardHook is mhooks.BackwardHook and RemovableHandle is mhooks.RemovableHandle
        assert shadow.utils.hooks.unserializable_hook is mhooks.unserializable_hook
        assert isinstance(shadow.nn.Linear(1, 1).register_forward_hook(lambda *a: None), RemovableHandle)
