r"""Grad mode (`minitensor/autograd/grad_mode.py`): `no_grad`, `enable_grad`, `set_grad_enabled`,
`inference_mode` as context managers and decorators (also bare, and on generator functions), and
per thread, as in PyTorch.

Where PyTorch is installed the same code runs under torch too, so the expectations are PyTorch's.
"""
import sys
import threading

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
import minitensor.optim as optim
from minitensor.autograd import grad_mode


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def leaf(lib, values=(1.0, 2.0, 3.0)):
    return lib.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def records(lib, x):
    """Whether an op on x records a node right now."""
    y = x * 2
    assert y.requires_grad == (y.grad_fn is not None)
    return y.requires_grad


@pytest.fixture(autouse=True)
def grad_mode_restored():
    """Every test leaves grad mode (and anomaly mode) on, whatever it did."""
    yield
    assert mt.is_grad_enabled() and not grad_mode.modes.anomaly_enabled
    grad_mode.modes.grad_enabled, grad_mode.modes.anomaly_enabled = True, False


# ---- context managers -----------------------------------------------------------------------------

def _context_managers(lib):
    x = leaf(lib)
    seen = [records(lib, x)]
    with lib.no_grad():
        seen.append(records(lib, x))
        with lib.enable_grad():
            seen.append(records(lib, x))
        seen.append(records(lib, x))
        with lib.set_grad_enabled(True):
            seen.append(records(lib, x))
        seen.append(records(lib, x))
    with lib.set_grad_enabled(False):
        seen.append(records(lib, x))
    seen.append(records(lib, x))
    with lib.autograd.inference_mode():
        seen.append(records(lib, x))
        with lib.autograd.inference_mode(False):
            seen.append(records(lib, x))
    seen.append(records(lib, x))
    return seen


CONTEXT_EXPECTED = [True, False, True, False, True, False, False, True, False, True, True]


def test_context_managers_switch_and_restore():
    assert _context_managers(mt) == CONTEXT_EXPECTED


def test_context_managers_same_as_torch(torch):
    assert _context_managers(torch) == CONTEXT_EXPECTED


def test_mode_is_restored_when_the_block_raises():
    for make in (mt.no_grad, lambda: mt.set_grad_enabled(False), mt.autograd.inference_mode):
        with pytest.raises(ValueError):
            with make():
                assert not mt.is_grad_enabled()
                raise ValueError
        assert mt.is_grad_enabled()
    with mt.no_grad():
        with pytest.raises(ValueError):
            with mt.enable_grad():
                raise ValueError
        assert not mt.is_grad_enabled()


def test_no_grad_results_are_plain_tensors():
    x = leaf(mt)
    with mt.no_grad():
        y = (x * 2).exp().sum()
        z = x[0:2].reshape(2, 1)
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    assert not z.requires_grad and z.grad_fn is None


def test_set_grad_enabled_called_plainly_takes_effect():
    mt.set_grad_enabled(False)
    try:
        assert not mt.is_grad_enabled() and not records(mt, leaf(mt))
    finally:
        mt.set_grad_enabled(True)
    assert mt.is_grad_enabled() and records(mt, leaf(mt))


# ---- decorators ---------------------------------------------------------------------------------

def _decorators(lib):
    x = leaf(lib)

    def double(t):
        """Doubles t."""
        return t * 2

    inference_mode = lib.autograd.inference_mode
    decorated = {
        "no_grad()": lib.no_grad()(double),
        "no_grad": lib.no_grad(double),
        "set_grad_enabled(False)": lib.set_grad_enabled(False)(double),
        "inference_mode()": inference_mode()(double),
        "inference_mode": inference_mode(double),
        "inference_mode(False)": inference_mode(False)(double),
    }
    assert lib.is_grad_enabled()  # decorating switched nothing
    out = {name: fn(x).requires_grad for name, fn in decorated.items()}
    with lib.no_grad():
        out["enable_grad()"] = lib.enable_grad()(double)(x).requires_grad
        out["enable_grad"] = lib.enable_grad(double)(x).requires_grad
        out["set_grad_enabled(True)"] = lib.set_grad_enabled(True)(double)(x).requires_grad
        assert not lib.is_grad_enabled()
    for name, fn in decorated.items():
        assert fn.__name__ == "double" and fn.__doc__ == "Doubles t.", name
    return out


DECORATOR_EXPECTED = {
    "no_grad()": False, "no_grad": False, "set_grad_enabled(False)": False, "inference_mode()": False,
    "inference_mode": False, "inference_mode(False)": True, "enable_grad()": True, "enable_grad": True,
    "set_grad_enabled(True)": True,
}


def test_decorators():
    assert _decorators(mt) == DECORATOR_EXPECTED


def test_decorators_same_as_torch(torch):
    assert _decorators(torch) == DECORATOR_EXPECTED


def test_decorated_function_restores_the_mode_on_error_and_when_nested():
    @mt.no_grad()
    def fails():
        raise KeyError

    with pytest.raises(KeyError):
        fails()
    assert mt.is_grad_enabled()

    x = leaf(mt)

    @mt.no_grad
    def outer(n):
        inner_records = mt.enable_grad()(lambda: records(mt, x))()
        here = records(mt, x)
        return [(inner_records, here)] + (outer(n - 1) if n else [])

    assert outer(2) == [(True, False)] * 3
    assert mt.is_grad_enabled()


def test_inference_mode_at_the_top_level():
    with mt.inference_mode():
        assert not mt.is_grad_enabled()


def test_inference_mode_at_the_top_level_in_torch(torch):
    with torch.inference_mode():
        assert not torch.is_grad_enabled()


# ---- generator functions -------------------------------------------------------------------------

def _generator_steps(lib):
    """Each step of a decorated generator runs under the mode; the caller's code between steps does not."""
    x = leaf(lib)
    log = []

    @lib.no_grad()
    def batches(n):
        total = 0
        for i in range(n):
            sent = yield records(lib, x), lib.is_grad_enabled()
            log.append(("inside", sent, lib.is_grad_enabled()))
            total += 1
        return total

    def consume():
        result = yield from batches(3)
        log.append(("returned", result))

    gen = consume()
    log.append(("first", next(gen), lib.is_grad_enabled(), records(lib, x)))
    log.append(("second", gen.send("a"), lib.is_grad_enabled(), records(lib, x)))
    log.append(("third", gen.send("b"), lib.is_grad_enabled()))
    with pytest.raises(StopIteration):
        gen.send("c")
    log.append(("after", lib.is_grad_enabled()))

    @lib.enable_grad()
    def recording():
        yield records(lib, x)
        yield records(lib, x)

    with lib.no_grad():
        for step in recording():
            log.append(("enable_grad step", step, lib.is_grad_enabled()))
    return log


GENERATOR_EXPECTED = [
    ("first", (False, False), True, True),
    ("inside", "a", False),
    ("second", (False, False), True, True),
    ("inside", "b", False),
    ("third", (False, False), True),
    ("inside", "c", False),
    ("returned", 3),
    ("after", True),
    ("enable_grad step", True, False),
    ("enable_grad step", True, False),
]


def test_generator_steps_run_under_the_mode():
    assert _generator_steps(mt) == GENERATOR_EXPECTED


def test_generator_steps_same_as_torch(torch):
    assert _generator_steps(torch) == GENERATOR_EXPECTED


def _generator_throw_and_close(lib):
    log = []

    @lib.no_grad()
    def gen():
        try:
            while True:
                try:
                    yield lib.is_grad_enabled()
                except ValueError:
                    log.append(("caught in generator", lib.is_grad_enabled()))
        finally:
            log.append(("finally", lib.is_grad_enabled()))

    g = gen()
    next(g)
    log.append(("throw returned", g.throw(ValueError)))
    g.close()
    log.append(("after close", lib.is_grad_enabled()))
    return log


THROW_CLOSE_EXPECTED = [("caught in generator", False), ("throw returned", False), ("finally", False),
                        ("after close", True)]


def test_generator_throw_and_close_are_forwarded_under_the_mode():
    assert _generator_throw_and_close(mt) == THROW_CLOSE_EXPECTED


def test_generator_throw_and_close_in_torch(torch):
    assert _generator_throw_and_close(torch) == THROW_CLOSE_EXPECTED


def test_backward_runs_vjps_without_recording_unless_create_graph():
    seen = []

    class Spy(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            seen.append(mt.is_grad_enabled())
            return g

    x = leaf(mt)
    with mt.no_grad():
        pass
    Spy.apply(x).sum().backward()
    Spy.apply(x).sum().backward(create_graph=True)
    with mt.no_grad():
        y = x * 1
    assert seen == [False, True] and mt.is_grad_enabled() and not y.requires_grad


# ---- threads ------------------------------------------------------------------------------------

def test_modes_are_thread_local():
    assert isinstance(grad_mode.modes, threading.local)


def _run_threads(*targets):
    """Run each target in its own thread; re-raise the first error any of them had."""
    errors = []

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 (re-raised in the main thread)
                errors.append(e)
        return run

    threads = [threading.Thread(target=guarded(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]


@pytest.fixture
def fast_switching():
    """Make the interpreter switch threads very often, so the threads below really interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def test_new_thread_starts_with_grad_enabled_and_anomaly_off():
    seen = {}

    def probe():
        seen["grad"] = mt.is_grad_enabled()
        seen["anomaly"] = grad_mode.modes.anomaly_enabled
        seen["records"] = records(mt, leaf(mt))

    with mt.no_grad(), mt.autograd.detect_anomaly():
        _run_threads(probe)
        assert not mt.is_grad_enabled() and grad_mode.modes.anomaly_enabled
    assert seen == {"grad": True, "anomaly": False, "records": True}


def _no_grad_in_one_thread_only(lib):
    x = leaf(lib)
    inside, outside, done = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def quiet_thread():
        with lib.no_grad():
            inside.set()
            assert outside.wait(30)
            seen["quiet"] = records(lib, x)
        lib.set_grad_enabled(False)  # the plain call, too, is this thread's own
        done.set()

    def recording_thread():
        assert inside.wait(30)
        seen["recording"] = records(lib, x)  # while the other thread sits inside no_grad
        outside.set()
        assert done.wait(30)
        seen["after set_grad_enabled"] = records(lib, x)

    _run_threads(quiet_thread, recording_thread)
    return seen


NO_GRAD_THREADS_EXPECTED = {"quiet": False, "recording": True, "after set_grad_enabled": True}


def test_no_grad_in_one_thread_does_not_stop_recording_in_another():
    assert _no_grad_in_one_thread_only(mt) == NO_GRAD_THREADS_EXPECTED
    assert mt.is_grad_enabled()


def test_no_grad_in_one_thread_same_as_torch(torch):
    assert _no_grad_in_one_thread_only(torch) == NO_GRAD_THREADS_EXPECTED


def test_detect_anomaly_in_one_thread_does_not_check_another():
    inside, finished = threading.Event(), threading.Event()
    seen = {}

    def anomalous():
        with mt.autograd.detect_anomaly():
            inside.set()
            assert finished.wait(30)
            with pytest.raises(mt.autograd.AnomalyError):
                mt.tensor([-1.0]).log()

    def plain():
        assert inside.wait(30)
        seen["value"] = mt.tensor([-1.0]).log().item()  # NaN, but nobody checks here
        finished.set()

    with np.errstate(invalid="ignore"):
        _run_threads(anomalous, plain)
    assert np.isnan(seen["value"])


LIN_X = np.random.default_rng(11).standard_normal((4, 3))
LIN_W = np.random.default_rng(12).standard_normal((5, 3))
LIN_U = np.random.default_rng(13).standard_normal((4, 5))


def _softmax_linear_grad():
    """d(sum(U * softmax(x W^T)))/dW, in numpy."""
    z = LIN_X @ LIN_W.T
    s = np.exp(z - z.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    dz = s * (LIN_U - (LIN_U * s).sum(-1, keepdims=True))
    return s, dz.T @ LIN_X


def test_threads_running_the_same_forward_all_keep_their_graph(fast_switching):
    """The issue's two threads each running `F.linear(x, w).softmax(-1)` in a loop, plus a third
    that keeps entering and leaving no_grad: every recorded forward keeps its graph and gradient."""
    want_s, want_gw = _softmax_linear_grad()
    x, u = mt.tensor(LIN_X), mt.tensor(LIN_U)
    stop = threading.Event()

    def worker():
        for _ in range(150):
            w = mt.tensor(LIN_W, requires_grad=True)
            s = F.linear(x, w).softmax(-1)
            assert s.grad_fn is not None, "the graph was lost"
            s.backward(u)
            np.testing.assert_allclose(s.numpy(force=True), want_s, rtol=1e-12)
            np.testing.assert_allclose(w.grad.numpy(), want_gw, rtol=1e-10, atol=1e-12)

    def toggler():
        w = mt.tensor(LIN_W, requires_grad=True)
        while not stop.is_set():
            with mt.no_grad():
                assert F.linear(x, w).softmax(-1).grad_fn is None
            mt.set_grad_enabled(False)
            mt.set_grad_enabled(True)

    def workers_then_stop():
        try:
            _run_threads(worker, worker)
        finally:
            stop.set()

    _run_threads(workers_then_stop, toggler)


def _train(seed, steps=40):
    """A small linear regression trained with SGD: its final weight, bias and weight gradient."""
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((16, 3))
    Y = X @ gen.standard_normal((3, 2)) + 0.5
    model = nn.Linear(3, 2).double()
    with mt.no_grad():
        model.weight.copy_(mt.tensor(gen.standard_normal((2, 3))))
        model.bias.zero_()
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    x, y = mt.tensor(X), mt.tensor(Y)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return [model.weight.numpy(force=True).copy(), model.bias.numpy(force=True).copy(),
            model.weight.grad.numpy().copy()]


def test_two_models_trained_in_two_threads_equal_training_alone(fast_switching):
    alone = {seed: _train(seed) for seed in (1, 2)}
    together = {}

    def run(seed):
        return lambda: together.__setitem__(seed, _train(seed))

    _run_threads(run(1), run(2))
    for seed in (1, 2):
        for a, b in zip(together[seed], alone[seed]):
            np.testing.assert_array_equal(a, b)
    assert not np.allclose(alone[1][0], alone[2][0])  # two different problems
