"""`_fperr.quiet`: numpy's warnings of the named categories off for one call, the caller's state kept."""
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor import _fperr


@pytest.fixture
def quiet():
    return _fperr.quiet


def test_the_named_categories_are_silent_and_the_callers_state_is_back_after(quiet):
    exp = quiet(np.exp, "over")
    with np.errstate(over="raise", divide="raise"):
        before = np.geterr()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert exp(np.array([1000.0]))[0] == np.inf
        assert np.geterr() == before
        with pytest.raises(FloatingPointError):  # a category not named keeps the caller's setting
            quiet(np.log, "over")(np.array([0.0]))
        with pytest.raises(FloatingPointError):
            np.exp(np.array([1000.0]))  # and outside the call everything is as it was


def test_an_error_inside_the_call_restores_the_state(quiet):
    fail = quiet(lambda a: a.reshape(7), "invalid")
    before = np.geterr()
    with pytest.raises(ValueError):
        fail(np.zeros(3))
    assert np.geterr() == before


def test_ops_make_inf_and_nan_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = mt.tensor([1000.0, 0.0, -1.0], requires_grad=True)
        values = [x.exp(), x.log(), x.sqrt(), 1 / x, x ** -1.0, (-x).sigmoid()]
        sum(v.sum() for v in values[:1]).backward()
    assert (np.isinf(values[0].numpy(force=True)[0]) and np.isnan(values[1].numpy(force=True)[2])
            and values[5].numpy(force=True)[0] == 0)


def test_a_row_of_only_minus_infinity_gives_nan_or_minus_inf_without_a_warning():
    x = mt.tensor([[-np.inf, -np.inf], [1.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        soft, log_soft, lse = (x.softmax(-1).numpy(force=True), x.log_softmax(-1).numpy(force=True),
                               x.logsumexp(-1).numpy(force=True))
    assert np.isnan(soft[0]).all() and np.isnan(log_soft[0]).all() and lse[0] == -np.inf  # as PyTorch
    np.testing.assert_allclose(log_soft[1], np.log(soft[1]), rtol=1e-6)


def test_backward_is_silent_once_for_every_vjp_and_leaves_the_callers_state():
    """The engine ignores numpy's warnings once for the whole pass; the VJPs' own quiet wrappers then
    enter nothing, and the caller's settings are back afterwards."""
    x = mt.tensor([0.0, 1e30, -1.0], requires_grad=True)
    with np.errstate(all="raise"):
        before = np.geterr()
        y = (x * 1e30).log()  # forward: quiet where it makes inf and NaN, as PyTorch
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y.sum().backward()  # backward: 1 / x at 0 and inf * 0, silently
        assert np.geterr() == before and not _fperr._silenced.on
    assert np.isinf(x.grad.numpy()[0])


class _UsersLog(mt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.log()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return mt.tensor(g.numpy() / x.detach().numpy())  # numpy code of the user's: warns as the user set numpy


def test_a_users_backward_and_hooks_run_with_the_users_numpy_settings():
    x = mt.tensor([0.0, 1.0], requires_grad=True)
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        _UsersLog.apply(x).sum().backward()
    seen = []
    y = (x * 1.0).exp()
    y.register_hook(lambda g: seen.append(np.geterr()["divide"]))
    with np.errstate(divide="raise"):
        y.sum().backward()
    assert seen == ["raise"] and not _fperr._silenced.on


def test_accumulating_into_grad_overflows_to_inf_without_a_warning():
    """`.grad` summed across two backward calls may overflow: inf, silently, as in PyTorch."""
    big = np.finfo(np.float32).max
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    weight = mt.tensor([big, 0.5])
    (x * weight).sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * weight).sum().backward()
    assert x.grad.tolist() == [np.inf, 1.0]
    torch = pytest.importorskip("torch")
    xt = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        (xt * torch.tensor([big, 0.5])).sum().backward()
    assert xt.grad.tolist() == x.grad.tolist()


def test_a_post_accumulate_grad_hook_runs_with_the_users_numpy_settings():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(np.geterr()["over"]))
    with np.errstate(over="raise"):
        (x * 3.0).sum().backward()
    assert seen == ["raise"] and not _fperr._silenced.on
