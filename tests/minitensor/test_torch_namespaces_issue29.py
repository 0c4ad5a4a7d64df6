"""issue 29's remaining names of torch.linalg, torch.autograd, torch.func and torch.random against PyTorch:
values, pivots, dtypes, gradients and errors, on tiny inputs. Skipped without PyTorch."""

import numpy as np
import pytest

import minitensor as mt
import minitensor.autograd as A
import minitensor.func as F
import minitensor.linalg as LA
import minitensor.random as R

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

RNG = np.random.default_rng(29)


def _symmetric(n, shrink_diagonal):
    a = RNG.standard_normal((n, n))
    a = a + a.T
    if shrink_diagonal:  # small diagonal: Bunch-Kaufman takes 2x2 pivots
        a[np.diag_indices(n)] *= 0.01
    return a


@pytest.mark.parametrize("n, shrink", [(1, False), (3, False), (3, True), (5, True), (6, False)])
def test_ldl_factor_and_solve_match_torch(n, shrink):
    a = np.stack([_symmetric(n, shrink), _symmetric(n, not shrink)])
    b = RNG.standard_normal((2, n, 2))
    LD, piv, info = LA.ldl_factor_ex(mt.tensor(a))
    tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(a))
    np.testing.assert_allclose(LD.numpy(), tLD.numpy(), atol=1e-10)
    assert piv.numpy().tolist() == tpiv.numpy().tolist() and piv.dtype == mt.int32
    assert info.numpy().tolist() == tinfo.numpy().tolist()
    x = LA.ldl_solve(*LA.ldl_factor(mt.tensor(a)), mt.tensor(b))
    np.testing.assert_allclose(x.numpy(), torch.linalg.ldl_solve(tLD, tpiv, torch.tensor(b)).numpy(), rtol=1e-8)
    np.testing.assert_allclose(a @ x.numpy(), b, atol=1e-8)
    f32 = LA.ldl_factor(mt.tensor(a, dtype=mt.float32))
    assert f32.LD.dtype == mt.float32 and not f32.LD.requires_grad


def test_ldl_and_lu_factor_ex_errors_and_info():
    zeros = LA.ldl_factor_ex(mt.zeros(3, 3))
    tz = torch.linalg.ldl_factor_ex(torch.zeros(3, 3))
    assert zeros.info.item() == tz.info.item() and zeros.pivots.numpy().tolist() == tz.pivots.tolist()
    for fn in (lambda: LA.ldl_factor(mt.zeros(3, 3)), lambda: LA.ldl_factor_ex(mt.zeros(3, 3), check_errors=True),
               lambda: LA.ldl_factor(mt.zeros(2, 3)), lambda: LA.lu_factor_ex(mt.zeros(2, 2), check_errors=True)):
        with pytest.raises(RuntimeError):
            fn()
    with pytest.raises(RuntimeError):
        torch.linalg.ldl_factor(torch.zeros(2, 3))
    for a in (np.array([[1.0, 2.0], [2.0, 4.0]]), np.zeros((2, 3, 3)), RNG.standard_normal((3, 4))):
        ours, theirs = LA.lu_factor_ex(mt.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
        np.testing.assert_allclose(ours.LU.numpy(), theirs.LU.numpy(), atol=1e-12)
        assert ours.pivots.numpy().tolist() == theirs.pivots.tolist()
        assert ours.info.numpy().tolist() == theirs.info.tolist() and ours.info.dtype == mt.int32


@pytest.mark.parametrize("shape, k", [((3, 3), 3), ((4, 2), 1), ((2, 5, 3), 2)])
def test_householder_product_values_and_gradients(shape, k):
    a = RNG.standard_normal(shape)
    tau = RNG.standard_normal(shape[:-2] + (k,))
    weight = RNG.standard_normal(shape)
    x, t = mt.tensor(a, requires_grad=True), mt.tensor(tau, requires_grad=True)
    tx, tt = torch.tensor(a, requires_grad=True), torch.tensor(tau, requires_grad=True)
    out, tout = LA.householder_product(x, t), torch.linalg.householder_product(tx, tt)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), atol=1e-12)
    (out * mt.tensor(weight)).sum().backward()
    (tout * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(t.grad.numpy(), tt.grad.numpy(), atol=1e-10)
    assert mt.autograd.gradcheck(LA.householder_product, (mt.tensor(a, requires_grad=True),
                                                          mt.tensor(tau, requires_grad=True)))


def test_householder_product_refusals():
    for a, tau in (((2, 3), (2,)), ((3, 2), (3,)), ((3, 2), (2, 1))):
        with pytest.raises(RuntimeError):
            LA.householder_product(mt.zeros(*a), mt.zeros(*tau))
        with pytest.raises(RuntimeError):
            torch.linalg.householder_product(torch.zeros(*a), torch.zeros(*tau))


def test_autograd_switches_and_legacy_names():
    assert not mt.is_anomaly_enabled()
    switch = A.set_detect_anomaly(True)  # takes effect when called, as PyTorch's
    assert mt.is_anomaly_enabled()
    with switch:
        with A.set_detect_anomaly(False):
            assert not mt.is_anomaly_enabled()
        assert mt.is_anomaly_enabled()
    assert not mt.is_anomaly_enabled()

    @A.set_detect_anomaly(True)
    def inside():
        return mt.is_anomaly_enabled()
    assert inside() and not mt.is_anomaly_enabled()
    for ours in (A.set_multithreading_enabled(False), A.enforce_grad_layout_policy(False)):
        with ours:
            pass
        assert ours.clone().mode is False
    with pytest.raises(RuntimeError, match="deprecated"):
        A.variable(1.0)
    with pytest.raises(RuntimeError, match="deprecated"):
        torch.autograd.variable(1.0)
    from minitensor.autograd.variable import Variable
    assert Variable is A.Variable and isinstance(mt.ones(1), Variable)
    assert issubclass(A.NestedIOFunction, A.Function)
    with pytest.warns(DeprecationWarning):
        legacy = A.NestedIOFunction()
    with pytest.raises(RuntimeError):
        legacy(mt.ones(2))


def _f(x, y):
    return (x.sin() * y, (x * x).sum())


@pytest.mark.parametrize("seed", [0, 1])
def test_func_jvp_and_linearize(seed):
    rng = np.random.default_rng(seed)
    x, y, tx, ty = (rng.standard_normal(3) for _ in range(4))
    ours = F.jvp(_f, (mt.tensor(x), mt.tensor(y)), (mt.tensor(tx), mt.tensor(ty)))
    # (the analytic J t, not torch's: torch.func and torch.autograd.functional take seconds to set up on a first call)
    theirs = ((np.sin(x) * y, (x * x).sum()), (np.cos(x) * tx * y + np.sin(x) * ty, 2 * x @ tx))
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-12, atol=1e-14)
        assert not a.requires_grad
    out, jvp_fn = F.linearize(lambda v: v.exp() * 2, mt.tensor(x))
    np.testing.assert_allclose(out.numpy(), 2 * np.exp(x), rtol=1e-12)
    for t in (tx, ty):
        np.testing.assert_allclose(jvp_fn(mt.tensor(t)).numpy(), 2 * np.exp(x) * t, rtol=1e-12)
    aux = F.jvp(lambda v: (v * 3, v.sum()), (mt.tensor(x),), (mt.tensor(tx),), has_aux=True)[2]
    assert aux.item() == pytest.approx(x.sum())
    nested = F.grad(lambda v: F.jvp(lambda u: (u ** 3).sum(), (v,), (mt.tensor(tx),))[1])(mt.tensor(x))
    np.testing.assert_allclose(nested.numpy(), 6 * x * tx, rtol=1e-12)  # d/dx (3 x^2 . t) = 6 x t
    for bad in (lambda: F.jvp(_f, mt.tensor(x), (mt.tensor(tx),)),
                lambda: F.jvp(lambda v: v, (mt.tensor(x),), (mt.tensor(tx[:2]),))):
        with pytest.raises(RuntimeError):
            bad()


def test_func_stack_module_state_and_batch_norm_replacement():
    models = [mt.nn.Linear(2, 3) for _ in range(3)]
    params, buffers = F.stack_module_state(models)
    tmodels = [torch.nn.Linear(2, 3) for _ in range(3)]
    tparams, tbuffers = torch.func.stack_module_state(tmodels)
    assert {k: tuple(v.shape) for k, v in params.items()} == {k: tuple(v.shape) for k, v in tparams.items()}
    assert all(v.is_leaf and v.requires_grad for v in params.values()) and buffers == tbuffers == {}
    np.testing.assert_array_equal(params["weight"][1].detach().numpy(), models[1].weight.detach().numpy())
    with pytest.raises(RuntimeError):
        F.stack_module_state([])
    with pytest.raises(RuntimeError):
        F.stack_module_state([mt.nn.Linear(2, 3), mt.nn.Tanh()])
    net = mt.nn.Sequential(mt.nn.Linear(2, 2), mt.nn.BatchNorm1d(2))
    assert F.replace_all_batch_norm_modules_(net) is net
    bn = net[1]
    assert bn.running_mean is None and bn.running_var is None and bn.num_batches_tracked is None
    assert not bn.track_running_stats
    net.eval()
    x = mt.randn(4, 2)
    np.testing.assert_allclose(net(x).mean(0).detach().numpy(), 0, atol=1e-6)  # batch statistics, even in eval


def test_random_fork_rng_and_thread_safe_generator():
    mt.manual_seed(3)
    expected = mt.rand(3).numpy()
    mt.manual_seed(3)
    with R.fork_rng(devices=[]):
        mt.manual_seed(5)
        mt.rand(4)
        assert mt.initial_seed() == 5
    assert mt.initial_seed() == 3
    np.testing.assert_array_equal(mt.rand(3).numpy(), expected)
    mt.manual_seed(3)
    with pytest.raises(ValueError):
        with R.fork_rng():
            mt.rand(2)
            raise ValueError
    np.testing.assert_array_equal(mt.rand(3).numpy(), expected)
    with R.fork_rng(enabled=False):
        mt.rand(1)
    assert R.thread_safe_generator() is None and torch.random.thread_safe_generator() is None
    mt.manual_seed(0)
