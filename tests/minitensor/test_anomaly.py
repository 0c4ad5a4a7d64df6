"""autograd.detect_anomaly: the first op that creates NaN/inf, forward or backward, and the user's line."""
import inspect
import math

import numpy as np
import pytest

import minitensor as torch
import minitensor.nn.functional as F
from minitensor.autograd import AnomalyError, detect_anomaly, grad_mode as _gm


def _next_line():
    return inspect.currentframe().f_back.f_lineno + 1


def test_forward_nan_from_log_of_negative_names_the_op_and_the_users_line():
    x = torch.tensor([2.0, -1.0, 3.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(AnomalyError) as info:
        with detect_anomaly():
            y = x * 1.0
            line = _next_line()
            y.log()
    err = info.value
    assert err.op == "LogBackward" and err.phase == "forward"
    msg = str(err)
    assert "'Log'" in msg and "LogBackward" in msg and "nan" in msg
    assert f'{__file__}", line {line}' in msg
    assert "y.log()" in msg  # the source line itself
    assert "index (1,)" in msg and "input 0 = -1" in msg  # where, and the value that caused it


def test_forward_check_also_covers_tensors_that_need_no_grad():
    with pytest.raises(AnomalyError, match="Log"):
        with detect_anomaly():
            torch.tensor([-1.0]).log()


def test_forward_inf_from_overflow_names_exp():
    with pytest.raises(AnomalyError, match="'Exp'.*inf"):
        with detect_anomaly():
            torch.tensor([1000.0], dtype=torch.float64, requires_grad=True).exp()


def test_backward_inf_from_sqrt_at_zero_names_sqrt_and_where_it_was_created():
    x = torch.tensor([0.0, 4.0], dtype=torch.float64, requires_grad=True)
    with detect_anomaly():
        line = _next_line()
        y = x.sqrt()  # finite forward: sqrt(0) = 0
        loss = (y * torch.tensor([2.0, 3.0], dtype=torch.float64)).sum()
        with pytest.raises(AnomalyError) as info:
            loss.backward()
    err = info.value
    assert err.op == "SqrtBackward" and err.phase == "backward"
    msg = str(err)
    assert "'Sqrt'" in msg and "inf" in msg and "index (0,)" in msg
    assert f'line {line}' in msg and "x.sqrt()" in msg
    assert x.grad is None  # the failed backward wrote nothing


def test_the_where_trap_is_reported_at_sqrt():
    # where(x > 0, sqrt(x), 0) at x = 0: the unselected branch's VJP is 0 / 0 = nan (as in PyTorch)
    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    with detect_anomaly():
        y = torch.where(x > 0, x.sqrt(), torch.zeros(2, dtype=torch.float64))
        with pytest.raises(AnomalyError, match="SqrtBackward.*nan"):
            (y * torch.tensor([1.0, 2.0], dtype=torch.float64)).sum().backward()


def test_backward_of_a_graph_built_outside_the_block_says_where_to_look():
    x = torch.tensor([0.0], dtype=torch.float64, requires_grad=True)
    y = x.sqrt().sum()
    with detect_anomaly(), pytest.raises(AnomalyError, match="outside detect_anomaly"):
        y.backward()


def test_no_false_alarm_when_the_inputs_already_hold_nan():
    x = torch.tensor([math.nan, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    u = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    with detect_anomaly():
        y = (x * 2).exp().tanh()
        ((y * u).sum()).backward()
    assert np.isnan(x.grad.numpy(force=True)[0]) and np.isfinite(x.grad.numpy(force=True)[1:]).all()


def test_no_false_alarm_for_an_intentional_minus_inf_mask():
    torch.manual_seed(0)
    q = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    causal = torch.tril(torch.ones(4, 4)).bool()
    with detect_anomaly():
        s = (q @ q.T).masked_fill(~causal, float("-inf"))
        p = F.softmax(s, dim=-1)
        (p * torch.randn(4, 4, dtype=torch.float64)).sum().backward()
    assert np.isfinite(q.grad.numpy(force=True)).all()


def test_a_fully_masked_row_is_reported_at_the_softmax():
    s = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, True], [False, False]])
    with detect_anomaly():
        masked = s.masked_fill(~mask, float("-inf"))
        with pytest.raises(AnomalyError, match="Softmax.*nan"):
            F.softmax(masked, dim=-1)


def test_ordinary_training_math_raises_nothing_and_gives_the_same_gradients():
    torch.manual_seed(1)
    w = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    x = torch.randn(5, 3, dtype=torch.float64)

    def run():
        w.grad = None
        h = F.layer_norm(x @ w, (4,)).gelu()
        F.cross_entropy(h, torch.tensor([0, 1, 2, 3, 0])).backward()
        return w.grad.numpy(force=True).copy()

    plain = run()
    with detect_anomaly():
        checked = run()
    np.testing.assert_array_equal(plain, checked)


def test_state_is_restored_after_the_block_even_on_error():
    assert _gm.modes.anomaly_enabled is False
    with pytest.raises(AnomalyError):
        with detect_anomaly():
            assert _gm.modes.anomaly_enabled is True
            torch.tensor([-1.0]).log()
    assert _gm.modes.anomaly_enabled is False
    with pytest.raises(ValueError):
        with detect_anomaly():
            raise ValueError("unrelated")
    assert _gm.modes.anomaly_enabled is False
    with detect_anomaly():
        with detect_anomaly(check_nan=False):
            assert _gm.modes.anomaly_enabled is False
            torch.tensor([-1.0]).log()  # switched off inside: no error
        assert _gm.modes.anomaly_enabled is True
    assert _gm.modes.anomaly_enabled is False


def test_outside_the_block_nothing_is_checked():
    y = torch.tensor([-1.0]).log()
    assert np.isnan(y.item())


def test_detect_anomaly_works_as_a_decorator():
    @detect_anomaly()
    def f():
        return torch.tensor([0.0]).log()

    with pytest.raises(AnomalyError, match="inf"):
        f()
    assert _gm.modes.anomaly_enabled is False


def test_a_user_function_returning_a_numpy_gradient_is_checked_too():
    from minitensor.autograd import Function

    class BadReciprocal(Function):
        @staticmethod
        def forward(ctx, x):
            return 1.0 / (1.0 + x.numpy(force=True) * x.numpy(force=True))

        @staticmethod
        def backward(ctx, g):
            x = ctx.inputs[0].numpy(force=True)
            with np.errstate(divide="ignore"):
                return g.numpy(force=True) / x  # wrong on purpose: inf at x = 0, as a plain ndarray

    x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    with detect_anomaly():
        y = BadReciprocal.apply(x)
        with pytest.raises(AnomalyError, match="BadReciprocalBackward.*inf"):
            y.backward(torch.tensor([1.0, 1.0], dtype=torch.float64))
