"""What the Reproducibility, Broadcasting and Autograd-mechanics notes met: torch.Generator's seed and
state, the warning on a non-leaf's .grad, and PyTorch's words for a broadcast clash, an in-place shape
clash and an unused input of autograd.grad."""
import warnings

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")


def test_a_generators_initial_seed_and_state():
    assert mt.Generator().initial_seed() == torch.Generator().initial_seed()
    assert mt.Generator().manual_seed(5).initial_seed() == torch.Generator().manual_seed(5).initial_seed() == 5
    g = mt.Generator().manual_seed(3)
    state = g.get_state()
    first = mt.rand(4, generator=g)
    g.set_state(state)
    assert mt.equal(first, mt.rand(4, generator=g))
    s = g.seed()
    assert g.initial_seed() == s and mt.default_generator.initial_seed() == mt.initial_seed()


def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message).split(". ")[0] for w in caught]


@pytest.mark.parametrize("lib", [mt, torch])
def test_reading_a_non_leafs_grad_warns_unless_it_retains_it(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    z = x * 3
    z.retain_grad()
    assert _warnings(lambda: y.grad) == ["The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"]
    assert _warnings(lambda: z.grad) == [] and _warnings(lambda: x.grad) == []
    (z * lib.tensor([1.0, -2.0])).sum().backward()
    assert _warnings(lambda: z.grad) == [] and z.grad.tolist() == [1.0, -2.0]


@pytest.mark.parametrize("a, b", [((0,), (2, 2)), ((5, 2, 4, 1), (3, 1, 1)), ((2, 3), (4, 3)), ((3,), (4,))])
def test_a_broadcast_clash_of_two_operands_says_what_pytorch_says(a, b):
    with pytest.raises(RuntimeError) as theirs:
        torch.empty(a) + torch.empty(b)
    with pytest.raises(RuntimeError) as ours:
        mt.empty(a) + mt.empty(b)
    # PyTorch's sentence, between minitensor's op name and the two shapes
    assert str(ours.value) == f"add: {theirs.value} (shapes {tuple(a)} and {tuple(b)})"


def test_an_inplace_shape_clash_says_what_pytorch_says():
    with pytest.raises(RuntimeError) as theirs:
        torch.empty(1, 3, 1).add_(torch.empty(3, 1, 7))
    with pytest.raises(RuntimeError) as ours:
        mt.empty(1, 3, 1).add_(mt.empty(3, 1, 7))
    assert str(ours.value) == f"add_: {theirs.value}"


def test_an_unused_input_of_autograd_grad_says_what_pytorch_says():
    msgs = []
    for lib in (mt, torch):
        x, y = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0], requires_grad=True)
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad((x ** 3).sum(), (x, y))
        msgs.append(str(e.value))
        out = lib.autograd.grad((x ** 3).sum(), (x, y), allow_unused=True)
        assert out[1] is None and np.allclose(out[0].tolist(), [3.0, 12.0])
    assert msgs[0] == "grad: " + msgs[1]
