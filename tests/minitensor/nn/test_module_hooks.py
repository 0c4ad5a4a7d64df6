"""Module hooks and methods without PyTorch: handles, global hooks cleaned up, extra state, refusals that
change nothing (bfloat16), and load_state_dict's casting of integer values into float parameters."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn import module as module_mod


def test_handles_remove_and_work_as_context_managers():
    lin = nn.Linear(2, 2)
    seen = []
    with lin.register_forward_hook(lambda m, a, o: seen.append("in")):
        lin(mt.ones(1, 2))
    lin(mt.ones(1, 2))
    h = lin.register_full_backward_hook(lambda m, gi, go: seen.append("bw"))
    x = mt.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()
    h.remove()
    lin(x).sum().backward()
    assert seen == ["in", "bw"] and not lin._backward_hooks


def test_backward_hook_gradients_match_the_plain_ones_in_float64():
    mt.manual_seed(0)
    lin = nn.Linear(3, 2).double()
    x = mt.randn(4, 3, dtype=mt.float64, requires_grad=True)
    up = mt.randn(4, 2, dtype=mt.float64)
    (lin(x) * up).sum().backward()
    plain = x.grad.numpy().copy()
    x.grad = None
    got = []
    lin.register_full_backward_hook(lambda m, gi, go: got.append((gi[0].numpy().copy(), go[0].numpy().copy())))
    (lin(x) * up).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), plain)
    np.testing.assert_allclose(got[0][0], plain)
    np.testing.assert_allclose(got[0][1], up.numpy())


def test_registration_hooks_see_and_may_replace():
    seen = []
    h = module_mod.register_module_parameter_registration_hook(lambda m, n, p: seen.append(n))
    try:
        nn.Linear(1, 1)
    finally:
        h.remove()
    nn.Linear(1, 1)
    assert seen == ["weight", "bias"]


@pytest.mark.skipif(mt._dtype.has_bfloat16, reason="ml_dtypes is installed: bfloat16 modules exist")
def test_bfloat16_is_refused_and_changes_nothing():
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="bfloat16"):
        lin.bfloat16()
    assert lin.weight.dtype == mt.float32
    assert lin.half().weight.dtype == mt.float16


@pytest.mark.skipif(not mt._dtype.has_bfloat16, reason="bfloat16 needs the optional package ml_dtypes")
def test_bfloat16_module_with_ml_dtypes():
    lin = nn.Linear(2, 2)
    assert lin.bfloat16() is lin and lin.weight.dtype == mt.bfloat16 and lin.bias.dtype == mt.bfloat16
    assert lin(mt.ones(1, 2, dtype=mt.bfloat16)).dtype == mt.bfloat16
    lin = nn.Linear(2, 2)
    assert lin.half().weight.dtype == mt.float16


def test_load_state_dict_casts_integers_into_float_parameters():
    lin = nn.Linear(2, 1)
    w = lin.weight
    lin.load_state_dict({"weight": mt.tensor([[1, 2]]), "bias": np.array([3])})
    assert lin.weight is w and lin.weight.dtype == mt.float32 and lin.weight.tolist() == [[1.0, 2.0]]


class WithState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(1, 1)
        self.counter = 0

    def get_extra_state(self):
        return {"counter": self.counter}

    def set_extra_state(self, state):
        self.counter = state["counter"]


def test_extra_state_is_saved_and_restored():
    a, b = WithState(), WithState()
    a.counter = 7
    sd = a.state_dict()
    assert list(sd) == ["_extra_state", "lin.weight", "lin.bias"]
    b.load_state_dict(sd)
    assert b.counter == 7
    with pytest.raises(RuntimeError, match='Missing key.*"_extra_state"'):
        b.load_state_dict({k: v for k, v in sd.items() if k != "_extra_state"})


def test_a_post_hook_can_forgive_missing_keys():
    lin = nn.Linear(1, 1)
    lin.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
    assert lin.load_state_dict({"weight": mt.ones(1, 1)}).missing_keys == []
    assert lin.weight.item() == 1.0


def test_state_dict_prefix_is_used_as_given():
    assert list(nn.Linear(1, 1).state_dict(prefix="m.")) == ["m.weight", "m.bias"]
    assert list(nn.Linear(1, 1).state_dict(prefix="m")) == ["mweight", "mbias"]  # (as PyTorch: no dot added)
