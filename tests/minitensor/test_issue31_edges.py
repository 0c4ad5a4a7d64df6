"""Issue 31's last autograd and runner items, with PyTorch's answers written down (test_torch_issue31_edges.py
checks the same cases against PyTorch itself): inference mode wins over enable_grad, a user's Function may
leave a broadcast gradient unreduced, and the runner doesn't blame a missing name a script's fallback handled."""
import contextlib
import re
import textwrap
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor import run as runner
from minitensor.autograd import grad_mode

# Each case: the switches entered, outermost first; then (an op records, is_grad_enabled, is_inference_mode_enabled)
# inside the innermost, as PyTorch 2.13 answers.
NESTINGS = [
    (("inference_mode()", "enable_grad()"), (False, True, True)),
    (("inference_mode()", "set_grad_enabled(True)"), (False, True, True)),
    (("inference_mode()", "no_grad()", "enable_grad()"), (False, True, True)),
    (("inference_mode()", "inference_mode(False)"), (True, True, False)),
    (("inference_mode()", "inference_mode(False)", "no_grad()"), (False, False, False)),
    (("no_grad()", "inference_mode(False)"), (True, True, False)),
    (("no_grad()", "inference_mode()", "enable_grad()"), (False, True, True)),
    (("enable_grad()", "inference_mode()"), (False, False, True)),
    (("inference_mode()", "enable_grad()", "inference_mode()"), (False, False, True)),
    (("inference_mode()", "enable_grad()", "inference_mode(False)"), (True, True, False)),
]


def switch(lib, text):
    name, arg = text[:-1].split("(")
    return getattr(lib, name)(*([arg == "True"] if arg else []))


def nested_state(lib, switches):
    """What the innermost block sees, and that every switch is undone after."""
    x = lib.ones(2, requires_grad=True)
    with contextlib.ExitStack() as stack:
        for s in switches:  # (each made inside the one before: set_grad_enabled switches as it is made)
            stack.enter_context(switch(lib, s))
        y = x * 2
        seen = (y.requires_grad, y.grad_fn is not None, lib.is_grad_enabled(), lib.is_inference_mode_enabled())
    assert (x * 2).requires_grad and lib.is_grad_enabled() and not lib.is_inference_mode_enabled()
    assert seen[0] == seen[1]
    return seen[1:]


@pytest.mark.parametrize("switches, expected", NESTINGS, ids=[" > ".join(c[0]) for c in NESTINGS])
def test_inference_mode_wins_over_grad_mode(switches, expected):
    assert nested_state(mt, switches) == expected


def test_inference_mode_as_decorator_and_backward_inside_it():
    @mt.inference_mode()
    def f(x):
        with mt.enable_grad():
            return (x * 2).requires_grad, mt.is_grad_enabled(), mt.is_inference_mode_enabled()

    x = mt.tensor([1.0, 2.0], requires_grad=True)
    assert f(x) == (False, True, True) and not mt.is_inference_mode_enabled()
    y = (x * x).sum()
    with mt.inference_mode():  # a graph recorded before may be differentiated inside, but nothing new records
        (g,) = mt.autograd.grad(y, x, create_graph=True)
    assert g.tolist() == [2.0, 4.0] and not g.requires_grad and g.grad_fn is None
    with mt.inference_mode(), mt.enable_grad():  # PyTorch: an in-place change of a leaf records nothing, allowed
        x.add_(1)
    assert x.tolist() == [2.0, 3.0] and x.grad_fn is None and grad_mode.modes.grad_enabled


def _broadcasting_function(lib, reduce_by_hand):
    class Add(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):  # PyTorch sums a gradient of a broadcast shape to its input's shape
            return (g.sum(0), g) if reduce_by_hand else (g, g)

    return Add


BROADCASTS = [((3,), (2, 3)), ((1, 3), (2, 1, 3)), ((), (2, 3)), ((2, 1), (2, 4)), ((1, 1), (1,))]


@pytest.mark.parametrize("a_shape, b_shape", BROADCASTS, ids=str)
def test_a_users_function_may_return_a_broadcast_gradient(a_shape, b_shape):
    rng = np.random.default_rng(0)
    a = mt.tensor(rng.normal(size=a_shape), requires_grad=True)
    b = mt.tensor(rng.normal(size=b_shape), requires_grad=True)
    w = mt.tensor(rng.normal(size=np.broadcast_shapes(a_shape, b_shape)))
    (_broadcasting_function(mt, False).apply(a, b) * w).sum().backward()
    a2, b2 = a.detach().requires_grad_(), b.detach().requires_grad_()
    ((a2 + b2) * w).sum().backward()
    assert a.grad.shape == a_shape and b.grad.shape == b_shape
    np.testing.assert_allclose(a.grad.numpy(), a2.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), b2.grad.numpy(), rtol=1e-12)


def test_the_summed_broadcast_gradient_is_differentiable_again():
    class Scale(mt.autograd.Function):  # out = a * b with a of shape (3,), b (2, 3); VJP left unreduced
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    a = mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64, requires_grad=True)
    b = mt.tensor([[1.0, -1.0, 2.0], [0.5, 3.0, 1.0]], dtype=mt.float64, requires_grad=True)
    (ga,) = mt.autograd.grad(Scale.apply(a, b).pow(2).sum(), a, create_graph=True)
    np.testing.assert_allclose(ga.detach().numpy(), (2 * a.detach().numpy() * b.detach().numpy() ** 2).sum(0))
    (gga,) = mt.autograd.grad(ga.sum(), a)
    np.testing.assert_allclose(gga.numpy(), (2 * b.detach().numpy() ** 2).sum(0))


@pytest.mark.parametrize("a_shape, grad_shape", [((3,), (4,)), ((3,), ()), ((2, 3), (3,)), ((3,), (3, 2))], ids=str)
def test_a_gradient_that_cannot_sum_to_its_input_is_an_error_naming_the_function(a_shape, grad_shape):
    class Bad(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return mt.ones(grad_shape)

    a = mt.ones(a_shape, requires_grad=True)
    with pytest.raises(RuntimeError, match=re.escape(f"'BadBackward' returned a gradient of shape {grad_shape}")):
        Bad.apply(a).sum().backward()
    assert a.grad is None


def test_minitensors_own_ops_still_must_return_their_inputs_shape():
    from minitensor.ops.unary import Exp

    class Sloppy(Exp):  # a built-in op's backward that forgets to undo broadcasting stays an error
        sums_broadcast_gradients = False

        @staticmethod
        def backward(ctx, g):
            return g.expand(2, 3)

    assert not Exp.sums_broadcast_gradients and _broadcasting_function(mt, True).sums_broadcast_gradients
    with pytest.raises(RuntimeError, match=r"'SloppyBackward' returned a gradient of shape \(2, 3\) for input 0, "
                                           r"which has shape \(3,\)$"):
        Sloppy.apply(mt.ones(3, requires_grad=True)).sum().backward()


FALLBACK = """\
    import torch
    try:
        {reach}
    except ImportError:
        print("falling back")
        {then}
"""


@pytest.mark.parametrize("reach", ["from torch import fft", "import torch.fft"])
def test_an_error_in_the_scripts_own_fallback_is_its_own(reach, tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent(FALLBACK.format(reach=reach, then="{}['unrelated']")))
    with pytest.raises(KeyError, match="unrelated"):  # its own traceback, not "torch.fft is not available"
        runner.main([str(script)])
    assert capsys.readouterr().out == "falling back\n"


def test_a_missing_name_the_script_re_raises_from_is_still_named(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(textwrap.dedent(FALLBACK.format(reach="import torch.fft", then="raise SystemExit(3) from None")))
    with pytest.raises(SystemExit):  # `from None`: the script says the missing name is not the cause
        runner.main([str(script)])
    script.write_text(textwrap.dedent(FALLBACK.format(
        reach="import torch.fft as f", then="import sys; raise RuntimeError('needs fft') from sys.exc_info()[1]")))
    assert runner.main([str(script)]) == 2
    assert capsys.readouterr().err == f"minitensor.run: torch.fft is not available in minitensor (used at {script}:3)\n"


# ---- what the autograd sweep (test_torch_autograd_sweep.py) found, one case each -------------------------------
# Each case: fn(lib) -> something both libraries give alike (numbers as lists, or an error's type name),
# and PyTorch 2.13's answer.

def _leaves(lib):
    a = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    b = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
    return a, b


def _grad_fills_retained(lib):
    a, _ = _leaves(lib)
    h = a * 3
    h.retain_grad()
    lib.autograd.grad((h * h).sum(), a)
    return h.grad.tolist(), a.grad


def _backward_inputs_fills_retained_once(lib):
    a, _ = _leaves(lib)
    h = a * 3
    h.retain_grad()
    (h * 2).sum().backward(inputs=[h, a, a])
    return h.grad.tolist(), a.grad.tolist()


def _backward_inputs_non_leaf_runs_its_node(lib):
    a, b = _leaves(lib)
    h = a * b
    y = (h * 2).sum()
    with lib.no_grad():
        a.mul_(2)  # h's node reads a: PyTorch runs it for inputs=[h], so the change is found
    y.backward(inputs=[h])


def _backward_inputs_non_leaf_retains_after(lib):
    a, b = _leaves(lib)
    h = a * b
    (h * 2).sum().backward(inputs=[h], retain_graph=True)
    (h * 3).sum().backward()
    return h.retains_grad, h.grad.tolist(), a.grad.tolist()


def _backward_inputs_not_requiring_grad(lib):
    a, _ = _leaves(lib)
    (a * 2).sum().backward(inputs=[lib.ones(2)])


def _backward_inputs_empty(lib):
    a, _ = _leaves(lib)
    (a * 2).sum().backward(inputs=[])


def _backward_inputs_a_number(lib):
    a, _ = _leaves(lib)
    (a * 2).sum().backward(inputs=1.0)


def _materialized_zeros_under_create_graph(lib):
    a, b = _leaves(lib)
    ga, gb = lib.autograd.grad((a * a).sum(), [a, b], create_graph=True, materialize_grads=True)
    return ga.requires_grad, gb.requires_grad, gb.tolist()


def _detach_in_place_of_a_view(lib):
    a, _ = _leaves(lib)
    (a * 2)[:1].detach_()


def _create_graph_grads_are_not_shared(lib):
    a, b = _leaves(lib)
    y = ((a + b) * 2).sum()
    y.backward(retain_graph=True, create_graph=True)  # a's and b's gradient are one tensor inside the engine
    y.backward()
    return a.grad.tolist(), b.grad.tolist()


SWEEP_FOUND = [
    ("grad_fills_retained", _grad_fills_retained, ([6.0, 12.0], None)),
    ("backward_inputs_fills_retained_once", _backward_inputs_fills_retained_once, ([2.0, 2.0], [6.0, 6.0])),
    ("backward_inputs_non_leaf_runs_its_node", _backward_inputs_non_leaf_runs_its_node, "RuntimeError"),
    ("backward_inputs_non_leaf_retains_after", _backward_inputs_non_leaf_retains_after,
     (True, [5.0, 5.0], [9.0, 12.0])),
    ("backward_inputs_not_requiring_grad", _backward_inputs_not_requiring_grad, "RuntimeError"),
    ("backward_inputs_empty", _backward_inputs_empty, "RuntimeError"),
    ("backward_inputs_a_number", _backward_inputs_a_number, "TypeError"),
    ("materialized_zeros_under_create_graph", _materialized_zeros_under_create_graph, (True, True, [0.0, 0.0])),
    ("detach_in_place_of_a_view", _detach_in_place_of_a_view, "RuntimeError"),
    ("create_graph_grads_are_not_shared", _create_graph_grads_are_not_shared, ([4.0, 4.0], [4.0, 4.0])),
]


def outcome(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch warns about backward(create_graph=True)
            return fn(lib)
    except (RuntimeError, TypeError, ValueError) as e:
        return type(e).__name__


@pytest.mark.parametrize("name, fn, expected", SWEEP_FOUND, ids=[c[0] for c in SWEEP_FOUND])
def test_what_the_autograd_sweep_found(name, fn, expected):
    assert outcome(mt, fn) == expected
